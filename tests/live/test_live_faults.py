"""Faults under load (issue 34 item 3): with a mix of composites Ready (and more arriving),
the function's replicas die, Crossplane restarts, a selected EnvironmentConfig goes away or
goes bad, a cloud refuses for a while. After each, nothing is lost (every resource composed
before keeps its uid, none is deleted) and every composite is Ready again; where the user must
act, the composite says why (a Warning event naming the field or the cloud's error).

The faults share one load (module fixture), in the namespaced form: each test adds its own
composites to it mid-fault, so the next test's "nothing lost" covers them too. The shared pool
fault runs on the openstack GitOps tree's claims (the v1 form it uses), with pools of its own
(tests/live/openstack.py)."""

from __future__ import annotations

import copy
import time
from collections.abc import Iterator
from typing import Any

import pytest

from tests.live import crossplane as xp
from tests.live import load, openstack
from tests.live.controlplane import REPO
from tests.live.kube import condition, docs_of, is_true
from tests.live.layers import Live

pytestmark = pytest.mark.live

#: How long every composite may take to be Ready again after a fault.
RECOVERS_WITHIN_S = 420.0
BASE = 3  # one of each small composite of the mix (load.MIX): actor, environment, CC


class Load:
    """The composites applied so far and what they composed when last all Ready."""

    def __init__(self, live: Live) -> None:
        self.live = live
        self.docs: list[dict[str, Any]] = []
        self.uids: dict[str, str | None] = {}

    def add(self, docs: list[dict[str, Any]]) -> None:
        """Apply more composites."""
        for doc in docs:
            load.ensure_namespace(self.live, doc)
            self.live.kube.apply(doc)
        self.docs += docs

    def recovered(self, what: str) -> float:
        """Every composite Ready again and nothing composed before lost; then remember what is
        composed now. The seconds it took."""
        took = load.wait_ready(self.live, self.docs, RECOVERS_WITHIN_S, pending_on_pools=True)
        lost = load.lost(self.uids, self.live, self.docs)
        assert lost == [], f"{what}: lost {lost}"
        self.uids = load.composed_uids(self.live, self.docs)
        return took


@pytest.fixture(scope="module")
def base(platform: Live) -> Iterator[Load]:
    """BASE composites Ready; deleted (with everything the tests added) at the end."""
    load.prepare(platform)
    loaded = Load(platform)
    loaded.add(load.mix(BASE, prefix="f"))
    platform.record("faults_base_ready_s", loaded.recovered("the base load"))
    yield loaded
    platform.record("faults_delete_s", load.delete_all(platform, loaded.docs))


def _function_replicas(live: Live) -> list[str]:
    names = load.replica_processes(live)
    assert names, "the kubelet stand-in runs the function's replicas"
    return names


@pytest.mark.parametrize("platform", ["v2-namespaced"], indirect=True)
def test_a_replica_killed_mid_load(platform: Live, base: Load) -> None:
    base.add(load.mix(3, prefix="k"))
    victim = _function_replicas(platform)[-1]
    time.sleep(5)  # the new composites' first calls are under way
    platform.procs.kill(victim)  # SIGKILL: no grace, calls in flight on it fail
    platform.record("fault_replica_killed_recovered_s", base.recovered("a replica SIGKILLed"))
    assert platform.procs.alive(victim), "the kubelet stand-in restarted the killed replica"


@pytest.mark.parametrize("platform", ["v2-namespaced"], indirect=True)
def test_every_replica_down_for_60s_then_back(platform: Live, base: Load) -> None:
    assert platform.kubelet is not None
    platform.kubelet.hold(60)
    t = time.monotonic()
    base.add(load.mix(2, prefix="d"))  # arriving while no replica answers
    while time.monotonic() - t < 60:
        assert load.lost(base.uids, platform, base.docs) == [], "lost during the outage"
        time.sleep(10)
    platform.record(
        "fault_all_replicas_down_recovered_s", base.recovered("every replica down for 60 s")
    )


@pytest.mark.parametrize("platform", ["v2-namespaced"], indirect=True)
def test_crossplane_restarted_mid_load(platform: Live, base: Load) -> None:
    base.add(load.mix(2, prefix="r"))
    time.sleep(5)
    platform.record("fault_crossplane_restart_s", xp.restart(platform.cp))
    platform.record(
        "fault_crossplane_restarted_recovered_s", base.recovered("Crossplane restarted")
    )


def _warned(live: Live, docs: list[dict[str, Any]], text: str) -> list[str]:
    """Warning events on any of the composites whose message holds ``text``."""
    names = {d["metadata"]["name"] for d in docs}
    return sorted(
        {
            e.message
            for e in live.kube.events()
            if e.type == "Warning" and e.involvedObject.name in names and text in (e.message or "")
        }
    )


