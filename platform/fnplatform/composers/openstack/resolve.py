"""Finding the pools an OpenStack cluster names, and whether it may use each.

Pools are claims in the region's pool namespace; their composites have generated names, so
each is fetched as a required resource selected by the ``crossplane.io/claim-name`` and
``crossplane.io/claim-namespace`` labels Crossplane puts on every claim's composite.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from pydantic import ValidationError

from fnplatform.composers.openstack.gardener import provider_config_name
from fnplatform.composers.openstack.model import Ceph, StorageQuota
from fnplatform.composers.openstack.quota import POOLS
from fnplatform.composition import Composition
from fnplatform.merge import get_path
from fnplatform.observation.resources import condition_message
from fnplatform.request.requirements import (
    CLAIM_NAME_LABEL,
    CLAIM_NAMESPACE_LABEL,
    Requirement,
    claim_requirement,
)
from fnplatform.rules.dependencies import PROTECTS_LABEL, protects

POOL_API = "crossplane.c5c3.io/v1alpha1"
POOL_KINDS = {
    "hypervisor": "XHypervisorCluster",
    "storage": "XStorageCluster",
    "control-plane": "XControlPlaneCluster",
}
READY, NOT_READY, MISSING = "Ready", "NotReady", "Missing"
WRONG_REGION, DEDICATED, UNENCRYPTED = "WrongRegion", "Dedicated", "Unencrypted"
DEDICATED_LABEL, TENANT_LABEL = "dedicated", "tenant"
USAGE_API, COMPOSITE_LABEL = "protection.crossplane.io/v1beta1", "crossplane.io/composite"


@dataclass(frozen=True)
class Pool:
    """One referenced pool and what was found about it."""

    role: str  # hypervisor, storage or control-plane
    name: str  # the pool's claim name
    state: str
    reason: str = ""
    composite: dict[str, Any] | None = None
    provider_config: str | None = None
    node_count: int | None = None
    capacity: str | None = None
    replication: int | None = None  # storage pools: what tenants' Ceph pools are made of
    device_class: str | None = None
    encrypted: bool | None = None  # storage pools: OSDs encrypted (declared, Ready = seen)
    #: Dedicated without a tenant label: it belongs to the one OpenStack cluster using it.
    exclusive: bool = False
    #: Dedicated to this tenant (by label, or exclusive): its quotas may take all of it.
    dedicated: bool = False
    #: The tenant's quotas here as status remembers them (a pool no longer fetched).
    quotas: dict[str, str] | None = None
    quota_reason: str | None = None

    @property
    def usable(self) -> bool:
        return self.state == READY

    def held_by(self, owner: str) -> Pool:
        """This exclusive pool, unusable because OpenStack cluster ``owner`` holds it."""
        return replace(
            self, state=DEDICATED, reason=f"dedicated to one OpenStack cluster, held by {owner}"
        )

    def with_state(self, current: Pool) -> Pool:
        """This (remembered) pool with ``current``'s state, keeping what only memory knows."""
        return replace(
            self,
            state=current.state,
            reason=current.reason,
            composite=current.composite if current.composite is not None else self.composite,
            node_count=current.node_count or self.node_count,
            capacity=current.capacity or self.capacity,
        )

    def describe(self) -> str:
        """``hypervisor pool hv-pool-a: not ready (...)``."""
        return f"{self.role} pool {self.name}: {self.reason}"

    def status(self) -> dict[str, Any]:
        """The pool's entry in ``status.consumedPools``."""
        entry: dict[str, Any] = {"name": self.name, "status": self.state}
        if self.reason:
            entry["reason"] = self.reason
        if self.provider_config:
            entry["providerConfig"] = self.provider_config
        if self.composite is not None:
            entry["composite"] = get_path(self.composite, "metadata.name")
        if self.node_count is not None:
            entry["nodeCount"] = self.node_count
        if self.capacity is not None:
            entry["availableCapacity"] = self.capacity
        if self.replication is not None:
            entry["replicationFactor"] = self.replication
        if self.device_class is not None:
            entry["deviceClass"] = self.device_class
        if self.encrypted is not None:
            entry["encrypted"] = self.encrypted
        if self.quotas is not None:
            entry["quotas"] = dict(self.quotas)
        if self.quota_reason:
            entry["quotaReason"] = self.quota_reason
        return entry


def fetch(comp: Composition, role: str, name: str, namespace: str) -> list[dict[str, Any]] | None:
    """Declare the requirement for one pool; its composites, or None when not fetched yet."""
    return comp.require(
        claim_requirement(f"pool-{role}-{name}", POOL_API, POOL_KINDS[role], name, namespace)
    )


