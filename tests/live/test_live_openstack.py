"""The openstack GitOps tree (examples/openstack) builds with `kubectl kustomize`, and the API
server (with the XRDs Established and the Flux CRDs installed) accepts every object it would
apply: the Flux sources, Kustomizations and HelmReleases, the Crossplane packages, the tenants'
namespaces and RBAC, and the openstack claims of both regions (issue 21, 6; issue 35, 3).
Server-side dry run: validated and admitted (webhooks included) but not stored.

Then the tenants for real (issue 35, 3): the tenant ClusterRole, each tenant's namespace and
RoleBinding applied as Flux would; a tenant's user (impersonated: its group) may create an
OpenStackCluster in its own namespace and nowhere else; and the design's finance-prod claim,
verbatim, applied in its namespace: Pending with the missing pools named while the region has
none, then Ready once the tree's pools are (Gardener and Rook as stand-ins that issue the
pools' kubeconfigs and hold their CephCluster, tests/live/openstack.py), beside the tree's
other tenants on one storage pool; all deleted in the order the Usages imply."""

from __future__ import annotations

import shutil
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
import yaml
from kubernetes import config, dynamic
from kubernetes.dynamic.exceptions import ForbiddenError

from tests.live import load, openstack
from tests.live.controlplane import REPO
from tests.live.kube import docs_of
from tests.live.layers import Live

pytestmark = pytest.mark.live

TREE = REPO / "examples/openstack"


def _kustomize(directory: Path) -> list[dict[str, Any]]:
    kubectl = shutil.which("kubectl")
    assert kubectl, "kubectl (for kubectl kustomize) is not on PATH"
    out = subprocess.run(
        [kubectl, "kustomize", str(directory)], check=True, capture_output=True, text=True
    ).stdout
    return [d for d in yaml.safe_load_all(out) if d]


def _tree_objects() -> list[dict[str, Any]]:
    """What Flux would apply: each kustomization directory built, every other file as is."""
    built = sorted({p.parent for p in TREE.rglob("kustomization.yaml")})
    docs: list[dict[str, Any]] = []
    for d in built:
        docs += _kustomize(d)
    for f in sorted(TREE.rglob("*.yaml")):
        if not any(d in f.parents for d in built) and f.name != "kustomization.yaml":
            docs += docs_of(f)
    return docs


