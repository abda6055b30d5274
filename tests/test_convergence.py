"""Every module case converges from nothing, never drops what it composed, and deletes cleanly.

Crossplane is played by :func:`tests.support.cases.converge_passes`: each pass's desired
resources come back observed and Ready in the next pass, until nothing new appears. Then:

* the number of passes is the one pinned in :data:`PASSES` (a longer dependency chain is a
  slower first install on a real cloud: changing it must be a decision);
* no pass drops a resource an earlier pass desired (a dropped resource is deleted);
* the last pass is fully composed (no holds left) and every resource is ready;
* deleting the composite, with only the emitted ClusterUsages ordering it, lets every resource
  go (no cycle), and no resource is deleted after the ProviderConfig it uses or after whatever
  writes that ProviderConfig's kubeconfig Secret (its deletion could never reach its API).

Generic over :func:`tests.support.cases.module_cases`: a module adds its case there and its
pinned pass count here.
"""

from __future__ import annotations

import dataclasses
import itertools

import pytest
from crossplane.function.proto.v1 import run_function_pb2 as fnv1

from tests.support.cases import (
    ModuleCase,
    baseline_unavailable,
    cluster_import_case,
    contact_center_case,
    contact_center_composite,
    converge_passes,
    family_provider,
    module_cases,
)
from tests.support.deletion import credential_violations, deletion_rounds, usage_edges

#: Every module case, and clusters adopting existing infrastructure (pools opted in).
CASES = module_cases() + [
    cluster_import_case(cloud, mode)
    for cloud in ("aws", "gcp", "azure")
    for mode in ("observe", "manage")
]

#: Passes from nothing to a stable desired set, per case. Each pass is one reconcile that
#: waits for what the previous pass created to become Ready.
PASSES = {
    "cluster-aws": 7,
    "cluster-gcp": 6,
    # Private AKS: the NAT gateway, its IP and the control-plane identity; then the
    # associations and the identity's subnet grant; the cluster only once those are Ready
    # (AKS checks them at creation), one pass later than with load balancer egress.
    "cluster-azure": 8,
    # The namespace's dead-letter queue (SQS refuses a redrive to a missing queue); the
    # actor's queue; the Deployment and ScaledObject once it is Ready with its URL.
    "async-actor": 4,
    # Adopted network, subnets and cluster; then the node pools' helpers; the pools; done.
    "cluster-aws-import-observe": 4,
    "cluster-aws-import-manage": 4,
    "cluster-gcp-import-observe": 4,
    "cluster-gcp-import-manage": 4,
    "cluster-azure-import-observe": 4,
    "cluster-azure-import-manage": 4,
    # network, key, identity; then bucket, ingress, grants; replication and failover DNS last.
    "contact-center-aws": 5,
    "contact-center-gcp": 7,
    "contact-center-azure": 7,
    # namespace, network pieces, bucket; database; connection details; the Job creating the
    # app's own database user (issue 22 item 19); backend and CDN.
    "environment-aws": 5,
    "environment-gcp": 6,  # the CDN chain is longer than the user Job's step
    "environment-azure": 6,
    # Shoot; then its ProviderConfig, CronJob and (once Ready) the first refresh; then done.
    "openstack-hypervisor-pool": 3,
    # namespace, Ceph; then the ControlPlane (waits for the namespace) and the pools' Usages.
    "openstack-cluster": 3,
    # Shoot; then its access and ProviderConfig; then (through that ProviderConfig) the read
    # of its CephCluster's encryption; done.
    "openstack-encrypted-storage-pool": 4,
    # as openstack-cluster: requiring encryption adds a check, not a resource.
    "openstack-cluster-encrypted": 3,
}


@pytest.fixture(scope="module")
def histories(client) -> dict[str, list]:
    return {case.id: converge_passes(client.run, case) for case in CASES}


def _composed(rendered) -> fnv1.Condition | None:
    return rendered.condition("Composed")


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_converges_in_the_pinned_number_of_passes(histories, case: ModuleCase):
    history = histories[case.id]
    if reason := baseline_unavailable(history[0]):
        pytest.skip(reason)
    assert case.id in PASSES, f"pin the pass count of {case.id} in PASSES"
    for number, rendered in enumerate(history, 1):
        assert not rendered.fatal, f"pass {number}: {rendered.fatal}"
    last = history[-1]
    composed = _composed(last)
    assert composed is not None and composed.status == fnv1.STATUS_CONDITION_TRUE, (
        f"still waiting after {len(history)} passes: {composed.message if composed else None}"
    )
    assert len(history) == PASSES[case.id], [sorted(r.resources) for r in history[-2:]]


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_no_pass_drops_what_an_earlier_pass_composed(histories, case: ModuleCase):
    history = histories[case.id]
    if reason := baseline_unavailable(history[0]):
        pytest.skip(reason)
    for number, (before, after) in enumerate(itertools.pairwise(history), 2):
        dropped = sorted(set(before.resources) - set(after.resources))
        assert not dropped, f"pass {number} dropped {dropped}"


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_everything_is_ready_once_converged(histories, case: ModuleCase):
    last = histories[case.id][-1]
    if reason := baseline_unavailable(last):
        pytest.skip(reason)
    not_ready = sorted(name for name in last.resources if not last.ready(name))
    assert not not_ready, f"observed Ready but desired not ready: {not_ready}"


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_deletion_order_lets_every_resource_go_with_its_credentials(histories, case):
    last = histories[case.id][-1]
    if reason := baseline_unavailable(last):
        pytest.skip(reason)
    resources = last.resources
    rounds = deletion_rounds(resources)  # fails on a cycle
    assert credential_violations(resources, rounds) == []
    # Every Usage protects something: its ``of`` is really deleted after its ``by``.
    for of, by in usage_edges(resources):
        assert rounds[of] > rounds[by], f"{of} deleted with or before its user {by}"


