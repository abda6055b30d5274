"""Prometheus metrics, served on their own port (``--metrics-address``, default ``:8080``).

Every label value is either a module this release composes or a composite kind one of them
composes (anything else is ``unknown``/``other``: bounded whatever a request carries); no
name, namespace, field or message from a request ever becomes a label. What the server counts
as it goes (requests, durations, sizes) uses the official client's instruments; what the
response cache and the executor already keep (hits, bytes, busy workers) is read at scrape
time by a collector, so the hot path pays nothing for it.

A cache hit costs one labelled counter increment (about a microsecond) on top of the hit.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from wsgiref.simple_server import WSGIServer

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, start_http_server
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, Metric
from prometheus_client.registry import Collector

from function.answer import CallRecord
from function.cache import ResponseCache

PREFIX = "function_platform"
COMPOSE_SECONDS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5)
RESOURCE_COUNTS = (0, 1, 2, 5, 10, 20, 50, 100, 200, 500)
LIMIT_RATIOS = (0.01, 0.05, 0.1, 0.25, 0.5, 0.8, 1.0)


@dataclass
class Workers:
    """How many compositions the executor can run at once, and how many it is running.

    ``busy`` above ``size`` means requests queue for a worker: the saturation signal for
    ``--processes``. Updated on the event loop only (no lock needed).
    """

    size: int
    busy: int = 0


@dataclass
class Metrics:
    """The function's instruments, in a registry of their own (tests make one each)."""

    max_send: int
    workers: Workers
    cache: ResponseCache | None = None
    registry: CollectorRegistry = field(default_factory=CollectorRegistry)

    def __post_init__(self) -> None:
        """Create the instruments in ``registry``."""
        registry = self.registry
        self.requests = Counter(
            f"{PREFIX}_requests",
            "RunFunction calls answered, by module, composite kind and "
            "outcome (ok, warning, fatal: bad input; error: an internal error).",
            ["module", "kind", "outcome"],
            registry=registry,
        )
        self.compose_seconds = Histogram(
            f"{PREFIX}_compose_seconds",
            "Time spent composing a request (cache hits excluded).",
            ["module"],
            buckets=COMPOSE_SECONDS,
            registry=registry,
        )
        self.desired_resources = Histogram(
            f"{PREFIX}_desired_resources",
            "Desired composed resources per composed response.",
            ["module"],
            buckets=RESOURCE_COUNTS,
            registry=registry,
        )
        self.response_ratio = Histogram(
            f"{PREFIX}_response_size_ratio",
            "Composed response size as a fraction of "
            "--max-send-message-size (over 0.8 carries a warning; over 1 is refused).",
            ["module"],
            buckets=LIMIT_RATIOS,
            registry=registry,
        )
        self.reused = Counter(
            f"{PREFIX}_passes_reused",
            "Composed answers whose pass was reused, not composed "
            "again: every observed field it read was unchanged (fnplatform.engine.reuse).",
            ["module"],
            registry=registry,
        )
        self.in_flight = Gauge(
            f"{PREFIX}_requests_in_flight",
            "RunFunction calls being answered now.",
            registry=registry,
        )
        registry.register(_StateCollector(self))
        # labelled children by label values: .labels() costs a lock and a few µs per call
        self._children: dict[tuple[str, str, str], Counter] = {}
        self._per_module: dict[str, tuple[Histogram, Histogram, Histogram]] = {}

    def answered(self, record: CallRecord) -> None:
        """Count one answered call (composed or from the cache)."""
        labels = (record.module, record.kind, record.outcome)
        child = self._children.get(labels)
        if child is None:
            child = self._children.setdefault(labels, self.requests.labels(*labels))
        child.inc()

    def composed(self, record: CallRecord, seconds: float) -> None:
        """Record a composed (not cached) answer: its duration, resources and size."""
        self.answered(record)
        children = self._per_module.get(record.module)
        if children is None:
            children = self._per_module.setdefault(
                record.module,
                (
                    self.compose_seconds.labels(record.module),
                    self.desired_resources.labels(record.module),
                    self.response_ratio.labels(record.module),
                ),
            )
        duration, resources, ratio = children
        if record.reused:
            self.reused.labels(record.module).inc()
        duration.observe(seconds)
        resources.observe(record.resources)
        ratio.observe(record.size / self.max_send)


class _StateCollector(Collector):
    """Reads what the cache and the executor keep anyway, at scrape time."""

    def __init__(self, metrics: Metrics) -> None:
        self.metrics = metrics

    def collect(self) -> Iterator[Metric]:
        """The cache's counters and sizes, the send limit and the workers' load."""
        metrics = self.metrics
        yield _gauge("response_limit_bytes", "--max-send-message-size in bytes.", metrics.max_send)
        yield _gauge(
            "compose_workers",
            "Compositions the executor runs at once (--processes, or the thread pool's size).",
            metrics.workers.size,
        )
        yield _gauge(
            "compose_workers_busy",
            "Compositions submitted and not finished; above "
            "compose_workers, requests wait for a worker.",
            metrics.workers.busy,
        )
        cache = metrics.cache
        if cache is None:
            return
        yield _counter(
            "response_cache_hits", "Requests answered from the response cache.", cache.hits
        )
        yield _counter(
            "response_cache_misses", "Requests the response cache did not hold.", cache.misses
        )
        yield _counter(
            "response_cache_evictions",
            "Responses dropped to stay within --response-cache-mib.",
            cache.evictions,
        )
        yield _gauge("response_cache_bytes", "Bytes charged to the response cache.", cache.size)
        yield _gauge(
            "response_cache_limit_bytes", "The response cache's bound in bytes.", cache.limit_bytes
        )
        yield _gauge("response_cache_entries", "Responses held.", len(cache))


def _gauge(name: str, documentation: str, value: float) -> GaugeMetricFamily:
    return GaugeMetricFamily(f"{PREFIX}_{name}", documentation, value=value)


def _counter(name: str, documentation: str, value: float) -> CounterMetricFamily:
    return CounterMetricFamily(f"{PREFIX}_{name}", documentation, value=value)


_ADDRESS = re.compile(r"^(?:\[(?P<v6>[0-9a-fA-F:.]+)\]|(?P<host>[^:\[\]]*)):(?P<port>[0-9]{1,5})$")


def parse_address(address: str) -> tuple[str, int]:
    """``:8080`` -> (``0.0.0.0``, 8080); ``[::]:9090`` -> (``::``, 9090); ValueError if bad."""
    match = _ADDRESS.match(address)
    port = int(match["port"]) if match else -1
    if match is None or not 0 <= port <= 65535:
        msg = f"{address!r} is not host:port, :port or [ipv6]:port"
        raise ValueError(msg)
    return match["v6"] or match["host"] or "0.0.0.0", port


def serve_metrics(metrics: Metrics, address: str) -> tuple[WSGIServer, threading.Thread]:
    """Serve ``metrics`` at ``address`` from a daemon thread; shut down with ``.shutdown()``."""
    host, port = parse_address(address)
    return start_http_server(port, addr=host, registry=metrics.registry)
