"""The floor: a do-nothing function on the SDK's own server (``crossplane.function.runtime``).

``python bench/floor.py <address> [responses]``: with a responses file (a pickled dict from a
request's ``meta.tag`` to serialized response bytes, written by ``bench/run.py``) it answers
each request with the response function-platform gives to it, parsed once at start-up: what any
Python function pays for gRPC, protobuf and the SDK to read that request and send that answer,
composing nothing. Without one, or for an unknown tag, it answers ``response.to(request)``.
"""

from __future__ import annotations

import pickle
import sys
from pathlib import Path

from crossplane.function import response, runtime
from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from crossplane.function.proto.v1 import run_function_pb2_grpc as grpcv1


class NothingRunner(grpcv1.FunctionRunnerService):
    """Returns a prepared response, or the request's desired state unchanged."""

    def __init__(self, prepared: dict[str, fnv1.RunFunctionResponse]) -> None:
        self.prepared = prepared

    async def RunFunction(self, req: fnv1.RunFunctionRequest, _) -> fnv1.RunFunctionResponse:  # noqa: N802
        found = self.prepared.get(req.meta.tag)
        return found if found is not None else response.to(req)


def main() -> None:
    """``python bench/floor.py <address> [responses]``."""
    prepared: dict[str, fnv1.RunFunctionResponse] = {}
    if len(sys.argv) > 2:
        raw = pickle.loads(Path(sys.argv[2]).read_bytes())
        prepared = {tag: fnv1.RunFunctionResponse.FromString(data) for tag, data in raw.items()}
    options = [
        ("grpc.max_receive_message_length", 64 * 1024 * 1024),
        ("grpc.max_send_message_length", 64 * 1024 * 1024),
    ]
    runtime.serve(NothingRunner(prepared), sys.argv[1], creds=None, insecure=True, options=options)


if __name__ == "__main__":
    main()
