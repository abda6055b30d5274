"""Requests for the openstack module: the eu-de-1 region of examples/openstack, as data.

The EnvironmentConfig is the example's own file (so tests and examples can't drift); pools are
composites as Crossplane would fetch them for an OpenStackCluster's requirements.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import yaml

from tests.support.harness import observed_ready, request, step_input

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples" / "openstack"
POOL_API = "crossplane.c5c3.io/v1alpha1"
TENANT_API = "c5c3.io/v1alpha1"
Body = dict[str, Any]


def environment() -> Body:
    """The region's EnvironmentConfig (examples/openstack/apps/platform-config)."""
    path = EXAMPLES / "apps" / "platform-config" / "environment-eu-de-1.yaml"
    return dict(yaml.safe_load(path.read_text()))


def step() -> Body:
    """The step input, selecting the EnvironmentConfig by name (tests fetch it by that key)."""
    return step_input("openstack", environment=[{"name": "openstack-eu-de-1"}])


def claim_labels(claim: str, namespace: str) -> dict[str, str]:
    return {"crossplane.io/claim-name": claim, "crossplane.io/claim-namespace": namespace}


def hypervisor(
    claim: str = "hv-pool-a",
    *,
    workers: int = 50,
    region: str = "eu-de-1",
    labels: dict[str, str] | None = None,
    xr: str | None = None,
) -> Body:
    """An XHypervisorCluster of the infrastructure namespace."""
    spec: Body = {
        "region": region,
        "name": claim,
        "workers": workers,
        "ironcore": {"machinePool": f"ironcore-{claim}", "machineClass": "baremetal-kvm"},
    }
    if labels:
        spec["labels"] = dict(labels)
    return {
        "apiVersion": POOL_API,
        "kind": "XHypervisorCluster",
        "metadata": {"name": xr or f"{claim}-x1", "labels": claim_labels(claim, "infrastructure")},
        "spec": spec,
    }


def storage(
    claim: str = "st-pool-a",
    *,
    region: str = "eu-de-1",
    encrypted: bool = False,
    capacity: str | None = "500Ti",
    labels: dict[str, str] | None = None,
) -> Body:
    """An XStorageCluster of the infrastructure namespace."""
    ceph: Body = {"osdCount": 96, "deviceClass": "nvme", "replicationFactor": 3}
    if capacity is not None:
        ceph["targetCapacity"] = capacity
    if encrypted:
        ceph["encrypted"] = True
    spec: Body = {
        "region": region,
        "name": claim,
        "workers": 12,
        "ironcore": {"machinePool": "ironcore-storage-rack-1"},
        "ceph": ceph,
    }
    if labels:
        spec["labels"] = dict(labels)
    return {
        "apiVersion": POOL_API,
        "kind": "XStorageCluster",
        "metadata": {"name": f"{claim}-x1", "labels": claim_labels(claim, "infrastructure")},
        "spec": spec,
    }


def control_plane_cluster(claim: str = "eu-de-1-control-plane", *, region: str = "eu-de-1") -> Body:
    """An XControlPlaneCluster of the infrastructure namespace."""
    return {
        "apiVersion": POOL_API,
        "kind": "XControlPlaneCluster",
        "metadata": {"name": f"{claim}-x1", "labels": claim_labels(claim, "infrastructure")},
        "spec": {"region": region, "workers": 5},
    }


def ready(pool: Body) -> Body:
    """A pool composite reporting Ready."""
    return observed_ready(pool)


def openstack(
    claim: str = "customer-a-prod",
    namespace: str = "tenant-customer-a",
    *,
    hypervisors: list[str] | None = None,
    storages: list[str] | None = None,
    size: str = "large",
    services: Body | None = None,
    xr: str | None = None,
    status: Body | None = None,
    **extra: Any,
) -> Body:
    """An XOpenStackCluster for a tenant claim."""
    spec: Body = {
        "region": "eu-de-1",
        "size": size,
        "hypervisorClusters": hypervisors or ["hv-pool-a", "hv-pool-b"],
        "storageClusters": storages or ["st-pool-a"],
        "tls": {"enabled": True, "issuerRef": "letsencrypt-prod"},
    }
    if services is not None:
        spec["services"] = services
    spec |= extra
    body: Body = {
        "apiVersion": TENANT_API,
        "kind": "XOpenStackCluster",
        "metadata": {"name": xr or f"{claim}-x7k2p", "labels": claim_labels(claim, namespace)},
        "spec": spec,
    }
    if status is not None:
        body["status"] = status
    return body


def pools_fetched(*pools: Body) -> dict[str, list[Body]]:
    """Requirement key -> fetched composites, as Crossplane answers an OpenStackCluster."""
    roles = {
        "XHypervisorCluster": "hypervisor",
        "XStorageCluster": "storage",
        "XControlPlaneCluster": "control-plane",
    }
    out: dict[str, list[Body]] = {}
    for pool in pools:
        claim = pool["metadata"]["labels"]["crossplane.io/claim-name"]
        out[f"pool-{roles[pool['kind']]}-{claim}"] = [copy.deepcopy(pool)]
    return out


def pools_and_holders(*pools: Body) -> dict[str, list[Body]]:
    """:func:`pools_fetched`, and who else runs on each pool (its Usages): nobody."""
    fetched = pools_fetched(*pools)
    return {**fetched, **{key.replace("pool-", "holders-", 1): [] for key in fetched}}


def region_pools() -> list[Body]:
    """The eu-de-1 pools of the examples, all Ready."""
    return [
        ready(control_plane_cluster()),
        ready(hypervisor("hv-pool-a")),
        ready(hypervisor("hv-pool-b", workers=100)),
        ready(storage("st-pool-a")),
    ]


def openstack_request(
    composite: Body,
    pools: list[Body],
    *,
    observed: Body | None = None,
    missing: tuple[str, ...] = (),
) -> Any:
    """A request for ``composite`` with ``pools`` fetched; ``missing`` keys fetched empty."""
    required: dict[str, list[Body]] = {"environment-0": [environment()]}
    required.update(pools_and_holders(*pools))
    for key in missing:
        required[key] = []
    return request(composite, step(), observed=observed, required=required)


def pool_request(composite: Body, *, observed: Body | None = None) -> Any:
    """A request for a pool composite."""
    return request(
        composite, step(), observed=observed, required={"environment-0": [environment()]}
    )


def example_claim(path: str, xr_suffix: str = "x7k2p") -> Body:
    """A tenant claim of ``examples/openstack/tenants/<path>``, verbatim, as the composite
    Crossplane makes of it (kind X..., a generated name, the claim labels)."""
    claim = yaml.safe_load((EXAMPLES / "tenants" / path).read_text())
    name, namespace = claim["metadata"]["name"], claim["metadata"]["namespace"]
    return {
        "apiVersion": claim["apiVersion"],
        "kind": "X" + claim["kind"],
        "metadata": {"name": f"{name}-{xr_suffix}", "labels": claim_labels(name, namespace)},
        "spec": copy.deepcopy(claim["spec"]),
    }
