"""The openstack GitOps tree (examples/openstack) builds with `kubectl kustomize`, and the API
server (with the XRDs Established and the Flux CRDs installed) accepts every object it would
apply: the Flux sources, Kustomizations and HelmReleases, the Crossplane packages, the tenants'
namespaces and RBAC, and the openstack claims of both regions (issue 21, 6; issue 35, 3).
Server-side dry run: validated and admitted (webhooks included) but not stored.

Then the tenants for real (issue 35, 3): the tenant ClusterRole, each tenant's namespace and
RoleBinding applied as Flux would; a tenant's user (impersonated: its group) may create an
OpenStackCluster in its own namespace and nowhere else; and the design's finance-prod claim,
verbatim, applied in its namespace, reaches the function, whose answer (the pools are not
provisioned here: Gardener is a stand-in) is Pending with the missing pools named."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml
from kubernetes import config, dynamic
from kubernetes.dynamic.exceptions import ForbiddenError

from tests.live.conftest import Live
from tests.live.controlplane import REPO
from tests.live.kube import docs_of

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


@pytest.mark.parametrize("platform", ["v1-claims"], indirect=True)
def test_the_documents_finance_claim_is_applied_and_answered(platform: Live) -> None:
    """The verbatim claim (examples/openstack/tenants/finance/prod.yaml), with the region's
    EnvironmentConfig, in a control plane without the pools: Pending, PoolsReady naming
    them, never an error."""
    kube = platform.kube
    kube.apply_all(docs_of(TREE / "apps/platform-config/environment-eu-de-1.yaml"))
    built = _kustomize(TREE / "tenants/finance")
    kube.apply_all(d for d in built if d["kind"] == "Namespace")
    (claim,) = [d for d in built if d["kind"] == "OpenStackCluster"]
    kube.apply(claim)
    message: dict[str, str] = {}

    def pending() -> bool:
        obj = kube.get(claim["apiVersion"], claim["kind"], "finance-prod", "tenant-finance")
        status = (obj.to_dict().get("status") or {}) if obj is not None else {}
        cond = next((c for c in status.get("conditions") or []
                     if c.get("type") == "PoolsReady"), None)
        message["PoolsReady"] = (cond or {}).get("message", "")
        return status.get("phase") == "Pending" and cond is not None

    try:
        platform.wait("finance-prod Pending with PoolsReady", pending, 120)
        assert "st-pool-encrypted" in message["PoolsReady"], message
        assert "hv-pool-compliance" in message["PoolsReady"], message
    finally:
        kube.delete(claim["apiVersion"], claim["kind"], "finance-prod", "tenant-finance")
