"""A tenant's Ceph pool quotas on one storage pool: the size preset, the region's override,
and the cap that keeps one tenant from taking a shared pool's whole capacity.

Ceph counts a pool quota (``ceph osd pool set-quota <pool> max_bytes``, Rook's
``CephBlockPool.spec.quotas.maxSize``) in logical bytes, before replication; a storage pool's
``ceph.targetCapacity`` is raw. So the raw share a tenant's quotas take is each quota times
its pool's replicas (the ephemeral pool has at most two), and that must stay within
``maxTenantShare`` percent of a shared pool's raw capacity (all of it for a pool dedicated to
the tenant). Above it every quota is scaled down by the same factor (then rounded down to whole
TiB, or GiB below 10 TiB), and the reason is said in status.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from decimal import Decimal

from fnplatform.composers.openstack.model import Settings, Size
from fnplatform.composers.openstack.presets import QUOTAS

_UNITS = {
    "": 1,
    "k": 10**3,
    "M": 10**6,
    "G": 10**9,
    "T": 10**12,
    "P": 10**15,
    "E": 10**18,
    "Ki": 2**10,
    "Mi": 2**20,
    "Gi": 2**30,
    "Ti": 2**40,
    "Pi": 2**50,
    "Ei": 2**60,
}
_QUANTITY = re.compile(r"^([0-9]+(?:\.[0-9]+)?)(Ki|Mi|Gi|Ti|Pi|Ei|k|M|G|T|P|E)?$")
GIB, TIB = 2**30, 2**40
POOLS = ("volumes", "images", "ephemeral")


def to_bytes(quantity: str) -> int:
    """Bytes of a Kubernetes quantity such as ``500Ti`` (the API's pattern allows no other)."""
    match = _QUANTITY.match(quantity)
    if match is None:
        msg = f"not a quantity: {quantity!r}"
        raise ValueError(msg)
    return int(Decimal(match.group(1)) * _UNITS[match.group(2) or ""])


def quantity(size: int) -> str:
    """``size`` bytes as the largest binary unit dividing it (``50Ti``, ``1536Gi``)."""
    for unit in ("Pi", "Ti", "Gi", "Mi", "Ki"):  # largest first
        if size % _UNITS[unit] == 0:
            return f"{size // _UNITS[unit]}{unit}"
    return str(size)


@dataclass(frozen=True)
class Quotas:
    """The tenant's quota per RBD pool (bytes) on one storage pool, and why it was cut."""

    volumes: int
    images: int
    ephemeral: int
    reason: str = ""

    @classmethod
    def of_sizes(cls, sizes: dict[str, int], reason: str = "") -> Quotas:
        """From bytes per pool name (:data:`POOLS`)."""
        return cls(
            volumes=sizes["volumes"],
            images=sizes["images"],
            ephemeral=sizes["ephemeral"],
            reason=reason,
        )

    def of(self, pool: str) -> int:
        return int(getattr(self, pool))

    def status(self) -> dict[str, str]:
        return {pool: quantity(self.of(pool)) for pool in POOLS}


def _floor(size: int) -> int:
    """``size`` down to whole TiB from 10 TiB (a quota reads ``71Ti``, not ``73669Gi``), else
    whole GiB, at least 1 GiB."""
    unit = TIB if size >= 10 * TIB else GIB
    return max(GIB, size // unit * unit)


def replicas(pool: str, replication: int) -> int:
    """Replicas of the tenant's RBD pool ``pool`` (ephemeral: the design's two, at most)."""
    return min(2, replication) if pool == "ephemeral" else replication


def tenant_quotas(
    size: Size,
    settings: Settings,
    *,
    replication: int,
    capacity: str | None,
    dedicated: bool,
    storage_pool: str,
) -> Quotas:
    """The quotas of a ``size`` tenant on a storage pool of ``capacity`` (raw)."""
    preset = dict(QUOTAS[size])
    override = settings.storageQuotas.get(size)
    if override is not None:
        preset |= override.model_dump(exclude_none=True)
    wanted = {pool: to_bytes(preset[pool]) for pool in POOLS}
    if capacity is None:
        return Quotas.of_sizes(wanted)
    share = 100 if dedicated else settings.maxTenantShare
    limit = to_bytes(capacity) * share // 100
    raw = sum(wanted[p] * replicas(p, replication) for p in POOLS)
    if raw <= limit:
        return Quotas.of_sizes(wanted)
    cut = {p: _floor(wanted[p] * limit // raw) for p in POOLS}
    kind = "dedicated" if dedicated else "shared"
    return Quotas.of_sizes(
        cut,
        reason=(
            f"the {size} preset's quotas take {quantity(raw // GIB * GIB)} raw with "
            f"{replication} replicas, more than the {share}% of the {kind} storage pool "
            f"{storage_pool} ({capacity}) one tenant may take: each cut to "
            f"{limit * 100 // raw}%"
        ),
    )