def _actors(base: Load) -> list[dict[str, Any]]:
    return [d for d in base.docs if d["kind"] == "XAsyncActor"]


@pytest.mark.parametrize("platform", ["v2-namespaced"], indirect=True)
def test_a_selected_environment_config_deleted_then_restored_and_made_invalid_then_fixed(
    platform: Live,
    base: Load,
) -> None:
    kube = platform.kube
    (settings,) = docs_of(REPO / "examples/async-actor/platform/environment.yaml")
    actors = _actors(base)
    assert actors, "the load has actors, which select asya-settings"
    name = settings["metadata"]["name"]
    kube.delete(settings["apiVersion"], settings["kind"], name)
    says = f"no EnvironmentConfig named '{name}' exists"
    platform.wait(f"the actors say {says!r}", lambda: bool(_warned(platform, actors, says)), 120)
    assert load.lost(base.uids, platform, base.docs) == [], "lost without its EnvironmentConfig"
    kube.apply(settings)
    platform.record(
        "fault_environment_restored_recovered_s", base.recovered("the EnvironmentConfig restored")
    )

    invalid = copy.deepcopy(settings)
    invalid["data"]["aws"] = "eu-west-1"  # a map of settings expected
    kube.apply(invalid)
    says = "environment.aws: must be an object"
    platform.wait(f"the actors say {says!r}", lambda: bool(_warned(platform, actors, says)), 120)
    time.sleep(10)
    assert load.lost(base.uids, platform, base.docs) == [], "lost with an invalid environment"
    kube.apply(settings)
    platform.record(
        "fault_environment_fixed_recovered_s", base.recovered("the EnvironmentConfig fixed")
    )
    # the fatal result's Synced=False goes once the fixed settings are composed
    try:
        platform.wait(
            "the actors Synced again",
            lambda: all(is_true(load.get(platform, d), "Synced") for d in actors),
            120,
        )
    except TimeoutError:
        pytest.fail(f"not Synced: {[condition(load.get(platform, d), 'Synced') for d in actors]}")


@pytest.mark.parametrize("platform", ["v2-namespaced"], indirect=True)
def test_a_cloud_refusing_for_a_while_is_reported_then_recovers(
    platform: Live,
    base: Load,
) -> None:
    assert platform.cloud is not None
    error = (
        "AccessDenied: User: arn:aws:sts::123456789012:assumed-role/provider-aws is not "
        "authorized to perform: sqs:SetQueueAttributes (stand-in outage)"
    )
    actors = _actors(base)
    platform.cloud.fail("Queue", error, 60)
    t = time.monotonic()
    platform.wait(
        "the actors report the cloud's error",
        lambda: bool(_warned(platform, actors, "sqs:SetQueueAttributes")),
        90,
    )
    platform.record("fault_cloud_error_reported_s", time.monotonic() - t)
    (warning, *_) = _warned(platform, actors, "sqs:SetQueueAttributes")
    assert "is not synced: ReconcileError: AccessDenied" in warning, warning
    assert load.lost(base.uids, platform, base.docs) == []
    time.sleep(max(0.0, 60 - (time.monotonic() - t)))
    platform.record("fault_cloud_recovered_s", base.recovered("the cloud refusing for 60 s"))

    def queues_synced() -> bool:
        return all(
            is_true(
                platform.kube.get(
                    r["apiVersion"], r["kind"], r["name"], d["metadata"]["namespace"]
                ),
                "Synced",
            )
            for d in actors
            for r in load.refs(load.get(platform, d))
            if r["kind"] == "Queue"
        )

    platform.wait("every Queue Synced again", queues_synced, 60)


#: Enough AWS node pools that the composed answer passes 4 MiB (1000 pools: 3.05 MiB,
#: bench/results.md), the most Crossplane v2.4 accepts; the request stays small.
OVERSIZED_POOLS = 2000


@pytest.mark.parametrize("platform", ["v2-namespaced"], indirect=True)
def test_an_oversized_composite_gets_a_clear_result_and_the_others_are_unaffected(
    platform: Live,
    base: Load,
) -> None:
    (big,) = docs_of(REPO / "examples/cluster/namespaced/xr-aws.yaml")
    big["metadata"]["name"] = "oversized"
    big["spec"]["parameters"]["domain"] = f"oversized.{big['spec']['parameters']['domain']}"
    big["spec"]["pools"] = {
        f"pool{i}": {"autoscaling": {"minNodeCount": 1, "maxNodeCount": 2}}
        for i in range(OVERSIZED_POOLS)
    }
    load.ensure_namespace(platform, big)
    platform.kube.apply(big)
    try:
        says = "exceeds the send limit of 4194304 bytes; split the composite"
        t = time.monotonic()
        platform.wait(
            "the oversized composite says why", lambda: bool(_warned(platform, [big], says)), 300
        )
        platform.record("fault_oversized_reported_s", time.monotonic() - t)
        xr = load.get(platform, big)
        assert not is_true(xr, "Ready")
        assert len(load.refs(xr)) < 50, "none of its pools was composed"
        # the others: still Ready, nothing of theirs lost
        platform.record("fault_oversized_others_s", base.recovered("beside an oversized one"))
    finally:
        load.delete_all(platform, [big])


