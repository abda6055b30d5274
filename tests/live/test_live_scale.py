"""Load (issue 34 items 1 and 2): a mix of composites across the modules applied at once, with
the function scaled from 1 to 3 replicas while they converge. Every composite becomes Ready,
none is ever Responsive=False, and every replica added under load answers calls within the
server's maximum connection age plus its grace (the server closes Crossplane's connection, and
grpc-go resolves the headless Service again: docs/architecture.md, "Replicas and connection
age"). The figures go to timings.json (`scale_*`) and the bench (`make bench-scale`).

LIVE_SCALE_N sets the number of composites (25 in `make test-live`). LIVE_SCALE_REPLICAS=R
(`make bench-scale`) runs the load at a fixed R replicas instead, to measure it;
LIVE_SCALE_VARIANTS=function-platform,floor runs it once per program in the same session, the
second time with the replicas running the do-nothing floor (bench/floor_live.py)."""

from __future__ import annotations

import os
import time
from collections import Counter

import pytest

from function.server import ServerConfig
from tests.live import load
from tests.live.kube import is_true
from tests.live.layers import Live
from tests.live.metrics import replica_calls

pytestmark = pytest.mark.live

N = int(os.environ.get("LIVE_SCALE_N", "25"))
FIXED_REPLICAS = int(os.environ.get("LIVE_SCALE_REPLICAS", "0"))
#: What the replicas run, one load after the other in this session (LIVE_SCALE_VARIANTS,
#: `make bench-scale`: "function-platform,floor"; the kubelet stand-in's FUNCTION_PROGRAM)
VARIANTS = os.environ.get("LIVE_SCALE_VARIANTS", "function-platform").split(",")
VARIANT_PREFIX = {"function-platform": "s", "floor": "z"}
READY_WITHIN_S = float(os.environ.get("LIVE_SCALE_READY_WITHIN_S", "900"))
#: The server's defaults (the install set does not change them): a replica added under load
#: gets a call within the age (+10% jitter) plus the grace (issue 34 item 2).
AGE = ServerConfig().max_connection_age
GRACE = ServerConfig().max_connection_age_grace
ANSWERS_WITHIN_S = AGE * 1.1 + GRACE


@pytest.mark.parametrize("platform", ["v2-namespaced"], indirect=True)
def test_a_mixed_load_becomes_ready_and_replicas_added_under_it_get_calls(platform: Live) -> None:
    live = platform
    assert live.kubelet is not None
    load.prepare(live)
    failures = []
    for variant in VARIANTS:
        if variant != live.kubelet.program:
            live.kubelet.run_as(variant)
        failures += _one_load(live, variant)
    assert failures == [], "\n".join(failures)


def _one_load(live: Live, variant: str) -> list[str]:
    """Apply N composites at once (fixed replicas, or 1 scaled to 3 under load), wait until
    all are Ready (at most READY_WITHIN_S), record the figures, delete them; what failed.

    A load that does not settle in time is still measured (``converged`` false, how many are
    Ready) and deleted, so that the next variant runs on the same plane and a bench that does
    not converge still has both columns side by side; the test fails at the end."""
    load.set_replicas(live, FIXED_REPLICAS or 1)
    first, *_ = load.wait_replicas(live, FIXED_REPLICAS or 1)
    docs = load.mix(N, prefix=VARIANT_PREFIX.get(variant, "s"))
    for doc in docs:
        load.ensure_namespace(live, doc)
    before = load.snapshot(live)
    t = time.monotonic()
    for doc in docs:
        live.kube.apply(doc)
    if not FIXED_REPLICAS:
        _scale_out_under_load(live, first)
    failures = []
    try:
        load.wait_ready(live, docs, READY_WITHIN_S, pending_on_pools=True)
    except AssertionError as e:
        failures.append(f"{variant}: {e}")
    ready_s = time.monotonic() - t
    measured = load.measure(live, before, N, ready_s)
    measured.converged = not failures
    measured.ready = load.ready_count(live, docs)
    measured.pending_on_pools = sum(
        1 for d in docs if load.settled(xr := load.get(live, d)) and not is_true(xr, "Ready")
    )
    measured.mix = dict(sorted(Counter(d["kind"] for d in docs).items()))
    # only openstack tenants may settle without Ready (their pools cannot be Ready here)
    tenants = sum(d["kind"] == "XOpenStackCluster" for d in docs)
    live.record(f"scale_{variant}_{N}_ready_s", ready_s)
    live.record(f"scale_{variant}_{N}_calls", measured.calls)
    (live.cp.dir / f"scale-{variant}-{N}.json").write_text(measured.json())
    names = {d["metadata"]["name"] for d in docs}
    assert live.responsive is not None
    if not failures and measured.pending_on_pools > tenants:
        failures.append(f"{variant}: more not Ready than openstack tenants: {measured}")
    if live.responsive.of(names):
        failures.append(f"{variant}: Responsive=False seen: {live.responsive.of(names)}")
    if not all(r["calls"] > 0 for r in measured.per_replica.values()):
        failures.append(f"{variant}: a replica answered no call: {measured.per_replica}")
    try:
        live.record(
            f"scale_{variant}_{N}_delete_s",
            load.delete_all(live, docs, timeout=max(600.0, 3.0 * N)),
        )
    except TimeoutError as e:  # the next variant still runs, beside what is left
        failures.append(f"{variant}: {e}")
    return failures


def _scale_out_under_load(live: Live, first: str) -> None:
    """Scale 1 -> 3 once the load reaches the function; every added replica must answer a
    call within ANSWERS_WITHIN_S of listening."""
    # under load (the first calls answered), scale out to 3
    live.wait("the load reaches the function", lambda: replica_calls(first) > N, 120)
    load.set_replicas(live, 3)
    added = load.wait_replicas(live, 3)[1:]
    serving = time.monotonic()
    answered: dict[str, float] = {}

    def all_answer() -> bool:
        for address in added:
            if address not in answered and replica_calls(address) > 0:
                answered[address] = time.monotonic() - serving
        return len(answered) == len(added)

    try:
        live.wait("every added replica answers a call", all_answer, ANSWERS_WITHIN_S)
    except TimeoutError:
        pytest.fail(
            f"replicas added under load answered no call within {ANSWERS_WITHIN_S:.0f} "
            f"s (age {AGE} s + grace {GRACE} s): answered {answered} of {added}"
        )
    live.record("scale_added_replicas_first_call_s", max(answered.values()))
