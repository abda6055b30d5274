"""Test harness: a real function server on a free port, and requests built from plain dicts.

Every behaviour test goes through gRPC, exactly as Crossplane calls the function:
:func:`request` builds a ``RunFunctionRequest`` from the composite, the step input, observed
resources, fetched EnvironmentConfigs (or other required resources) and context;
:class:`FunctionClient` sends it over the v1 or v1beta1 protocol; :class:`Rendered` reads the
response back as dicts.
"""

from __future__ import annotations

import asyncio
import socket
import threading
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import grpc
from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from crossplane.function.proto.v1 import run_function_pb2_grpc as grpcv1
from crossplane.function.proto.v1beta1 import run_function_pb2 as fnv1beta1
from crossplane.function.proto.v1beta1 import run_function_pb2_grpc as grpcv1beta1
from fnplatform.request.structs import struct_to_dict
from google.protobuf import json_format, struct_pb2
from providersim import observed_ready

from function.server import ServerConfig, build_server, make_executor

#: Tests build requests and observed state together: the simulation's helper, importable here.
__all__ = [
    "FunctionClient",
    "Rendered",
    "ServerThread",
    "free_port",
    "observed_ready",
    "request",
    "start_server",
    "step_input",
]

INPUT_API = "platform.fn.crossplane.io/v1beta1"