@pytest.mark.parametrize("platform", ["v1-claims"], indirect=True)
def test_openstack_a_shared_pool_going_away_from_under_a_tenant(platform: Live) -> None:
    """A shared storage pool a Ready tenant runs on, taken from under it.

    Deleting the pool's claim does not take it: the tenant's ClusterUsage makes Crossplane
    refuse to delete the pool's composite, which stays Ready (docs/openstack.md "Deletion").
    What an operator does hit is the pool's cluster failing: Gardener reports its Shoot's
    reconcile Failed (here for 60 s). Then the pool is not Ready, the tenant is Degraded with
    PoolsReady naming the pool, and nothing of the tenant's is removed (every composed uid
    kept); once the Shoot reconciles again the tenant is Ready. Then the tenant goes, and the
    pool's deletion, asked for long before, proceeds."""
    assert platform.garden is not None
    kube = platform.kube
    openstack.install(platform)
    pools = [openstack.pool(p) for p in ("eu-de-1-control-plane", "hv-pool-a", "st-pool-a")]
    docs = openstack.tenant("customer-b", "customer-b-staging")
    claim = docs[-1]
    kube.apply_all(pools)
    kube.apply_all(docs)
    st_pool = pools[-1]
    try:
        load.wait_ready(platform, [*pools, claim], 2 * RECOVERS_WITHIN_S)
        tenant_xr = openstack.composite(platform, claim)
        pool_xr = openstack.composite(platform, st_pool)
        assert tenant_xr is not None and pool_xr is not None
        uids = load.composed_uids(platform, [tenant_xr])
        assert uids and None not in uids.values(), uids

        # 1. the pool's claim deleted: the Usage keeps its composite, Ready, the tenant Ready
        kube.delete(st_pool["apiVersion"], st_pool["kind"], "st-pool-a", "infrastructure")
        time.sleep(20)
        xr = load.get(platform, pool_xr)
        assert xr is not None and not xr.metadata.deletionTimestamp, "the Usage held it"
        assert is_true(xr, "Ready")
        assert openstack.status(platform, claim).get("phase") == "Ready"

        # 2. the pool's Shoot failing in the garden
        shoot = str(
            openstack.status(platform, st_pool).get("clusterName")
            or (xr.to_dict().get("status") or {}).get("clusterName")
        )
        platform.garden.fail(
            "garden-c5c3",
            shoot,
            "infrastructure reconcile failed: "
            "machine pool ironcore-storage-rack-1 has no free machines "
            "(stand-in outage)",
            60,
        )
        t = time.monotonic()

        def degraded() -> bool:
            pools_ready = openstack.conditions(platform, claim).get("PoolsReady") or {}
            return (
                openstack.status(platform, claim).get("phase") == "Degraded"
                and pools_ready.get("status") == "False"
                and "st-pool-a" in pools_ready.get("message", "")
            )

        platform.wait("the tenant Degraded naming st-pool-a", degraded, 90)
        platform.record("fault_openstack_pool_degraded_s", time.monotonic() - t)
        assert load.lost(uids, platform, [tenant_xr]) == [], "lost while the pool failed"
        storage = openstack.status(platform, claim)["consumedPools"]["storage"]
        assert [(s["name"], s["status"]) for s in storage] == [("st-pool-a", "NotReady")]
        time.sleep(max(0.0, 60 - (time.monotonic() - t)))
        platform.wait(
            "the tenant Ready again",
            lambda: openstack.status(platform, claim).get("phase") == "Ready",
            RECOVERS_WITHIN_S,
        )
        platform.record("fault_openstack_pool_recovered_s", time.monotonic() - t)
        assert load.lost(uids, platform, [tenant_xr]) == [], "lost once the pool recovered"
    finally:
        load.delete_all(platform, [claim])
        for doc in pools:
            kube.delete(
                doc["apiVersion"],
                doc["kind"],
                doc["metadata"]["name"],
                doc["metadata"]["namespace"],
            )
        time.sleep(10)
        platform.wait(
            "the pools and their Shoots gone",
            lambda: (
                openstack.shoots_gone_once_confirmed(platform)
                and all(load.get(platform, d) is None for d in pools)
            ),
            300,
        )
