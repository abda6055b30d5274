"""The gRPC server: v1 and v1beta1 FunctionRunnerService, reflection, mTLS, graceful stop.

Both protocol versions are wire-compatible, so one bytes-in/bytes-out handler serves both:
no round-trip conversion. Composition is CPU work; it runs in an executor so the event loop
keeps accepting and answering requests while a large composite is being composed. With
``processes > 0`` a process pool composes requests in parallel and a large request cannot
stall small ones.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import gc
import os
import signal
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import grpc
from crossplane.function import logging
from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from crossplane.function.proto.v1beta1 import run_function_pb2 as fnv1beta1
from fnplatform.api.step_input import PhaseTTL
from grpc_reflection.v1alpha import reflection

from function.answer import Answer
from function.cache import ResponseCache, budget
from function.dispatch import compose_bytes, compose_parsed, parse_request
from function.metrics import Metrics, Workers, serve_metrics
from function.requestlog import logged

MIB = 1024 * 1024
SERVICES = (
    fnv1.DESCRIPTOR.services_by_name["FunctionRunnerService"].full_name,
    fnv1beta1.DESCRIPTOR.services_by_name["FunctionRunnerService"].full_name,
)


@dataclass(frozen=True)
class ServerConfig:
    """How to serve."""

    address: str = "0.0.0.0:9443"
    insecure: bool = False
    tls_certs_dir: str | None = None
    max_recv_message_size: int = 4 * MIB
    max_send_message_size: int = 4 * MIB
    grace_period: float = 20.0
    # Crossplane keeps one connection per function and learns the replicas only when it
    # (re)connects: a bounded age makes it reconnect, re-resolve the headless Service and
    # spread over replicas added since (docs/architecture.md, "Replicas and connection age")
    max_connection_age: float = 30.0  # seconds; 0: connections live forever
    max_connection_age_grace: float = 120.0  # seconds calls in flight at the age get to finish
    processes: int = 0  # 0: compose in threads of this process
    switch_interval_ms: float = 1.0  # GIL hand-over interval while composing in threads
    response_cache_mib: int = 64  # 0: compose every request
    reuse_passes: bool = (
        True  # reuse a pass whose observed reads are unchanged (fnplatform.engine.reuse)
    )
    log_requests: bool = False  # one debug line per request (function/requestlog.py)
    ttl: PhaseTTL = field(default_factory=PhaseTTL)  # step inputs without a ttl get these
    metrics_address: str = ""  # "": no metrics endpoint (the CLI's default is :8080)

    @property
    def settings(self) -> str:
        """The settings that change an answer besides the request (the response cache's key)."""
        return f"ttl {self.ttl.waiting}/{self.ttl.ready}"


def _identity(data: bytes) -> bytes:
    return data


#: Requests up to this size are composed on the event loop itself, in thread mode: a first
#: pass (nothing observed yet) of a few KiB composes in about a millisecond, and handing it to
#: a composing thread and back cost a quarter of its CPU time and more of its latency
#: (bench/results.md, "From scratch vs the floor"). The largest composition that fits (a cluster
#: with some 60 node pools spelt out compactly, nothing observed) takes a few milliseconds,
#: which is as long as the loop may wait for it; everything larger goes to the executor.
INLINE_MAX_BYTES = 6 * 1024
#: Requests up to this size whose pass is reused (fnplatform.engine.reuse) are answered on the event
#: loop too: a reused pass of a composite this size (some 50 node pools, every resource
#: observed) costs a few milliseconds, and the hand-over to a thread cost a reused
#: 40-resource pass a sixth of its CPU time (bench/results.md, "Fourth round"). The question
#: costs opening the call, which the executor then goes on from: a parse, the step input and
#: the composite decoded and checked (the costly parts remembered by content), the digest and
#: the pass's observed reads up to the first changed one (``function.dispatch.parse_request``).
INLINE_REUSE_MAX_BYTES = 160 * 1024


class Handler:
    """Answers from the response cache, else composes in an executor, off the event loop.

    The cache is looked up on the event loop: a hit costs a parse, a deterministic
    serialization and a digest of the request, about what the SDK's own server spends
    reading it, and no hand-over to a composing thread. A request of at most ``inline_max``
    bytes is composed on the loop too (:data:`INLINE_MAX_BYTES`; 0 when worker processes
    compose, which the server process has not loaded the composers for), and so is one of at
    most :data:`INLINE_REUSE_MAX_BYTES` whose pass is reused (thread mode only: worker
    processes remember their own passes). Metrics, when on,
    are recorded here, in the server process, whatever the executor.
    """

    def __init__(
        self,
        executor: concurrent.futures.Executor,
        max_send: int,
        cache: ResponseCache | None = None,
        *,
        ttl: PhaseTTL = PhaseTTL(),  # noqa: B008 - frozen, shared safely
        metrics: Metrics | None = None,
        workers: Workers | None = None,
        inline_max: int = 0,
    ) -> None:
        self.executor = executor
        self.inline_max = inline_max
        self.max_send = max_send
        self.cache = cache
        self.ttl = ttl
        self.metrics = metrics
        self.workers = workers or Workers(0)

    async def run_function(self, request: bytes, context: grpc.aio.ServicerContext) -> bytes:
        """RunFunction for either protocol version."""
        metrics = self.metrics
        if metrics is None:
            return await self._answer(request)
        metrics.in_flight.inc()
        try:
            return await self._answer(request)
        finally:
            metrics.in_flight.dec()

    async def _answer(self, request: bytes) -> bytes:
        lookup = self.cache.lookup(request) if self.cache is not None else None
        if lookup is not None and lookup.response is not None:
            if self.metrics is not None and lookup.record is not None:  # stored by _answer
                self.metrics.answered(lookup.record)
            return lookup.response
        if len(request) <= self.inline_max:
            answer = compose_bytes(request, self.max_send, self.ttl)
        elif self.inline_max and len(request) <= INLINE_REUSE_MAX_BYTES:
            parsed = parse_request(request)  # thread mode: the executor goes on from it
            if parsed.reused:
                answer = compose_parsed(parsed, self.max_send, self.ttl)
            else:
                answer = await self._in_executor(compose_parsed, parsed)
        else:
            answer = await self._in_executor(compose_bytes, request)
        if lookup is not None and self.cache is not None:
            self.cache.store(lookup, answer.response, answer.record)
        if self.metrics is not None:
            self.metrics.composed(answer.record, answer.seconds)
        return answer.response

    async def _in_executor(
        self, compose: Callable[[Any, int, PhaseTTL], Answer], request: Any
    ) -> Answer:
        """``compose(request, max_send, ttl)`` in the executor, counted as a busy worker."""
        loop = asyncio.get_running_loop()
        self.workers.busy += 1
        try:
            return await loop.run_in_executor(
                self.executor, compose, request, self.max_send, self.ttl
            )
        finally:
            self.workers.busy -= 1


def response_cache(config: ServerConfig) -> ResponseCache | None:
    """The cache ``config`` asks for, or None when ``response_cache_mib`` is 0."""
    responses, _ = budget(config.response_cache_mib * MIB)
    if responses <= 0:
        return None
    return ResponseCache(responses, config.max_send_message_size, settings=config.settings)


def size_memos(response_cache_mib: int, reuse_passes: bool = True) -> None:
    """Bound this process's composing memos by its share of ``--response-cache-mib``
    (``reuse_passes`` off: no pass is reused, :mod:`fnplatform.engine.reuse`)."""
    from fnplatform.engine.reuse import PASSES
    from fnplatform.request.structs import DECODED, ENCODED

    _, each = budget(response_cache_mib * MIB)
    ENCODED.configure(each)
    DECODED.configure(each)
    PASSES.configure(each if reuse_passes else 0)


def build_server(
    config: ServerConfig,
    executor: concurrent.futures.Executor,
    cache: ResponseCache | None = None,
    metrics: Metrics | None = None,
) -> grpc.aio.Server:
    """A configured, not yet started server (``cache`` defaults to the one config asks for).

    ``metrics``: instruments to record into (serving them is :func:`serve`'s business).
    """
    options = [
        ("grpc.max_receive_message_length", config.max_recv_message_size),
        ("grpc.max_send_message_length", config.max_send_message_size),
        # grpc sets SO_REUSEPORT by default: a second server on a busy port would bind too and
        # take a share of the calls. Off, it fails to start instead.
        ("grpc.so_reuseport", 0),
        *connection_age_options(config),
    ]
    server = grpc.aio.server(options=options)
    if cache is None:
        cache = response_cache(config)
    workers = metrics.workers if metrics is not None else Workers(pool_size(config.processes))
    handler = Handler(
        executor,
        config.max_send_message_size,
        cache,
        ttl=config.ttl,
        metrics=metrics,
        workers=workers,
        inline_max=INLINE_MAX_BYTES if config.processes <= 0 else 0,
    )
    if metrics is not None:
        metrics.cache = cache
    behaviour = logged(handler.run_function) if config.log_requests else handler.run_function
    method = grpc.unary_unary_rpc_method_handler(
        behaviour, request_deserializer=_identity, response_serializer=_identity
    )
    for service in SERVICES:
        server.add_generic_rpc_handlers(
            (grpc.method_handlers_generic_handler(service, {"RunFunction": method}),)
        )
    reflection.enable_server_reflection((*SERVICES, reflection.SERVICE_NAME), server)
    if config.insecure:
        _bind(server.add_insecure_port, config.address)
    else:
        if not config.tls_certs_dir:
            msg = (
                "no TLS certificates: pass --tls-certs-dir (or TLS_SERVER_CERTS_DIR) or --insecure"
            )
            raise StartupError(msg)
        creds = _credentials(config.tls_certs_dir)
        _bind(lambda address: server.add_secure_port(address, creds), config.address)
    return server


def connection_age_options(config: ServerConfig) -> list[tuple[str, int]]:
    """gRPC core's server-side connection management (gRPC proposal A9): at
    ``max_connection_age`` (jittered by +/-10% per connection) the server sends GOAWAY, the
    calls in flight get ``max_connection_age_grace`` to finish, then the connection is closed.
    The client sees its subchannel go idle, asks its resolver again and reconnects: Crossplane
    (grpc-go, ``dns:///`` + ``round_robin``) then connects to every address the Service has now.
    Age 0 leaves connections unbounded (gRPC's default)."""
    if config.max_connection_age <= 0:
        return []
    return [
        ("grpc.max_connection_age_ms", round(config.max_connection_age * 1000)),
        ("grpc.max_connection_age_grace_ms", round(config.max_connection_age_grace * 1000)),
    ]


class StartupError(Exception):
    """The server cannot start; the message says why."""


def _credentials(directory: str) -> grpc.ServerCredentials:
    from pathlib import Path

    try:
        files = {
            name: (Path(directory) / name).read_bytes() for name in ("tls.crt", "tls.key", "ca.crt")
        }
    except OSError as err:
        msg = f"cannot read TLS certificates from {directory}: {err.strerror}: {err.filename}"
        raise StartupError(msg) from None
    return grpc.ssl_server_credentials(
        [(files["tls.key"], files["tls.crt"])],
        root_certificates=files["ca.crt"],
        require_client_auth=True,
    )


def _bind(add_port: object, address: str) -> None:
    try:
        port = add_port(address)  # type: ignore[operator]
    except RuntimeError:
        port = 0
    if port == 0:
        msg = (
            f"cannot listen on {address}: the port is already in use (another function server, "
            "`make serve`?) or the address does not exist on this machine; choose another "
            "with --address"
        )
        raise StartupError(msg)


def pool_size(processes: int) -> int:
    """Compositions the executor runs at once: ``processes``, else Python's thread default."""
    return processes if processes > 0 else min(32, (os.cpu_count() or 1) + 4)


def make_executor(
    processes: int, response_cache_mib: int = 64, reuse_passes: bool = True
) -> concurrent.futures.Executor:
    """Threads by default; a process pool when ``processes`` > 0."""
    if processes > 0:
        import multiprocessing

        return concurrent.futures.ProcessPoolExecutor(
            processes,
            mp_context=multiprocessing.get_context("spawn"),
            initializer=_warm,
            initargs=(response_cache_mib, reuse_passes),
        )
    return concurrent.futures.ThreadPoolExecutor(pool_size(0), thread_name_prefix="compose")


def load_composers() -> None:
    """Import the composers and load the clouds (every builder registers on its capability),
    so the first request is not the one that pays for the imports, or finds a broken one."""
    from function.dispatch import _composers

    _composers()


def _warm(response_cache_mib: int = 64, reuse_passes: bool = True) -> None:
    """Import the composers in a new worker before its first request; size its memos."""
    size_memos(response_cache_mib, reuse_passes)
    load_composers()
    settle_heap()


#: Allocations (minus frees) between young-generation collections; Python's default is 700.
GC_YOUNG_THRESHOLD = 5000


def settle_heap() -> None:
    """Keep what start-up loaded out of the garbage collector's way, once it is loaded.

    Modules, pydantic schemas, the capability registry and the composers' tables live as
    long as the process, yet a full collection walks all of them again: at 200 node pools,
    where a pass allocates enough to trigger one every ten passes, that was a tenth of the
    composing time (bench/results.md, "From scratch vs the floor"). ``gc.freeze`` moves
    everything alive now into the permanent generation, which collections skip. A pass
    builds thousands of dicts that all live until its response is written; a young
    generation of 5000 instead of 700 collects them less often before they die anyway.
    Nothing is leaked: cycles are still collected, only fewer times over.
    """
    gc.collect()
    gc.freeze()
    gc.set_threshold(GC_YOUNG_THRESHOLD, *gc.get_threshold()[1:])


M_ARENA_MAX = -8  # glibc mallopt parameter


def limit_malloc_arenas(count: int = 2) -> None:
    """Let glibc keep at most ``count`` malloc arenas, unless MALLOC_ARENA_MAX says otherwise.

    glibc gives threads their own arenas (up to 8 per core) and keeps what a large request
    freed in each: with the response cache full, RSS was 132 MiB for a 64 MiB cache, and 123
    MiB with two arenas (bench/results.md). Composing holds the GIL, so threads gain nothing
    from more arenas. Without glibc (musl), nothing to do.
    """
    import ctypes
    import os

    if "MALLOC_ARENA_MAX" in os.environ:
        return
    try:
        ctypes.CDLL("libc.so.6").mallopt(M_ARENA_MAX, count)
    except (OSError, AttributeError):
        return


async def serve(config: ServerConfig) -> None:
    """Serve until SIGTERM or SIGINT; in-flight requests finish within the grace period."""
    log = logging.get_logger()
    limit_malloc_arenas()
    sys.setswitchinterval(config.switch_interval_ms / 1000)
    size_memos(config.response_cache_mib, config.reuse_passes)
    if config.processes <= 0:
        load_composers()  # worker processes load them as they start (_warm)
        settle_heap()
    executor = make_executor(config.processes, config.response_cache_mib, config.reuse_passes)
    metrics = (
        Metrics(config.max_send_message_size, Workers(pool_size(config.processes)))
        if config.metrics_address
        else None
    )
    server = build_server(config, executor, metrics=metrics)
    metrics_server = None
    if metrics is not None:
        try:
            metrics_server, _ = serve_metrics(metrics, config.metrics_address)
        except OSError as err:
            msg = (
                f"cannot serve metrics on {config.metrics_address}: {err.strerror}; choose "
                "another address with --metrics-address (for example "
                "--metrics-address=localhost:9090), or turn metrics off with --metrics-address="
            )
            raise StartupError(msg) from None
    await server.start()
    log.info(
        "serving",
        address=config.address,
        insecure=config.insecure,
        processes=config.processes,
        response_cache_mib=config.response_cache_mib,
        reuse_passes=config.reuse_passes,
        metrics_address=config.metrics_address,
        max_connection_age=config.max_connection_age,
        max_connection_age_grace=config.max_connection_age_grace,
        ttl_waiting=config.ttl.waiting,
        ttl_ready=config.ttl.ready,
    )
    stopping = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stopping.set)
    await stopping.wait()
    log.info("stopping", grace_period=config.grace_period)
    stopping_at = time.monotonic()
    await server.stop(grace=config.grace_period)
    # how long the calls in flight took to finish (at most the grace: then they are cancelled)
    log.info("stopped", drained_s=round(time.monotonic() - stopping_at, 3))
    executor.shutdown(wait=False, cancel_futures=True)
    if metrics_server is not None:
        metrics_server.shutdown()
