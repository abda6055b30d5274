"""The ``OpenStackCluster``: a tenant's OpenStack on pools it shares with others (or owns).

1. Resolve every named pool (hypervisor, storage, and the region's control-plane cluster).
   Any that is missing, not ready, in another region, dedicated to another tenant (by its
   ``tenant`` label, or, without one, to the OpenStack cluster that used it first) or, for a
   cluster with ``encryptedStorage``, an unencrypted storage pool stops
   progress: while nothing of the tenant exists yet (no ControlPlane, nothing at all) the
   cluster is Pending and composes nothing (``comp.not_yet``); after, it keeps composing from
   the pools remembered in ``status.consumedPools`` and is Degraded. Nothing that exists is
   removed for it.
2. In the control-plane cluster: namespace ``openstack-<tenant>`` and the c5c3 ControlPlane.
3. On every named storage pool: the tenant's RBD pools, each with its quota (the size
   preset, the region's override, at most ``maxTenantShare`` of a shared pool: ``quota.py``),
   and Ceph client; for manila, CephFS on the first.
4. A ClusterUsage per consumed pool, so no pool is deleted while a tenant runs on it.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from fnplatform.api.phase import Phase
from fnplatform.api.validation import parse
from fnplatform.api.xrspec import user_spec
from fnplatform.composers.openstack import ceph
from fnplatform.composers.openstack.controlplane import control_plane, public_endpoints
from fnplatform.composers.openstack.model import Ceph, OpenStackClusterSpec, Settings
from fnplatform.composers.openstack.objects import wrapped
from fnplatform.composers.openstack.pools import settings_of
from fnplatform.composers.openstack.quota import POOLS, Quotas, tenant_quotas, to_bytes
from fnplatform.composers.openstack.resolve import (
    Pool,
    fetch,
    fetch_holders,
    judge,
    other_holder,
    remembered,
    same_name_elsewhere,
)
from fnplatform.composition import Composition
from fnplatform.errors import InputError, Pending
from fnplatform.library.kubernetes import add_object

NAMESPACE, CONTROL_PLANE = "namespace", "control-plane"
POOLS_READY = "PoolsReady"
COVERAGE = "ControlPlaneCoverage"
STORAGE_QUOTA = "StorageQuota"


def compose_openstack_cluster(comp: Composition) -> None:
    """Compose one tenant OpenStack cluster."""
    spec = parse(OpenStackClusterSpec, user_spec(comp.spec), "spec")
    settings = settings_of(comp)
    if settings.controlPlane is None:
        raise InputError(
            "environment.controlPlane",
            "required for OpenStack clusters (openStackRelease and friends)",
        )
    tenant = comp.claim_name or comp.name
    found = _resolve(comp, spec, settings, tenant)
    bad = [p for p in found if not p.usable]
    problems = "; ".join(p.describe() for p in bad)
    if bad and len(comp.observed) == 0:
        # Nothing exists yet: wait, composing nothing (not an error the user caused here).
        _report_pools(comp, found)
        comp.set_phase(Phase.PENDING)
        comp.not_yet("PoolsUnusable", problems, condition=POOLS_READY)
    pools = _with_quotas(_remembered_pools(comp, found) if bad else found, spec, settings)
    _report_pools(comp, pools)
    cut = [f"storage pool {p.name}: {p.quota_reason}" for p in pools if p.quota_reason]
    if cut:
        comp.condition(STORAGE_QUOTA, False, "ClampedToShare", "; ".join(cut))
    else:
        comp.condition(STORAGE_QUOTA, True, "AsPreset")
    parts = _compose(comp, spec, settings, tenant, pools)
    if bad:
        comp.condition(POOLS_READY, False, "PoolsUnusable", problems)
        comp.set_phase(Phase.DEGRADED)
    else:
        comp.condition(POOLS_READY, True, "AllPoolsReady")
        comp.set_phase(Phase.PROVISIONING if comp.pending(parts) else Phase.READY)


def _resolve(
    comp: Composition, spec: OpenStackClusterSpec, settings: Settings, tenant: str
) -> list[Pool]:
    """Every referenced pool, judged; Pending (asks Crossplane to fetch) until all are.

    Also who else runs on the pools (their Usages): an exclusive pool held by another cluster
    is unusable, and another namespace's cluster of the same name stops a new one.
    """
    wanted = [("control-plane", spec.control_plane_claim())]
    wanted += [("hypervisor", n) for n in spec.hypervisorClusters]
    wanted += [("storage", n) for n in spec.storageClusters]
    fetched = [
        (role, name, fetch(comp, role, name, settings.poolNamespace)) for role, name in wanted
    ]
    if any(items is None for _, _, items in fetched):
        raise Pending
    judged = [
        judge(
            role,
            name,
            items or [],
            namespace=settings.poolNamespace,
            region=spec.region,
            tenant=comp.namespace,
            encryption=spec.encryptedStorage,
        )
        for role, name, items in fetched
    ]
    # A dedicated pool without a tenant label is the first cluster's: who holds it now? Every
    # tenant runs on its control-plane cluster: its users tell the names already taken.
    holders = {
        (p.role, p.name): fetch_holders(comp, p)
        for p in judged
        if p.composite is not None and (p.exclusive or p.role == "control-plane")
    }
    if any(usages is None for usages in holders.values()):
        raise Pending
    shared = next(
        (usages for (role, _), usages in holders.items() if role == "control-plane"), None
    )
    twin = same_name_elsewhere(comp, shared or [], tenant, comp.namespace)
    if twin and not comp.observed:
        comp.set_phase(Phase.PENDING)
        comp.not_yet(
            "NameTaken",
            f"the OpenStack cluster {twin} already has the name "
            f"{tenant}: both would share the namespace openstack-{tenant} and the Ceph "
            f"pools {tenant}-*; choose another name",
            condition=POOLS_READY,
        )
    pools = []
    for pool in judged:
        owner = pool.exclusive and other_holder(comp, holders[pool.role, pool.name] or [])
        pools.append(pool.held_by(owner) if owner else pool)
    return pools


def _remembered_pools(comp: Composition, found: list[Pool]) -> list[Pool]:
    """The pool set of the last pass that could use all its pools, each with the state it
    has now (a pool that went missing keeps its remembered ProviderConfig and composite)."""
    now = {(p.role, p.name): p for p in found}
    entries: list[tuple[str, Any]] = [("control-plane", comp.recorded("controlPlaneCluster"))]
    for role in ("hypervisor", "storage"):
        entries += [(role, e) for e in comp.recorded(f"consumedPools.{role}") or []]
    pools = []
    for role, entry in entries:
        if not isinstance(entry, dict) or not entry.get("providerConfig"):
            continue
        memory = remembered(comp, role, entry)
        current = now.get((role, memory.name))
        pools.append(memory if current is None else memory.with_state(current))
    return pools


def _with_quotas(pools: list[Pool], spec: OpenStackClusterSpec, settings: Settings) -> list[Pool]:
    """Every storage pool with the tenant's quotas on it (:func:`quota.tenant_quotas`), kept as
    remembered for a pool no longer fetched (its capacity and sharing are not known then)."""
    out = []
    for pool in pools:
        if pool.role != "storage" or pool.quotas is not None:
            out.append(pool)
            continue
        quotas = tenant_quotas(
            spec.size,
            settings,
            replication=pool.replication or Ceph().replicationFactor,
            capacity=pool.capacity,
            dedicated=pool.dedicated,
            storage_pool=pool.name,
        )
        out.append(replace(pool, quotas=quotas.status(), quota_reason=quotas.reason or None))
    return out


def _report_pools(comp: Composition, pools: list[Pool]) -> None:
    """``status.consumedPools`` and ``status.controlPlaneCluster``: the memory of the pool set
    composed on, each pool with its state now."""
    by_role: dict[str, list[dict[str, Any]]] = {"hypervisor": [], "storage": []}
    for pool in pools:
        if pool.role == "control-plane":
            comp.set_status("controlPlaneCluster", pool.status())
        else:
            by_role[pool.role].append(pool.status())
    comp.set_status("consumedPools", by_role)


def _compose(
    comp: Composition,
    spec: OpenStackClusterSpec,
    settings: Settings,
    tenant: str,
    pools: list[Pool],
) -> dict[str, list[str]]:
    """Compose the tenant; returns its parts (ControlPlane, Ceph) for the phase."""
    assert settings.controlPlane is not None
    cluster = next((p for p in pools if p.role == "control-plane"), None)
    storage = [p for p in pools if p.role == "storage"]
    if cluster is None or cluster.provider_config is None or not storage:
        # Composing nothing would delete what exists: fail instead, Crossplane keeps it all.
        raise InputError(
            "status.consumedPools",
            "a pool is unusable and no usable pool set "
            "is remembered in status; fix the pools named in condition PoolsReady",
        )
    namespace = f"openstack-{tenant}"
    add_object(
        comp,
        NAMESPACE,
        {
            "apiVersion": "v1",
            "kind": "Namespace",
            "metadata": {"name": namespace, "labels": {"c5c3.io/openstack-cluster": tenant}},
        },
        provider_config=cluster.provider_config,
        component="openstack",
    )
    parts = control_plane(tenant, namespace, spec, settings.controlPlane)
    add_object(
        comp,
        CONTROL_PLANE,
        parts.manifest,
        provider_config=cluster.provider_config,
        component="openstack",
        uses=(NAMESPACE,),
    )
    comp.set_status("controlPlane", f"{namespace}/{tenant}")
    if parts.missing:
        comp.condition(
            COVERAGE,
            False,
            "NotInControlPlaneAPI",
            "the c5c3 ControlPlane API has no field for: " + "; ".join(parts.missing),
        )
    else:
        comp.condition(COVERAGE, True, "AllInControlPlaneAPI")
    ceph_names = [
        name
        for index, pool in enumerate(storage)
        for name in _ceph_on(
            comp, tenant, settings, pool, first=index == 0, manila=spec.services.manila
        )
    ]
    for pool in pools:
        if pool.composite is not None:
            comp.protect(
                pool.composite,
                by=CONTROL_PLANE,
                as_name=f"{pool.role}-{pool.name}",
                reason=f"OpenStack cluster {tenant} runs on {pool.role} pool {pool.name}",
            )
    _endpoints(comp, tenant, settings)
    return {"control plane": [CONTROL_PLANE], "ceph": ceph_names}


def _ceph_on(
    comp: Composition, tenant: str, settings: Settings, pool: Pool, *, first: bool, manila: bool
) -> list[str]:
    """The tenant's RBD pools and Ceph client on storage pool ``pool``.

    Every named storage pool gets them (a cluster naming two wants both). The first keeps the
    composition names it always had (``ceph-volumes``...): renaming would replace the Ceph
    pools holding the tenant's volumes. The others' names end with the pool's name. CephFS for
    manila goes on the first only: one share service, one filesystem.
    """
    assert pool.quotas is not None  # _with_quotas
    target = ceph.StoragePool(
        provider_config=str(pool.provider_config),
        replication=pool.replication or Ceph().replicationFactor,
        device_class=pool.device_class or Ceph().deviceClass,
        quotas=Quotas.of_sizes({p: to_bytes(pool.quotas[p]) for p in POOLS}),
    )
    suffix = "" if first else f"-{pool.name}"
    composed = []
    for name, manifest in ceph.ceph_manifests(
        tenant, settings.cephNamespace, target, manila=manila and first
    ).items():
        add_object(
            comp, name + suffix, manifest, provider_config=target.provider_config, component="ceph"
        )
        composed.append(name + suffix)
    return composed


def _endpoints(comp: Composition, tenant: str, settings: Settings) -> None:
    """Endpoints once the ControlPlane reports the service ready (remembered after)."""
    assert settings.controlPlane is not None
    known = public_endpoints(tenant, settings.controlPlane)
    services = wrapped(comp, CONTROL_PLANE, "status.services") or []
    ready = {s.get("name") for s in services if isinstance(s, dict) and s.get("ready") is True}
    for service, url in known.items():
        comp.remember(f"endpoints.{service}", url if service in ready else None)
