"""A tenant's Ceph resources on one of its storage pools (Rook, ``ceph.rook.io/v1``).

Three RBD pools (volumes for cinder, images for glance, ephemeral disks for nova), one
``CephClient`` whose OSD and MGR caps name exactly those pools, and a ``CephFilesystem`` when
manila is enabled. Names start with the tenant's, so tenants sharing a storage pool never
collide in its ``rook-ceph`` namespace. Replication and device class come from the storage
pool's own ``ceph`` settings; the ephemeral pool keeps the design's two replicas (capped by
the pool's factor). Each RBD pool has a quota (``quota.py``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from fnplatform.composers.openstack.quota import Quotas, quantity, replicas

ROOK_API = "ceph.rook.io/v1"
BLOCK_POOLS = ("volumes", "images", "ephemeral")


@dataclass(frozen=True)
class StoragePool:
    """What a tenant's Ceph resources need from the storage pool they go on."""

    provider_config: str
    replication: int
    device_class: str
    quotas: Quotas


def _block_pool(name: str, namespace: str, pool: StoragePool, purpose: str) -> dict[str, Any]:
    ephemeral = purpose == "ephemeral"
    size = replicas(purpose, pool.replication)
    return {
        "apiVersion": ROOK_API,
        "kind": "CephBlockPool",
        "metadata": {"name": name, "namespace": namespace},
        "spec": {
            "failureDomain": "host",
            "deviceClass": pool.device_class,
            "replicated": {"size": size, "requireSafeReplicaSize": size > 1},
            "parameters": {"compression_mode": "none" if ephemeral else "aggressive"},
            # Ceph's pool quota (max_bytes, logical bytes): writes stop at it, so no tenant
            # fills a shared storage pool (quota.py).
            "quotas": {"maxSize": quantity(pool.quotas.of(purpose))},
        },
    }


def pool_names(tenant: str) -> dict[str, str]:
    """RBD pool name per purpose."""
    return {purpose: f"{tenant}-{purpose}" for purpose in BLOCK_POOLS}


def ceph_manifests(
    tenant: str, namespace: str, pool: StoragePool, *, manila: bool
) -> dict[str, dict[str, Any]]:
    """Composed-resource part name -> manifest."""
    names = pool_names(tenant)
    out = {f"ceph-{p}": _block_pool(n, namespace, pool, p) for p, n in names.items()}
    profile = ", ".join(f"profile rbd pool={names[p]}" for p in BLOCK_POOLS)
    out["ceph-client"] = {
        "apiVersion": ROOK_API,
        "kind": "CephClient",
        "metadata": {"name": f"openstack-{tenant}", "namespace": namespace},
        "spec": {"caps": {"mon": "profile rbd", "osd": profile, "mgr": profile}},
    }
    if manila:
        out["ceph-filesystem"] = {
            "apiVersion": ROOK_API,
            "kind": "CephFilesystem",
            "metadata": {"name": f"{tenant}-cephfs", "namespace": namespace},
            "spec": {
                "metadataPool": {"replicated": {"size": pool.replication}},
                "dataPools": [
                    {
                        "name": "data0",
                        "deviceClass": pool.device_class,
                        "replicated": {"size": pool.replication},
                    }
                ],
                "metadataServer": {"activeCount": 1, "activeStandby": True},
                # Rook deletes a filesystem and its pools with the CR by default; block pools
                # are safe (Rook refuses to delete a pool holding images or snapshots), the
                # manila shares' data must be too: deleting the tenant keeps it in Ceph.
                "preserveFilesystemOnDelete": True,
            },
        }
    return out
