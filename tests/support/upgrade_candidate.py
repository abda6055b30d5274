"""A candidate function that answers as this checkout's does, then changes its answer: drops a
composed resource, sets a field, adds a resource or a fatal result. A stand-in for a release
that does one harmful thing, so the upgrade preview's tests can show it each way an upgrade
harms a composite without shipping such a release.

It serves over gRPC without TLS on a free local port (the render engine's Development runtime
dials it like any function); the answer itself is ``function.dispatch.run_bytes``, the server's
own request path.
"""

from __future__ import annotations

import socket
from collections.abc import Iterator, Mapping
from concurrent import futures
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import grpc
from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from google.protobuf import json_format

from function import dispatch

SERVICES = (
    "apiextensions.fn.proto.v1.FunctionRunnerService",
    "apiextensions.fn.proto.v1beta1.FunctionRunnerService",
)


@dataclass(frozen=True)
class Mutation:
    """What the candidate changes in every answer that composes the resources named."""

    drop: tuple[str, ...] = ()
    #: composition-resource-name -> {dotted path: value}
    fields: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    #: composition-resource-name -> body
    add: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)
    fatal: str | None = None


def _set(body: dict[str, Any], path: str, value: Any) -> None:
    *parents, last = path.split(".")
    for part in parents:
        body = body.setdefault(part, {})
    body[last] = value


def mutate(raw: bytes, mutation: Mutation) -> bytes:
    response = fnv1.RunFunctionResponse.FromString(raw)
    resources = response.desired.resources
    for name in mutation.drop:
        if name in resources:
            del resources[name]
    for name, values in mutation.fields.items():
        if name not in resources:
            continue
        body = json_format.MessageToDict(resources[name].resource)
        for path, value in values.items():
            _set(body, path, value)
        resources[name].resource.Clear()
        resources[name].resource.update(body)
    for name, body in mutation.add.items():
        resources[name].resource.update(dict(body))
    if mutation.fatal is not None:
        response.results.append(fnv1.Result(severity=fnv1.SEVERITY_FATAL, message=mutation.fatal))
    return response.SerializeToString(deterministic=True)


@contextmanager
def serve(mutation: Mutation) -> Iterator[str]:
    """The candidate served on a free local port; its address."""

    def run_function(request: bytes, _context: grpc.ServicerContext) -> bytes:
        return mutate(dispatch.run_bytes(request), mutation)

    server = grpc.server(futures.ThreadPoolExecutor(max_workers=4))
    handler = grpc.unary_unary_rpc_method_handler(run_function)
    for service in SERVICES:
        server.add_generic_rpc_handlers(
            (grpc.method_handlers_generic_handler(service, {"RunFunction": handler}),)
        )
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = int(sock.getsockname()[1])
    server.add_insecure_port(f"127.0.0.1:{port}")
    server.start()
    try:
        yield f"127.0.0.1:{port}"
    finally:
        server.stop(grace=None)
