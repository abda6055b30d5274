"""A hand edit of a Kubernetes object that a module composes through a provider-kubernetes
Object is applied back (docs/drift.md): the environment's backend Deployment (its
`spec.replicas`) and an openstack tenant's CephBlockPool on its storage pool (its
`spec.quotas.maxSize`), each edited as `kubectl edit` does, a PATCH recorded under the field
manager `kubectl-edit`, returns to the composed value within REVERTED_WITHIN_S, the same
object (uid kept); an annotation the same edit added, a field the module does not set, stays.

Why it is reverted, and how fast: the provider runs in server-side apply mode
(`--enable-server-side-apply`, the install set's args, examples/install/10-providers.yaml). Its
`Observe` extracts the fields its field manager `provider-kubernetes/<Object name>` owns from
the live object and compares them with a dry-run apply of the manifest
(internal/controller/cluster/object/syncer.go, `SSAResourceSyncer`); the edit moved the field
to `kubectl-edit`, so the two differ and the provider applies the manifest again, forcing
ownership back. Both Objects watch their object (`spec.watch: true`, their readiness reads it;
`--enable-watches`): the edit's watch event requeues the Object at once (informers.go,
indexes.go `enqueueObjectsForReferences`), so the revert takes one reconcile, seconds. Without
the watch it would wait for the poll (`--poll=10m`, ±10%), far past the bound; without server-side
apply the provider compares the manifest with its own last-applied annotation, which the edit
does not touch, and never reverts (run with `--no-enable-server-side-apply`, this test fails).
"""

from __future__ import annotations

import time
from typing import Any

import pytest

from tests.live import load, openstack
from tests.live.controlplane import REPO
from tests.live.kube import docs_of
from tests.live.layers import Live

pytestmark = pytest.mark.live

#: How long the provider may take to apply an edited field back. One watch event and one
#: reconcile (a GET, a dry-run apply, an apply) take seconds here; the bound leaves room on a
#: busy machine and is still a tenth of the poll (10 minutes) that an unwatched Object waits.
REVERTED_WITHIN_S = 60.0
#: The field manager `kubectl edit` records its change under.
EDITOR = "kubectl-edit"
#: An annotation the edit adds: a field the module does not set, which must stay.
ANNOTATION = "ops.example.com/edited-by"
#: How long an example may take to be Ready (test_live_examples.py's, test_live_openstack's).
ENVIRONMENT_READY_WITHIN_S = 150.0
OPENSTACK_READY_WITHIN_S = 420.0


def _composed(live: Live, claim: dict[str, Any], kind: str) -> list[dict[str, Any]]:
    """The manifests of the claim's composed Objects that wrap a ``kind``, by Object name."""
    xr = openstack.composite(live, claim)  # any claim's composite (spec.resourceRef)
    assert xr is not None, f"{load.key(claim)} has no composite"
    found = []
    for ref in load.refs(load.get(live, xr)):
        if ref["kind"] != "Object":
            continue
        obj = live.kube.get(ref["apiVersion"], "Object", ref["name"])
        manifest = obj.to_dict()["spec"]["forProvider"]["manifest"] if obj else {}
        if manifest.get("kind") == kind:
            found.append({"object": ref["name"], "manifest": manifest})
    return sorted(found, key=lambda f: f["object"])


def _field(obj: dict[str, Any], path: str) -> Any:
    for part in path.split("."):
        obj = (obj or {}).get(part) or {}
    return obj or None


def _owner(live_obj: dict[str, Any], top: str, field: str) -> list[str]:
    """The field managers that own ``spec.<top>.<field>`` (or ``spec.<field>`` when top is '')
    on the live object, as its managedFields say."""
    owners = []
    for entry in live_obj["metadata"].get("managedFields") or []:
        spec = ((entry.get("fieldsV1") or {}).get("f:spec")) or {}
        node = spec.get(f"f:{top}") if top else spec
        if isinstance(node, dict) and f"f:{field}" in node:
            owners.append(entry["manager"])
    return owners


