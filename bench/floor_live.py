"""The live floor: a do-nothing function that composes one Object per composite, served as
Crossplane serves a function (mTLS with the certificate it issued), for `make bench-scale`.

The kubelet stand-in runs it instead of function-platform when LIVE_FUNCTION=floor
(tests/live/standins.py), with the container's arguments: it reads ``--address``,
``--tls-certs-dir`` and ``--metrics-address`` and ignores the rest. Each composite gets one
provider-kubernetes ``Object`` (a ConfigMap named after it, in its namespace), so Crossplane,
provider-kubernetes and the API server do the least work a composite can cost: what the same
load costs minus what function-platform composes. Its metrics: ``function_platform_requests``
(calls answered) and ``function_platform_compose_seconds`` (time in the handler), the names the
measurements read from function-platform.
"""

from __future__ import annotations

import argparse
import time

import grpc
from crossplane.function import response, runtime
from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from crossplane.function.proto.v1 import run_function_pb2_grpc as grpcv1
from prometheus_client import Counter, Histogram, start_http_server

from function.metrics import COMPOSE_SECONDS, parse_address

CALLS = Counter("function_platform_requests", "RunFunction calls answered (floor).")
SECONDS = Histogram(
    "function_platform_compose_seconds", "Time in the handler (floor).", buckets=COMPOSE_SECONDS
)


class OneObject(grpcv1.FunctionRunnerServiceServicer):
    """Desires one Object per composite: a ConfigMap named after it."""

    async def RunFunction(  # noqa: N802 - the gRPC method's name
        self,
        req: fnv1.RunFunctionRequest,
        _: grpc.aio.ServicerContext,
    ) -> fnv1.RunFunctionResponse:
        t = time.perf_counter()
        rsp = response.to(req)
        meta = dict(req.observed.composite.resource["metadata"].items())
        name, namespace = meta["name"], meta.get("namespace", "default")
        rsp.desired.resources["floor"].resource.update(
            {
                "apiVersion": "kubernetes.m.crossplane.io/v1alpha1",
                "kind": "Object",
                "spec": {
                    "forProvider": {
                        "manifest": {
                            "apiVersion": "v1",
                            "kind": "ConfigMap",
                            "metadata": {"name": f"floor-{name}", "namespace": namespace},
                            "data": {"composite": name},
                        }
                    },
                    "providerConfigRef": {"kind": "ClusterProviderConfig", "name": "default"},
                },
            }
        )
        # Crossplane v2.4 counts a composed resource Ready only when the function says so
        # (composite/composition_functions.go:623, READY_UNSPECIFIED is not ready): the least
        # a function can do is what function-auto-ready does, the observed Ready condition
        if "floor" in req.observed.resources:
            status = req.observed.resources["floor"].resource.fields.get("status")
            found = status.struct_value.fields.get("conditions") if status else None
            for value in found.list_value.values if found else []:
                cond = value.struct_value.fields
                if (
                    "type" in cond
                    and cond["type"].string_value == "Ready"
                    and "status" in cond
                    and cond["status"].string_value == "True"
                ):
                    rsp.desired.resources["floor"].ready = fnv1.Ready.READY_TRUE
        CALLS.inc()
        SECONDS.observe(time.perf_counter() - t)
        return rsp


def main() -> None:
    """Serve until killed."""
    parser = argparse.ArgumentParser()
    parser.add_argument("--address", default="0.0.0.0:9443")
    parser.add_argument("--tls-certs-dir")
    parser.add_argument("--metrics-address", default="")
    args, _ = parser.parse_known_args()
    if args.metrics_address:
        host, port = parse_address(args.metrics_address)
        start_http_server(port, host)
    creds = runtime.load_credentials(args.tls_certs_dir) if args.tls_certs_dir else None
    options = [
        ("grpc.max_receive_message_length", 64 * 1024 * 1024),
        ("grpc.max_send_message_length", 64 * 1024 * 1024),
    ]
    runtime.serve(OneObject(), args.address, creds=creds, insecure=creds is None, options=options)


if __name__ == "__main__":
    main()
