"""Metrics of a running live plane: what the function's replicas and Crossplane core count
(README "Metrics"; core v2.4's Prometheus endpoint), read by the tests and the load."""

from __future__ import annotations

import urllib.request
from typing import Any

from prometheus_client.parser import text_string_to_metric_families

from tests.live import crossplane as xp
from tests.live.layers import Live
from tests.live.standins import METRICS_PORT


def replica_samples(address: str, name: str) -> list[Any]:
    """The samples named ``name`` one function replica serves on its metrics port (README
    "Metrics"); none when it does not answer (down, restarting)."""
    try:
        with urllib.request.urlopen(f"http://{address}:{METRICS_PORT}/metrics", timeout=5) as rsp:
            text = rsp.read().decode()
    except OSError:
        return []
    return [
        sample
        for family in text_string_to_metric_families(text)
        for sample in family.samples
        if sample.name == name
    ]


def replica_calls(address: str) -> float:
    """RunFunction calls one replica has answered since it started."""
    return sum(s.value for s in replica_samples(address, "function_platform_requests_total"))


def function_calls(live: Live) -> float:
    """RunFunction calls the function's replicas have answered so far (their own metrics)."""
    if live.kubelet is None:
        return 0.0
    return sum(replica_calls(a) for a in live.kubelet.addresses())


#: Where `crossplane core start` serves its metrics here.
CROSSPLANE_METRICS = f"http://127.0.0.1:{xp.METRICS_PORT}/metrics"


def crossplane_counters(name: str) -> dict[tuple[tuple[str, str], ...], float]:
    """One counter family of Crossplane core's metrics, by its sorted labels: e.g.
    ``circuit_breaker_events_total`` by ``controller`` and ``result`` (core v2.4
    internal/circuit/circuit_metrics.go)."""
    with urllib.request.urlopen(CROSSPLANE_METRICS, timeout=5) as rsp:
        text = rsp.read().decode()
    return {
        tuple(sorted(sample.labels.items())): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
        if sample.name == name
    }


def counter_delta(
    after: dict[tuple[tuple[str, str], ...], float],
    before: dict[tuple[tuple[str, str], ...], float],
) -> dict[tuple[tuple[str, str], ...], float]:
    """What each series of a counter family grew by (series new since ``before`` count whole)."""
    return {k: v - before.get(k, 0.0) for k, v in after.items() if v - before.get(k, 0.0) > 0}