def _edit_and_see_it_reverted(
    live: Live, composed: dict[str, Any], path: str, edited: Any, record: str
) -> None:
    """Edit ``path`` (dotted, under the object) of the composed object to ``edited`` and add
    ANNOTATION, both as `kubectl edit` would; the field returns to the manifest's value within
    REVERTED_WITHIN_S (recorded as ``record``), the object is the same, the annotation stays."""
    kube, manifest = live.kube, composed["manifest"]
    meta = manifest["metadata"]
    want = _field(manifest, path)
    assert want is not None and want != edited, f"{path}: composed {want!r}, edit {edited!r}"

    def current() -> dict[str, Any]:
        obj = kube.get(manifest["apiVersion"], manifest["kind"], meta["name"], meta["namespace"])
        assert obj is not None, f"{manifest['kind']} {meta['name']} is not there"
        return dict(obj.to_dict())

    before = current()
    *parents, last = path.split(".")
    patch: dict[str, Any] = {"metadata": {"annotations": {ANNOTATION: "hand"}}}
    node = patch
    for part in parents:
        node = node.setdefault(part, {})
    node[last] = edited
    live_obj = kube.get(manifest["apiVersion"], manifest["kind"], meta["name"], meta["namespace"])
    kube.patch(live_obj, patch, manager=EDITOR)
    t = time.monotonic()
    edited_obj = current()
    assert _field(edited_obj, path) == edited, "the edit did not land"
    assert EDITOR in _owner(edited_obj, ".".join(parents[1:]), last), (
        f"{EDITOR} does not own {path} after the edit: "
        f"{_owner(edited_obj, '.'.join(parents[1:]), last)}"
    )
    try:
        live.wait(
            f"{manifest['kind']} {meta['name']} {path} back to {want!r}",
            lambda: _field(current(), path) == want,
            REVERTED_WITHIN_S,
        )
    except TimeoutError:
        obj = live.kube.get("kubernetes.crossplane.io/v1alpha2", "Object", composed["object"])
        pytest.fail(
            f"{path} of {manifest['kind']} {meta['name']} still {_field(current(), path)!r} "
            f"{REVERTED_WITHIN_S:.0f} s after a hand edit (composed: {want!r}); Object "
            f"{composed['object']} conditions: "
            f"{(obj.to_dict().get('status') or {}).get('conditions') if obj else None}"
        )
    live.record(record, time.monotonic() - t)
    after = current()
    assert after["metadata"]["uid"] == before["metadata"]["uid"], "replaced, not reverted"
    assert (after["metadata"].get("annotations") or {}).get(ANNOTATION) == "hand", (
        f"the annotation {ANNOTATION} (not the module's) went: "
        f"{after['metadata'].get('annotations')}"
    )
    owners = _owner(after, ".".join(parents[1:]), last)
    assert f"provider-kubernetes/{composed['object']}" in owners and EDITOR not in owners, (
        f"{path} owned by {owners} after the revert"
    )


@pytest.mark.parametrize("platform", ["v1-claims"], indirect=True)
def test_a_hand_edited_deployment_gets_its_composed_replicas_back(platform: Live) -> None:
    kube = platform.kube
    for doc in docs_of(REPO / "examples/environment/platform/environment.yaml"):
        load.ensure_namespace(platform, doc)
        kube.apply(doc)
    (claim,) = docs_of(REPO / "examples/environment/claim-aws.yaml")
    load.ensure_namespace(platform, claim)
    kube.apply(claim)
    try:
        load.wait_ready(platform, [claim], ENVIRONMENT_READY_WITHIN_S)
        (deployment,) = _composed(platform, claim, "Deployment")
        replicas = deployment["manifest"]["spec"]["replicas"]
        _edit_and_see_it_reverted(
            platform, deployment, "spec.replicas", replicas + 3, "drift_reverted_replicas_s"
        )
    finally:
        load.delete_all(platform, [claim], 240)


#: The tenant and the pools it runs on (customer-b-staging: one hypervisor pool, one storage
#: pool), with the region's control plane.
TENANT = ("customer-b", "customer-b-staging")
POOLS = ("eu-de-1-control-plane", "hv-pool-a", "st-pool-a")


@pytest.mark.parametrize("platform", ["v1-claims"], indirect=True)
def test_a_hand_edited_tenant_ceph_pool_gets_its_quota_back(platform: Live) -> None:
    kube = platform.kube
    openstack.install(platform)
    pools = [openstack.pool(p) for p in POOLS]
    tenant = openstack.tenant(*TENANT)
    claim = tenant[-1]
    try:
        kube.apply_all(pools)
        load.wait_ready(platform, pools, OPENSTACK_READY_WITHIN_S)
        kube.apply_all(tenant)
        load.wait_ready(platform, [claim], OPENSTACK_READY_WITHIN_S)
        ceph_pool = _composed(platform, claim, "CephBlockPool")[0]
        _edit_and_see_it_reverted(
            platform, ceph_pool, "spec.quotas.maxSize", "123Gi", "drift_reverted_ceph_quota_s"
        )
    finally:
        openstack.delete_tenants_and_pools(platform, [claim], pools)