# the tree applies the v1 form (claims of the openstack XRDs)
@pytest.mark.parametrize("platform", ["v1-claims"], indirect=True)
def test_gitops_tree_builds_and_is_accepted(platform: Live) -> None:
    kube = platform.kube
    docs = _tree_objects()
    assert any(d["kind"] == "Kustomization" for d in docs), "Flux Kustomizations"
    refused: dict[str, str] = {}
    for doc in docs:
        ns = doc["metadata"].get("namespace")
        if ns:
            kube.apply({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
        res = kube.resource(doc["apiVersion"], doc["kind"])
        try:
            res.server_side_apply(
                body=doc,
                name=doc["metadata"]["name"],
                namespace=ns if res.namespaced else None,
                field_manager="live-tests",
                force_conflicts=True,
                dry_run="All",
            )
        except Exception as e:  # collected: every refusal is reported
            refused[f"{doc['kind']}/{doc['metadata']['name']}"] = str(e)[:600]
    assert refused == {}


def _impersonating(live: Live, group: str) -> dynamic.DynamicClient:
    """A client acting as a user of ``group`` (Kubernetes user impersonation, allowed to the
    tests' admin): what a tenant's own kubeconfig would do."""
    api = config.new_client_from_config(str(live.cp.kubeconfig))
    api.set_default_header("Impersonate-User", f"{group}-user")
    api.set_default_header("Impersonate-Group", group)
    return dynamic.DynamicClient(api)


def _can_create(dyn: dynamic.DynamicClient, doc: dict[str, Any], namespace: str) -> bool:
    res = dyn.resources.get(api_version=doc["apiVersion"], kind=doc["kind"])
    body = {**doc, "metadata": {**doc["metadata"], "namespace": namespace}}
    try:
        res.create(body=body, namespace=namespace, dry_run="All")
    except ForbiddenError:
        return False
    return True


@pytest.mark.parametrize("platform", ["v1-claims"], indirect=True)
def test_a_tenant_creates_openstack_clusters_in_its_namespace_only(platform: Live) -> None:
    kube = platform.kube
    kube.apply_all(docs_of(TREE / "apps/platform-config/tenant-role.yaml"))
    tenants = sorted(p for p in (TREE / "tenants").iterdir() if p.is_dir())
    built = {t.name: _kustomize(t) for t in tenants}
    for docs in built.values():  # namespace and RoleBinding first, as kubectl apply orders
        kube.apply_all(d for d in docs if d["kind"] in ("Namespace", "RoleBinding"))
    (finance,) = [d for d in built["finance"] if d["kind"] == "OpenStackCluster"]
    (pool,) = docs_of(TREE / "infrastructure/eu-de-1/storage-pools/st-pool-b.yaml")
    as_finance = _impersonating(platform, "tenant:finance")

    def allowed() -> bool:  # RBAC caches settle within a second or two
        return _can_create(as_finance, finance, "tenant-finance")

    platform.wait("tenant:finance may create OpenStackClusters in tenant-finance", allowed, 30)
    assert not _can_create(as_finance, finance, "tenant-customer-a")
    assert not _can_create(as_finance, finance, "tenant-internal")
    assert not _can_create(as_finance, pool, "infrastructure")  # no pool of its own making
    as_customer_a = _impersonating(platform, "tenant:customer-a")
    assert not _can_create(as_customer_a, finance, "tenant-finance")


#: the tree's region eu-de-1 pools the examples' tenants below run on
POOLS = (
    "eu-de-1-control-plane",
    "hv-pool-a",
    "hv-pool-b",
    "hv-pool-compliance",
    "st-pool-a",
    "st-pool-encrypted",
)
#: (tenants/<folder>, claim): every tenant of the tree on one storage pool (module doc of
#: tests/live/openstack.py)
TENANTS = (
    ("finance", "finance-prod"),
    ("customer-a", "customer-a-prod"),
    ("customer-b", "customer-b-staging"),
)
READY_WITHIN_S = 420.0


def _phase(live: Live, doc: dict[str, Any]) -> str:
    return str(openstack.status(live, doc).get("phase", ""))


@pytest.mark.parametrize("platform", ["v1-claims"], indirect=True)
def test_the_documents_finance_claim_pending_then_ready_with_the_examples(platform: Live) -> None:
    """The verbatim claim (examples/openstack/tenants/finance/prod.yaml), with the region's
    EnvironmentConfig, before the pools exist: Pending, PoolsReady naming them, never an
    error. Then the platform as the tree has it (the pools; Gardener and Rook as stand-ins,
    tests/live/openstack.py): every pool and every tenant Ready, finance-prod on the
    encrypted pool; deleted in the order the Usages imply (tenants, then pools; the Shoots
    once an operator confirms their deletion)."""
    kube = platform.kube
    openstack.install(platform)
    tenants = {name: openstack.tenant(folder, name) for folder, name in TENANTS}
    claims = {name: docs[-1] for name, docs in tenants.items()}
    kube.apply_all(tenants["finance-prod"])
    finance = claims["finance-prod"]
    pools = [openstack.pool(p) for p in POOLS]
    try:

        def pending() -> bool:
            return _phase(platform, finance) == "Pending" and "PoolsReady" in openstack.conditions(
                platform, finance
            )

        platform.wait("finance-prod Pending with PoolsReady", pending, 120)
        message = openstack.conditions(platform, finance)["PoolsReady"].get("message", "")
        assert "st-pool-encrypted" in message, message
        assert "hv-pool-compliance" in message, message

        kube.apply_all(pools)
        platform.record("openstack_pools_ready_s", load.wait_ready(platform, pools, READY_WITHIN_S))
        encrypted = openstack.status(platform, openstack.pool("st-pool-encrypted"))
        assert encrypted.get("encrypted") is True, encrypted
        for name, docs in tenants.items():
            if name != "finance-prod":
                kube.apply_all(docs)
        platform.record(
            "openstack_tenants_ready_s",
            load.wait_ready(platform, list(claims.values()), READY_WITHIN_S),
        )
        platform.wait(
            "every tenant's phase Ready",
            lambda: all(_phase(platform, c) == "Ready" for c in claims.values()),
            120,
        )
        storage = openstack.status(platform, finance)["consumedPools"]["storage"]
        assert [(s["name"], s["status"], s["encrypted"]) for s in storage] == [
            ("st-pool-encrypted", "Ready", True)
        ], storage
    finally:
        t = time.monotonic()
        openstack.delete_tenants_and_pools(platform, list(claims.values()), pools)
        platform.record("openstack_deleted_s", time.monotonic() - t)
