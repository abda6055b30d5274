"""The openstack platform on the live control plane, as a platform team sets it up (the
GitOps tree's platform-config, examples/openstack/apps/platform-config) and as Gardener and
Rook would provide it (tests/live/providers.py GardenerStandIn; the operator stand-in):

- the garden is this API server (Shoots served by the stand-in CRD), reached by the region's
  garden ProviderConfig (`gardener-eu-de-1`) and by the refreshers (`garden-c5c3-automation`)
  through a kubeconfig Secret each, as the platform team creates them;
- the project namespace `garden-c5c3` (Gardener creates it with the Project);
- every pool's cluster is this API server too (the admin kubeconfigs the garden issues point
  here), with Rook's namespace `rook-ceph` and its CephCluster `rook-ceph`, encrypting its
  OSDs (`storage.config.encryptedDevice: "true"`): what the platform team installs on the
  encrypted pool (docs/openstack.md "Encrypted storage pools").

Every pool is one cluster here, so two pools' objects of one name land on one object: a
tenant on two storage pools (internal-prod: st-pool-a and st-pool-b) would have each pool's
Object manage the same CephBlockPools; the live tests apply tenants on one storage pool each
(internal-prod composes in the convergence cases, tests/support/convergence)."""

from __future__ import annotations

import base64
from typing import Any

import yaml

from tests.live.controlplane import ADMIN_TOKEN, APISERVER, REPO
from tests.live.kube import docs_of
from tests.live.layers import Live

TREE = REPO / "examples/openstack"
INFRA = TREE / "infrastructure/eu-de-1"
XR_API = "crossplane.c5c3.io/v1alpha1"
ROOK_CLUSTER: dict[str, Any] = {
    "apiVersion": "ceph.rook.io/v1",
    "kind": "CephCluster",
    "metadata": {"name": "rook-ceph", "namespace": "rook-ceph"},
    "spec": {
        "cephVersion": {"image": "quay.io/ceph/ceph:v19.2.3"},
        "dataDirHostPath": "/var/lib/rook",
        "mon": {"count": 3},
        "storage": {
            "useAllNodes": True,
            "useAllDevices": True,
            "config": {"encryptedDevice": "true"},
        },
    },
}


def _kubeconfig_secret(namespace: str, name: str) -> dict[str, Any]:
    """A kubeconfig Secret for this API server with the admin token: the garden credential."""
    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "garden", "cluster": {"server": APISERVER}}],
        "users": [{"name": "garden", "user": {"token": ADMIN_TOKEN}}],
        "contexts": [{"name": "garden", "context": {"cluster": "garden", "user": "garden"}}],
        "current-context": "garden",
    }
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "metadata": {"name": name, "namespace": namespace},
        "data": {"kubeconfig": base64.b64encode(yaml.safe_dump(config).encode()).decode()},
    }