# -- what issue 35 added, from nothing to Ready --------------------------------------------


def test_an_actor_queue_keeps_the_settings_attributes_from_nothing_to_ready(histories):
    """The case's settings give a 60 s visibility timeout: every pass that composes the queue
    says so (none falls back to the guide's 30 s), and the converged actor is Ready."""
    history = histories["async-actor"]
    queues = [r.resource("queue")["spec"]["forProvider"] for r in history if "queue" in r.resources]
    assert queues and {q["visibilityTimeoutSeconds"] for q in queues} == {60}
    assert {(q["messageRetentionSeconds"], q["receiveWaitTimeSeconds"]) for q in queues} == {
        (345600, 20)
    }
    assert all(history[-1].ready(name) for name in history[-1].resources)


@pytest.mark.parametrize("cloud", ["aws", "gcp", "azure"])
def test_a_latency_routed_endpoint_converges_from_nothing_to_ready(client, cloud):
    """Latency routing (issue 35 item 4) in as many passes as failover, never dropping
    anything, everything Ready, and the records routed by latency (GCP: by geolocation)."""
    composite = contact_center_composite(cloud, failover=True)
    composite["spec"]["failoverPolicy"]["routing"] = "latency"
    history = converge_passes(client.run, contact_center_case(cloud).with_composite(composite))
    assert len(history) == PASSES[f"contact-center-{cloud}"]
    for before, after in itertools.pairwise(history):
        assert not set(before.resources) - set(after.resources)
    last = history[-1]
    assert not last.fatal and all(last.ready(name) for name in last.resources)
    composed = _composed(last)
    assert composed is not None and composed.status == fnv1.STATUS_CONDITION_TRUE
    assert last.status["endpoints"]["routing"] == "latency"
    assert any(
        "latencyRoutingPolicy" in b["spec"]["forProvider"]
        or b["spec"]["forProvider"].get("trafficRoutingMethod") == "Performance"
        or "geo" in (b["spec"]["forProvider"].get("routingPolicy") or {})
        for b in last.resources.values()
        if "forProvider" in b["spec"]
    )


def test_gcp_recordings_converge_into_a_dual_region_from_nothing_to_ready(histories):
    """Recording replication on GCP (issue 35 item 5): the seed's us-east1 endpoint failing
    over to us-west1 converges in the pinned passes with its recordings bucket the US
    dual-region from the first pass that composes it (a location is fixed at creation: no pass
    may create it single-region), its key ring in Cloud KMS's us from the first pass, and
    everything Ready with the copy in status."""
    history = histories["contact-center-gcp"]
    assert len(history) == PASSES["contact-center-gcp"]
    rings = [
        r.resource("recordings-key-ring")["spec"]["forProvider"]["location"]
        for r in history
        if "recordings-key-ring" in r.resources
    ]
    assert rings and set(rings) == {"us"}
    buckets = [
        r.resource(name)["spec"]["forProvider"]
        for r in history
        for name in ("recordings", "recordings-logs")
        if name in r.resources
    ]
    assert buckets and {
        (b["location"], tuple(b["customPlacementConfig"]["dataLocations"])) for b in buckets
    } == {("US", ("US-EAST1", "US-WEST1"))}
    last = history[-1]
    assert not last.fatal and all(last.ready(name) for name in last.resources)
    assert last.status["replicaRegion"] == "us-west1"


@pytest.mark.parametrize("cloud", ["aws", "gcp", "azure"])
def test_an_endpoint_waiting_for_its_provider_converges_once_it_is_healthy(client, cloud):
    """Provider health first (issue 35 item 6): while the family provider is unhealthy a new
    endpoint composes nothing, and passes change nothing; once Healthy it converges from
    nothing to Ready in the pinned passes."""
    case = contact_center_case(cloud)
    sick = dataclasses.replace(
        case, required={"providers": [family_provider(cloud, healthy=False)]}
    )
    waiting = converge_passes(client.run, sick)
    assert len(waiting) == 1 and waiting[0].resources == {} and not waiting[0].fatal
    history = converge_passes(client.run, case)
    assert len(history) == PASSES[f"contact-center-{cloud}"]
    last = history[-1]
    assert all(last.ready(name) for name in last.resources)
    health = last.condition("ProviderHealthy")
    assert health is not None and health.status == fnv1.STATUS_CONDITION_TRUE


