"""Prometheus metrics: every metric moves as it should, and no label carries request data.

The in-process tests run the production server (``build_server``) with a metrics registry the
test reads; the process test starts ``python -m function --metrics-address`` and scrapes its
HTTP endpoint, as Prometheus would.
"""

from __future__ import annotations

import socket
import subprocess
import sys
import threading
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest
from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from fnplatform.api.step_input import PhaseTTL
from prometheus_client import generate_latest
from prometheus_client.parser import text_string_to_metric_families

from function import dispatch
from function.cache import ResponseCache
from function.metrics import Metrics, Workers, parse_address
from function.server import INLINE_MAX_BYTES, MIB, ServerConfig, build_server, pool_size
from tests.support.cases import converge, module_cases
from tests.support.harness import FunctionClient, Rendered, ServerThread, free_port, step_input
from tests.support.harness import request as make_request
from tests.support.table import case
from tests.test_server import ENV, ROOT, wait_serving

CASES = module_cases()
MAX_SEND = 4 * MIB


class MeteredServerThread(ServerThread):
    """The production server recording into ``metrics`` (and its cache, which it reads)."""

    def __init__(self, config: ServerConfig, metrics: Metrics, cache: ResponseCache) -> None:
        super().__init__(config)
        self.metrics = metrics
        self.cache = cache

    async def _start(self) -> None:
        self._server = build_server(self.config, self._executor, self.cache, self.metrics)
        await self._server.start()


class Served:
    """A metered server, a client, and the metrics read back as {(name, labels): value}."""

    def __init__(self, cache_bytes: int = 8 * MIB) -> None:
        config = ServerConfig(address=f"127.0.0.1:{free_port()}", insecure=True)
        self.metrics = Metrics(MAX_SEND, Workers(pool_size(0)))
        self.cache = ResponseCache(cache_bytes, MAX_SEND, settings=config.settings)
        self.thread = MeteredServerThread(config, self.metrics, self.cache).start()
        self.client = FunctionClient(config.address)

    def samples(self) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
        """Every sample of the registry, as a scrape would show it."""
        text = generate_latest(self.metrics.registry).decode()
        return {
            (sample.name, tuple(sorted(sample.labels.items()))): sample.value
            for family in text_string_to_metric_families(text)
            for sample in family.samples
        }

    def value(self, name: str, **labels: str) -> float:
        """One sample's value (0 when the labelled series does not exist yet)."""
        return self.samples().get((name, tuple(sorted(labels.items()))), 0.0)

    def close(self) -> None:
        """Stop the server."""
        self.client.close()
        self.thread.stop()


@pytest.fixture
def served() -> Iterator[Served]:
    """A fresh metered server per test (counters start at zero)."""
    served = Served()
    yield served
    served.close()


def requests_total(served: Served, module: str, kind: str, outcome: str) -> float:
    """``function_platform_requests_total`` for these labels."""
    return served.value(
        "function_platform_requests_total", module=module, kind=kind, outcome=outcome
    )


@pytest.mark.parametrize("case", CASES[:1] + CASES[-1:], ids=[CASES[0].id, CASES[-1].id])
def test_a_composed_request_then_a_cache_hit(served, case):
    kind = case.composite["kind"]
    rendered = served.client.run(case.request())
    assert not rendered.fatal and not rendered.warnings
    assert requests_total(served, case.module, kind, "ok") == 1
    assert served.value("function_platform_compose_seconds_count", module=case.module) == 1
    assert served.value("function_platform_compose_seconds_sum", module=case.module) > 0
    resources = len(rendered.resources)
    assert served.value("function_platform_desired_resources_sum", module=case.module) == resources
    size = rendered.response.ByteSize()
    ratio = served.value("function_platform_response_size_ratio_sum", module=case.module)
    assert ratio == pytest.approx(size / MAX_SEND, rel=1e-6)
    assert served.value("function_platform_response_cache_misses_total") == 1
    assert served.value("function_platform_response_cache_hits_total") == 0
    assert served.value("function_platform_response_cache_entries") == 1
    assert served.value("function_platform_response_cache_bytes") == served.cache.size > size

    served.client.run(case.request(tag="another"))  # same content: answered from the cache
    assert requests_total(served, case.module, kind, "ok") == 2
    assert served.value("function_platform_response_cache_hits_total") == 1
    assert served.value("function_platform_compose_seconds_count", module=case.module) == 1
    assert served.value("function_platform_requests_in_flight") == 0
    assert served.value("function_platform_compose_workers_busy") == 0


def test_a_pass_reused_is_counted(served):
    """A new resourceVersion misses the response cache, but the pass is reused."""
    case = CASES[0].renamed("reuse-counted")  # a composite no other test composed
    for version in ("1", "2"):
        composite = {
            **case.composite,
            "metadata": {**case.composite["metadata"], "resourceVersion": version},
        }
        assert not served.client.run(case.request(composite=composite)).fatal
    assert served.value("function_platform_response_cache_misses_total") == 2
    assert served.value("function_platform_compose_seconds_count", module=case.module) == 2
    assert served.value("function_platform_passes_reused_total", module=case.module) == 1