def judge(
    role: str,
    name: str,
    found: list[dict[str, Any]],
    *,
    namespace: str,
    region: str,
    tenant: str | None,
    encryption: bool = False,
) -> Pool:
    """Whether this tenant may consume the pool, and why not."""
    if not found:
        return Pool(
            role,
            name,
            MISSING,
            f"no {POOL_KINDS[role][1:]} claim {name!r} in namespace {namespace!r}",
        )
    composite = found[0]
    spec = _map(composite.get("spec"))  # plain reads: this runs for every pool, every pass
    labels = _map(spec.get("labels"))
    pool_region = str(spec.get("region") or "")
    pc = provider_config_name(pool_region, str(spec.get("name") or name))
    workers = spec.get("workers") if isinstance(spec.get("workers"), int) else None
    known: dict[str, Any] = {"composite": composite, "provider_config": pc, "node_count": workers}
    if role == "storage":
        ceph = _ceph(spec.get("ceph"))
        known |= {
            "capacity": ceph.targetCapacity,
            "replication": ceph.replicationFactor,
            "device_class": ceph.deviceClass,
            "encrypted": ceph.encrypted,
        }
    if pool_region != region:
        return Pool(
            role,
            name,
            WRONG_REGION,
            f"in region {pool_region or '(none)'!r}, not {region!r}",
            **known,
        )
    dedicated = str(labels.get(DEDICATED_LABEL, "")).lower() == "true"
    owner = labels.get(TENANT_LABEL)
    if dedicated and owner is not None and owner != tenant:
        return Pool(role, name, DEDICATED, f"dedicated to tenant {owner!r}", **known)
    known["exclusive"] = dedicated and owner is None
    known["dedicated"] = dedicated
    if encryption and role == "storage" and not known["encrypted"]:
        return Pool(
            role,
            name,
            UNENCRYPTED,
            "not encrypted (its spec.ceph.encrypted is "
            "false) and spec.encryptedStorage requires encrypted storage pools",
            **known,
        )
    if not _ready(composite):
        return Pool(role, name, NOT_READY, f"not ready ({condition_message(composite)})", **known)
    return Pool(role, name, READY, **known)


def fetch_holders(comp: Composition, pool: Pool) -> list[dict[str, Any]] | None:
    """The Usages of any composite protecting ``pool`` (None until Crossplane fetched them).

    Every OpenStack cluster protects the pools it runs on with a Usage labelled with the pool
    (:data:`fnplatform.rules.dependencies.PROTECTS_LABEL`), so this is who uses the pool now.
    """
    assert pool.composite is not None
    kind = "Usage" if comp.namespaced else "ClusterUsage"
    return comp.require(
        Requirement(
            f"holders-{pool.role}-{pool.name}",
            USAGE_API,
            kind,
            match_labels=((PROTECTS_LABEL, protects(pool.composite)),),
        )
    )


def _owner(usage: dict[str, Any]) -> tuple[str | None, str, str]:
    """(composite, namespace, name) of the claim (or namespaced composite) owning ``usage``,
    from the labels Crossplane puts on every composed resource."""
    metadata = _map(usage.get("metadata"))
    labels = _map(metadata.get("labels"))
    composite = labels.get(COMPOSITE_LABEL)
    namespace = labels.get(CLAIM_NAMESPACE_LABEL) or metadata.get("namespace", "")
    return composite, str(namespace), str(labels.get(CLAIM_NAME_LABEL) or composite)


def same_name_elsewhere(
    comp: Composition, usages: list[dict[str, Any]], tenant: str, namespace: str | None
) -> str | None:
    """Another namespace's OpenStack cluster named ``tenant`` among the owners of ``usages``.

    Tenants are named by their claim's name alone in what they share (the namespace
    ``openstack-<tenant>`` in the control-plane cluster, the Ceph pools ``<tenant>-*`` on the
    storage pools), so two namespaces' clusters of one name would share those.
    """
    for usage in usages:
        composite, other_namespace, name = _owner(usage)
        if composite not in (None, comp.name) and name == tenant and other_namespace != namespace:
            return f"{other_namespace}/{name}"
    return None


def other_holder(comp: Composition, usages: list[dict[str, Any]]) -> str | None:
    """The claim (namespace/name) of another composite among ``usages``' owners, if any."""
    for usage in usages:
        composite, namespace, name = _owner(usage)
        if composite not in (None, comp.name):
            return f"{namespace}/{name}"
    return None


def _ceph(raw: Any) -> Ceph:
    """The pool's Ceph settings with the API's defaults (the pool composer validated them)."""
    try:
        return Ceph.model_validate(raw if isinstance(raw, dict) else {})
    except ValidationError:
        return Ceph()


def _quotas(raw: Any) -> dict[str, str] | None:
    """Remembered quotas, when status holds all three as quantities (else computed anew)."""
    if not isinstance(raw, dict):
        return None
    try:
        quotas = StorageQuota.model_validate(raw).model_dump(exclude_none=True)
    except ValidationError:
        return None
    return quotas if set(quotas) == set(POOLS) else None


def _map(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _ready(composite: dict[str, Any]) -> bool:
    conditions = _map(composite.get("status")).get("conditions")
    return isinstance(conditions, list) and any(
        isinstance(c, dict) and c.get("type") == "Ready" and c.get("status") == "True"
        for c in conditions
    )


def remembered(comp: Composition, role: str, entry: dict[str, Any]) -> Pool:
    """A pool as ``status`` remembers it from the last pass that could use it."""
    composite = None
    if entry.get("composite"):
        composite = {
            "apiVersion": POOL_API,
            "kind": POOL_KINDS[role],
            "metadata": {"name": entry["composite"]},
        }
    return Pool(
        role,
        str(entry.get("name")),
        str(entry.get("status") or READY),
        str(entry.get("reason") or ""),
        composite=composite,
        provider_config=entry.get("providerConfig"),
        node_count=entry.get("nodeCount"),
        capacity=entry.get("availableCapacity"),
        replication=entry.get("replicationFactor"),
        device_class=entry.get("deviceClass"),
        encrypted=entry.get("encrypted"),
        quotas=_quotas(entry.get("quotas")),
        quota_reason=entry.get("quotaReason"),
    )