# -- openstack (issue 35 items 2 and 3), from nothing to Ready -----------------------------


def _converged_openstack(client, case: ModuleCase) -> list:
    """The passes of ``case``; asserts what every openstack convergence asserts: the pinned
    passes of a tenant, no pass dropping anything, no fatal result, everything Ready."""
    history = converge_passes(client.run, case)
    for number, rendered in enumerate(history, 1):
        assert not rendered.fatal, f"pass {number}: {rendered.fatal}"
    for before, after in itertools.pairwise(history):
        assert not set(before.resources) - set(after.resources)
    last = history[-1]
    composed = _composed(last)
    assert composed is not None and composed.status == fnv1.STATUS_CONDITION_TRUE
    assert len(history) == PASSES["openstack-cluster"]
    assert all(last.ready(name) for name in last.resources)
    assert last.status["phase"] == "Ready"
    return history


def _ceph_quotas(rendered) -> dict[str, str]:
    """Composed Ceph block pool name -> its quota, as sent to Rook."""
    return {
        name: body["spec"]["forProvider"]["manifest"]["spec"]["quotas"]["maxSize"]
        for name, body in rendered.resources.items()
        if body["kind"] == "Object"
        and body["spec"]["forProvider"]["manifest"]["kind"] == "CephBlockPool"
    }


def test_a_tenant_with_quotas_cut_to_its_share_converges_from_nothing_to_ready(client):
    """Quotas on shared pools (issue 35 item 2): an xlarge tenant on the shared st-pool-a
    (500Ti) in a region that overrides the preset's volumes quota (100Ti) and lets one tenant
    take 20 %: every pass that composes the Ceph pools sends the same quotas, cut by one
    factor to within the share (never the preset first and the cut later: a quota Ceph
    enforced cannot be taken back from written data), status and StorageQuota say why, and
    the tenant is Ready in as many passes as any tenant."""
    from fnplatform.composers.openstack.quota import to_bytes

    from tests.support import openstack as o
    from tests.support.cases import openstack_cluster_case

    env = o.environment()
    env["data"]["storageQuotas"] = {"xlarge": {"volumes": "100Ti"}}
    env["data"]["maxTenantShare"] = 20
    case = dataclasses.replace(
        openstack_cluster_case(), composite=o.openstack(size="xlarge"), environment=(env,)
    )
    history = _converged_openstack(client, case)
    sent = [q for r in history if (q := _ceph_quotas(r))]
    assert sent and all(q == sent[0] for q in sent), sent
    quotas = sent[0]
    assert set(quotas) == {"ceph-volumes", "ceph-images", "ceph-ephemeral"}
    raw = sum(to_bytes(q) * (2 if name == "ceph-ephemeral" else 3) for name, q in quotas.items())
    assert raw <= to_bytes("500Ti") * 20 // 100, quotas
    # one factor: the override's 100Ti of volumes against the preset's 40Ti of ephemeral
    ratio = to_bytes(quotas["ceph-volumes"]) / to_bytes(quotas["ceph-ephemeral"])
    assert 2.3 < ratio < 2.7, quotas
    last = history[-1]
    (storage,) = last.status["consumedPools"]["storage"]
    assert storage["quotas"] == {p.removeprefix("ceph-"): q for p, q in quotas.items()}
    assert "20% of the shared storage pool st-pool-a (500Ti)" in storage["quotaReason"]
    quota = last.condition("StorageQuota")
    assert quota is not None and quota.status == fnv1.STATUS_CONDITION_FALSE
    assert quota.reason == "ClampedToShare"


def test_the_gitops_trees_internal_tenant_converges_from_nothing_to_ready(client):
    """The GitOps tree (issue 35 item 3): internal-prod, verbatim from
    examples/openstack/tenants/internal/prod.yaml, on hv-pool-b and on two storage pools
    (st-pool-a, st-pool-b): its Ceph pools and client on each pool (the second pool's named
    after it), and everything Ready in as many passes as any tenant."""
    from tests.support import openstack as o
    from tests.support.cases import openstack_cluster_case

    pools = [
        o.ready(o.control_plane_cluster()),
        o.ready(o.hypervisor("hv-pool-b", workers=100)),
        o.ready(o.storage("st-pool-a")),
        o.ready(o.storage("st-pool-b", capacity="1Pi")),
    ]
    case = dataclasses.replace(
        openstack_cluster_case(),
        composite=o.example_claim("internal/prod.yaml"),
        required=o.pools_and_holders(*pools),
    )
    history = _converged_openstack(client, case)
    last = history[-1]
    assert set(_ceph_quotas(last)) == {
        "ceph-volumes",
        "ceph-images",
        "ceph-ephemeral",
        "ceph-volumes-st-pool-b",
        "ceph-images-st-pool-b",
        "ceph-ephemeral-st-pool-b",
    }
    assert {"ceph-client", "ceph-client-st-pool-b"} <= set(last.resources)
    assert [s["name"] for s in last.status["consumedPools"]["storage"]] == [
        "st-pool-a",
        "st-pool-b",
    ]
    assert [h["name"] for h in last.status["consumedPools"]["hypervisor"]] == ["hv-pool-b"]