def test_outcomes_warning_fatal_and_internal_error(served, monkeypatch):
    case = CASES[0]
    kind = case.composite["kind"]
    typo = case.request()
    typo.observed.composite.resource["spec"]["regoin"] = "x"  # pruned, with a warning
    assert served.client.run(typo).warnings
    assert requests_total(served, case.module, kind, "warning") == 1

    bad_module = make_request(case.composite, step_input("clustr"))
    assert served.client.run(bad_module).fatal
    assert requests_total(served, "unknown", kind, "fatal") == 1
    assert served.client.run(bad_module).fatal  # fatal answers are never cached
    assert requests_total(served, "unknown", kind, "fatal") == 2

    def broken(_comp: Any) -> None:
        raise RuntimeError("a bug")

    monkeypatch.setitem(dispatch._composers(), case.module, broken)
    rendered = served.client.run(case.request(tag="bug"))
    assert rendered.fatal == [
        f"internal error in module {case.module}: RuntimeError; see function logs"
    ]
    assert rendered.response.results[0].reason == "InternalError"  # the claim's event says so
    assert requests_total(served, case.module, kind, "error") == 1
    assert served.value("function_platform_response_cache_hits_total") == 0


def test_labels_carry_only_module_and_kind(served):
    case = CASES[0]
    composite = {**case.composite, "kind": "SecretKindFromTheRequest"}
    composite["metadata"] = {**composite["metadata"], "name": "customer-secret-name"}
    served.client.run(make_request(composite, case.step()))
    served.client.run(
        case.request(
            composite={
                **case.composite,
                "metadata": {**case.composite["metadata"], "name": "customer-secret-name"},
            }
        )
    )
    text = generate_latest(served.metrics.registry).decode()
    assert "customer-secret-name" not in text
    assert "SecretKindFromTheRequest" not in text
    assert requests_total(served, case.module, "other", "fatal") == 1
    labels = {key for (_, pairs) in served.samples() for key, _ in pairs}
    assert labels <= {"module", "kind", "outcome", "le"}


def test_evictions_are_counted(served):
    case = CASES[0]
    served.client.run(case.request())
    one = served.cache.size
    served.cache.limit_bytes = one + one // 2  # room for one response of this size
    renamed = {**case.composite, "metadata": {**case.composite["metadata"], "name": "second"}}
    served.client.run(case.request(composite=renamed))
    assert served.value("function_platform_response_cache_evictions_total") == 1
    assert served.value("function_platform_response_cache_entries") == 1
    assert served.value("function_platform_response_cache_limit_bytes") == one + one // 2


def test_in_flight_and_busy_workers_while_composing(served, monkeypatch):
    """A request composed in the executor counts as in flight and as a busy worker until it
    is answered. Converged, so that it is over the size composed on the event loop
    (``function.server.INLINE_MAX_BYTES``)."""
    case = CASES[0]
    _, observed = converge(lambda req: Rendered(dispatch.run(req)), case)
    request = case.request(observed=observed)
    assert request.ByteSize() > INLINE_MAX_BYTES
    started, release = threading.Event(), threading.Event()
    compose = dispatch._composers()[case.module]

    def slow(comp: Any) -> None:
        started.set()
        release.wait(30)
        compose(comp)

    monkeypatch.setitem(dispatch._composers(), case.module, slow)
    assert served.value("function_platform_compose_workers") == pool_size(0)
    call = served.client.v1.RunFunction.future(request, timeout=60)
    assert started.wait(30)
    assert served.value("function_platform_requests_in_flight") == 1
    assert served.value("function_platform_compose_workers_busy") == 1
    release.set()
    assert not [r for r in call.result().results if r.severity == fnv1.SEVERITY_FATAL]
    assert served.value("function_platform_requests_in_flight") == 0
    assert served.value("function_platform_compose_workers_busy") == 0


@pytest.mark.parametrize(
    ("address", "parsed"),
    [
        case(
            "a bare :port listens on every interface, as Go's net.Listen and the "
            "controller-runtime flag do",
            ":8080",
            ("0.0.0.0", 8080),
        ),
        case(
            "host:port keeps the host, so the metrics can be bound to loopback only",
            "127.0.0.1:9090",
            ("127.0.0.1", 9090),
        ),
        case(
            "a bracketed IPv6 host is unbracketed: ::1 is a host, the port is after the "
            "closing bracket",
            "[::1]:8080",
            ("::1", 8080),
        ),
        case(
            "a hostname is kept as written and the smallest port is accepted",
            "localhost:1",
            ("localhost", 1),
        ),
    ],
)
def test_metrics_addresses(address, parsed):
    assert parse_address(address) == parsed


