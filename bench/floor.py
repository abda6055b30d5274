"""The floor: a do-nothing function on the SDK's own server (``crossplane.function.runtime``).

It answers every RunFunction with ``response.to(request)``: what any Python function pays for
gRPC, protobuf and the SDK before composing anything. ``bench/run.py`` compares against it.
"""

from __future__ import annotations

import sys

from crossplane.function import response, runtime
from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from crossplane.function.proto.v1 import run_function_pb2_grpc as grpcv1


class NothingRunner(grpcv1.FunctionRunnerService):
    """Returns the request's desired state unchanged."""

    async def RunFunction(self, req: fnv1.RunFunctionRequest, _) -> fnv1.RunFunctionResponse:  # noqa: N802
        return response.to(req)


def main() -> None:
    """``python bench/floor.py <address>``."""
    options = [("grpc.max_receive_message_length", 64 * 1024 * 1024),
               ("grpc.max_send_message_length", 64 * 1024 * 1024)]
    runtime.serve(NothingRunner(), sys.argv[1], creds=None, insecure=True, options=options)


if __name__ == "__main__":
    main()