def install(live: Live) -> None:
    """The platform team's part, idempotent (see the module doc)."""
    kube = live.kube
    ca = base64.b64encode(live.cp.ca_pem).decode()
    for ns in ("infrastructure", "garden-c5c3", "rook-ceph"):
        kube.apply({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
    for name in ("garden-eu-de-1-kubeconfig", "garden-c5c3-automation"):
        secret = _kubeconfig_secret("crossplane-system", name)
        config = yaml.safe_load(base64.b64decode(secret["data"]["kubeconfig"]))
        config["clusters"][0]["cluster"]["certificate-authority-data"] = ca
        secret["data"]["kubeconfig"] = base64.b64encode(yaml.safe_dump(config).encode()).decode()
        kube.apply(secret)
    kube.apply_all(docs_of(TREE / "apps/platform-config/provider-configs.yaml"))
    kube.apply_all(docs_of(TREE / "apps/platform-config/environment-eu-de-1.yaml"))
    kube.apply(ROOK_CLUSTER)


def pool(name: str) -> dict[str, Any]:
    """The pool claim ``name`` of region eu-de-1 as the tree has it."""
    for f in sorted(INFRA.rglob("*.yaml")):
        for doc in docs_of(f):
            if doc.get("kind") != "Kustomization" and doc["metadata"]["name"] == name:
                doc["metadata"].setdefault("namespace", "infrastructure")
                return doc
    raise KeyError(name)


def tenant(folder: str, name: str) -> list[dict[str, Any]]:
    """The tenant's Namespace and its claim ``name`` (tenants/<folder>/)."""
    docs = docs_of(*sorted((TREE / "tenants" / folder).glob("*.yaml")))
    return [d for d in docs if d.get("kind") == "Namespace"] + [
        d for d in docs if d.get("kind") == "OpenStackCluster" and d["metadata"]["name"] == name
    ]


def shoots(live: Live) -> list[Any]:
    """The Shoots in the project namespace."""
    return live.kube.list("core.gardener.cloud/v1beta1", "Shoot", "garden-c5c3")


def shoots_gone_once_confirmed(live: Live) -> bool:
    """One poll of an operator letting Gardener delete: every Shoot there is now gets the
    confirmation (a Shoot the provider re-created, or one whose Object asks for its deletion
    only after the last poll, is confirmed on the next), then whether none is left."""
    confirm_shoot_deletion(live)
    return not shoots(live)


def confirm_shoot_deletion(live: Live) -> None:
    """What an operator does to let Gardener delete the Shoots (docs/openstack.md: the
    function never confirms): annotate each with confirmation.gardener.cloud/deletion."""
    for shoot in shoots(live):
        live.kube.patch(
            shoot, {"metadata": {"annotations": {"confirmation.gardener.cloud/deletion": "true"}}}
        )


def status(live: Live, doc: dict[str, Any]) -> dict[str, Any]:
    """The claim's status now ({} while it has none)."""
    meta = doc["metadata"]
    obj = live.kube.get(doc["apiVersion"], doc["kind"], meta["name"], meta.get("namespace"))
    return (obj.to_dict().get("status") or {}) if obj is not None else {}


def conditions(live: Live, doc: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The claim's conditions by type."""
    return {c["type"]: c for c in status(live, doc).get("conditions") or []}


def composite(live: Live, claim: dict[str, Any]) -> dict[str, Any] | None:
    """The claim's composite as a document (apiVersion, kind, name), once bound."""
    obj = live.kube.get(
        claim["apiVersion"],
        claim["kind"],
        claim["metadata"]["name"],
        claim["metadata"].get("namespace"),
    )
    ref = ((obj.to_dict().get("spec") or {}).get("resourceRef") or {}) if obj else {}
    if not ref.get("name"):
        return None
    return {"apiVersion": ref["apiVersion"], "kind": ref["kind"], "metadata": {"name": ref["name"]}}


def delete_tenants_and_pools(
    live: Live, tenants: list[dict[str, Any]], pools: list[dict[str, Any]]
) -> None:
    """Delete in the order the Usages imply and wait until all is gone: the tenants first
    (each pool is in use, a ClusterUsage, while a tenant runs on it), then the pools, whose
    Shoots Gardener deletes only once an operator confirms it (the function never does)."""
    from tests.live import load  # here: load imports this module

    load.delete_all(live, tenants)
    for doc in pools:
        live.kube.delete(
            doc["apiVersion"], doc["kind"], doc["metadata"]["name"], doc["metadata"]["namespace"]
        )
    live.wait(
        "the pools' Shoots asked to be deleted",
        lambda: all(
            (c := composite(live, d)) is None
            or (xr := load.get(live, c)) is None
            or xr.metadata.deletionTimestamp
            for d in pools
        ),
        120,
    )
    live.wait(
        "every pool and its Shoot gone",
        lambda: shoots_gone_once_confirmed(live) and all(load.get(live, d) is None for d in pools),
        300,
    )