@pytest.mark.parametrize("address", ["8080", "host:", ":99999", "[::1]", "a:b"])
def test_bad_metrics_addresses_are_refused_at_startup(address):
    out = subprocess.run(
        [sys.executable, "-m", "function", "--insecure", "--metrics-address", address],
        cwd=ROOT,
        env=ENV,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert out.returncode == 2
    assert "--metrics-address" in out.stderr and address in out.stderr


def server_command(grpc_address: str, metrics_address: str, *flags: str) -> list[str]:
    """``python -m function`` as a user starts it, serving ``grpc_address`` without TLS and its
    metrics on ``metrics_address`` (empty: none)."""
    return [
        sys.executable,
        "-m",
        "function",
        "--insecure",
        "--address",
        grpc_address,
        "--metrics-address",
        metrics_address,
        *flags,
    ]


def scrape(port: int) -> str:
    """The endpoint's text, as Prometheus scrapes it."""
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as reply:
        return reply.read().decode()


def test_the_server_process_serves_metrics_on_the_flag_address():
    grpc_address, port = f"127.0.0.1:{free_port()}", free_port()
    process = subprocess.Popen(
        server_command(grpc_address, f"127.0.0.1:{port}", "--ttl-waiting", "3s"),
        cwd=ROOT,
        env=ENV,
        text=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    try:
        wait_serving(grpc_address, process)
        client = FunctionClient(grpc_address)
        rendered = client.run(CASES[0].request())
        client.close()
        assert rendered.response.meta.ttl.seconds == 3
        text = scrape(port)
        kind = CASES[0].composite["kind"]
        line = (
            f'function_platform_requests_total{{kind="{kind}",module="{CASES[0].module}",'
            'outcome="ok"} 1.0'
        )
        assert line in text
        values = {
            sample.name: sample.value
            for family in text_string_to_metric_families(text)
            for sample in family.samples
            if not sample.labels
        }
        assert values["function_platform_response_limit_bytes"] == MAX_SEND
        assert values["function_platform_response_cache_misses_total"] == 1
    finally:
        process.terminate()
        process.communicate(timeout=60)


def test_an_empty_metrics_address_serves_no_metrics():
    grpc_address, port = f"127.0.0.1:{free_port()}", free_port()
    process = subprocess.Popen(
        server_command(grpc_address, ""),
        cwd=ROOT,
        env=ENV,
        text=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    try:
        wait_serving(grpc_address, process)
        with pytest.raises(OSError):
            scrape(port)
    finally:
        process.terminate()
        process.communicate(timeout=60)


def test_a_busy_metrics_port_stops_the_server_with_a_message():
    grpc_address = f"127.0.0.1:{free_port()}"
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        out = subprocess.run(
            server_command(grpc_address, f"127.0.0.1:{port}"),
            cwd=ROOT,
            env=ENV,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
    assert out.returncode == 1
    assert f"cannot serve metrics on 127.0.0.1:{port}" in out.stderr


def test_phase_ttl_defaults_are_part_of_the_cache_key():
    a = ServerConfig(ttl=PhaseTTL(10, 300)).settings
    b = ServerConfig(ttl=PhaseTTL(10, 60)).settings
    request = CASES[0].request()
    key_a = ResponseCache(MIB, MAX_SEND, settings=a).key(request)
    key_b = ResponseCache(MIB, MAX_SEND, settings=b).key(request)
    assert key_a != key_b


@pytest.mark.parametrize(
    ("flags", "reused"),
    [
        case(
            "by default the shipped server reuses a pass when only the resourceVersion "
            "changed: the reuse counter goes up",
            (),
            1.0,
        ),
        case(
            "--no-reuse-passes turns reuse off: the pass is composed again and the reuse "
            "counter stays at zero",
            ("--no-reuse-passes",),
            0.0,
        ),
    ],
    ids=["default", "no-reuse-passes"],
)
def test_the_server_process_reuses_passes_unless_told_not_to(flags, reused):
    """``python -m function`` as shipped: a new resourceVersion misses the response cache and
    reuses the pass; ``--no-reuse-passes`` composes it again. The answers are the same."""
    grpc_address, port = f"127.0.0.1:{free_port()}", free_port()
    process = subprocess.Popen(
        server_command(grpc_address, f"127.0.0.1:{port}", *flags),
        cwd=ROOT,
        env=ENV,
        text=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
    )
    try:
        wait_serving(grpc_address, process)
        client = FunctionClient(grpc_address)
        case = CASES[0]
        answers = []
        for version in ("1", "2"):
            composite = {
                **case.composite,
                "metadata": {**case.composite["metadata"], "resourceVersion": version},
            }
            answers.append(client.run(case.request(composite=composite)).response)
        client.close()
        assert answers[0] == answers[1] and not answers[0].results
        values = {
            (sample.name, sample.labels.get("module")): sample.value
            for family in text_string_to_metric_families(scrape(port))
            for sample in family.samples
        }
        assert values[("function_platform_response_cache_misses_total", None)] == 2
        assert values.get(("function_platform_passes_reused_total", case.module), 0.0) == reused
    finally:
        process.terminate()
        process.communicate(timeout=60)