def free_port() -> int:
    """A TCP port nobody listens on right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class ServerThread:
    """The production server (``function.server``) on its own event loop in a thread."""

    def __init__(self, config: ServerConfig) -> None:
        self.config = config
        self.loop = asyncio.new_event_loop()
        self._started = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._server: grpc.aio.Server | None = None
        self._executor = make_executor(config.processes)

    def _run(self) -> None:
        asyncio.set_event_loop(self.loop)
        self.loop.run_until_complete(self._start())
        self._started.set()
        self.loop.run_forever()

    async def _start(self) -> None:
        self._server = build_server(self.config, self._executor)
        await self._server.start()

    def start(self) -> ServerThread:
        """Start serving; returns once the port accepts connections."""
        self._thread.start()
        self._started.wait(10)
        return self

    def stop(self) -> None:
        """Stop serving and join the thread."""
        if self._server is not None:
            asyncio.run_coroutine_threadsafe(self._server.stop(None), self.loop).result(10)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(10)
        self._executor.shutdown(wait=False, cancel_futures=True)


def start_server(**overrides: Any) -> tuple[ServerThread, str]:
    """An insecure server on a free local port, and its address."""
    address = f"127.0.0.1:{free_port()}"
    config = ServerConfig(address=address, insecure=True, **overrides)
    return ServerThread(config).start(), address


class FunctionClient:
    """Calls RunFunction over v1 (default) or v1beta1."""

    def __init__(self, address: str, credentials: grpc.ChannelCredentials | None = None) -> None:
        options = [("grpc.max_receive_message_length", 64 * 1024 * 1024)]
        if credentials is None:
            self.channel = grpc.insecure_channel(address, options=options)
        else:
            self.channel = grpc.secure_channel(address, credentials, options=options)
        self.v1 = grpcv1.FunctionRunnerServiceStub(self.channel)
        self.v1beta1 = grpcv1beta1.FunctionRunnerServiceStub(self.channel)

    def run(self, req: fnv1.RunFunctionRequest, *, protocol: str = "v1") -> Rendered:
        """Send ``req``; the response parsed as v1 either way."""
        if protocol == "v1beta1":
            beta = fnv1beta1.RunFunctionRequest.FromString(req.SerializeToString())
            raw = self.v1beta1.RunFunction(beta, timeout=60).SerializeToString()
            return Rendered(fnv1.RunFunctionResponse.FromString(raw))
        return Rendered(self.v1.RunFunction(req, timeout=60))

    def close(self) -> None:
        """Close the channel."""
        self.channel.close()


def _struct(value: Mapping[str, Any]) -> struct_pb2.Struct:
    struct = struct_pb2.Struct()
    struct.update(dict(value))
    return struct


def step_input(module: str, **fields: Any) -> dict[str, Any]:
    """A step input for ``module``."""
    return {"apiVersion": INPUT_API, "kind": "Input", "module": module, **fields}


def request(
    composite: Mapping[str, Any],
    input: Mapping[str, Any],
    *,
    observed: Mapping[str, Mapping[str, Any]] | None = None,
    observed_connection: Mapping[str, Mapping[str, bytes]] | None = None,
    required: Mapping[str, Iterable[Mapping[str, Any]]] | None = None,
    context: Mapping[str, Any] | None = None,
    desired: Mapping[str, Mapping[str, Any]] | None = None,
    tag: str = "",
) -> fnv1.RunFunctionRequest:
    """A RunFunctionRequest from plain dicts.

    ``required`` maps a requirement key (``environment-0``...) to the resources Crossplane
    fetched for it; leave a key out to mean "not fetched yet".
    """
    req = fnv1.RunFunctionRequest(input=_struct(input))
    req.meta.tag = tag
    req.observed.composite.resource.CopyFrom(_struct(composite))
    for name, body in (observed or {}).items():
        req.observed.resources[name].resource.CopyFrom(_struct(body))
    for name, details in (observed_connection or {}).items():
        for key, value in details.items():
            req.observed.resources[name].connection_details[key] = value
    for name, body in (desired or {}).items():
        req.desired.resources[name].resource.CopyFrom(_struct(body))
    for key, items in (required or {}).items():
        target = req.required_resources[key]
        target.SetInParent()
        for item in items:
            target.items.add().resource.CopyFrom(_struct(item))
    if context:
        req.context.CopyFrom(_struct(context))
    return req


@dataclass
class Rendered:
    """A RunFunctionResponse read back as plain data."""

    response: fnv1.RunFunctionResponse

    @property
    def resources(self) -> dict[str, dict[str, Any]]:
        """Desired composed resources by composition name."""
        return {n: struct_to_dict(r.resource) for n, r in self.response.desired.resources.items()}

    def resource(self, name: str) -> dict[str, Any]:
        """One desired resource; fails the test listing what exists when it is missing."""
        found = self.resources
        assert name in found, f"{name} not desired; desired: {sorted(found)}; {self.messages}"
        return found[name]

    def ready(self, name: str) -> bool:
        """Whether the function marked ``name`` ready."""
        return self.response.desired.resources[name].ready == fnv1.READY_TRUE

    @property
    def kinds(self) -> dict[str, str]:
        """Composition name to ``Kind``."""
        return {name: str(body.get("kind")) for name, body in self.resources.items()}

    @property
    def composite(self) -> dict[str, Any]:
        """The desired composite (status the function wrote)."""
        return struct_to_dict(self.response.desired.composite.resource)

    @property
    def status(self) -> dict[str, Any]:
        """The desired composite's status."""
        return dict(self.composite.get("status") or {})

    @property
    def results(self) -> list[fnv1.Result]:
        """All results."""
        return list(self.response.results)

    @property
    def fatal(self) -> list[str]:
        """Messages of fatal results."""
        return [r.message for r in self.response.results if r.severity == fnv1.SEVERITY_FATAL]

    @property
    def warnings(self) -> list[str]:
        """Messages of warning results."""
        return [r.message for r in self.response.results if r.severity == fnv1.SEVERITY_WARNING]

    @property
    def messages(self) -> list[str]:
        """Every result message (for assertion output)."""
        return [r.message for r in self.response.results]

    def condition(self, type_: str) -> fnv1.Condition | None:
        """The custom condition of ``type_``, if set."""
        for cond in self.response.conditions:
            if cond.type == type_:
                return cond
        return None

    @property
    def requirements(self) -> dict[str, dict[str, Any]]:
        """Required resources the function declared, as dicts."""
        return {
            key: json_format.MessageToDict(sel)
            for key, sel in self.response.requirements.resources.items()
        }

    @property
    def context(self) -> dict[str, Any]:
        """The response context."""
        return struct_to_dict(self.response.context)
