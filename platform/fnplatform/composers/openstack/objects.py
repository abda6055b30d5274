"""The kinds this module applies inside other clusters, declared once with their traits.

Every manifest this module composes is a provider-kubernetes ``Object`` aimed at a
ProviderConfig: the garden's for Shoots, the management cluster's for the access refreshers,
a pool's for what runs inside it (``fnplatform.library.kubernetes.add_object``). A wrapped kind
registered ``stateful`` makes its Object stateful (never dropped on a transient problem), and
its ``object_readiness`` says when the Object is ready.
"""

from __future__ import annotations

from typing import Any

from fnplatform.composition import Composition
from fnplatform.kinds import register
from fnplatform.library.kubernetes import ObjectReadiness

SHOOT_READY = (
    "has(object.status) && has(object.status.lastOperation)"
    " && object.status.lastOperation.type in ['Create', 'Reconcile']"
    " && object.status.lastOperation.state == 'Succeeded'"
    " && has(object.status.observedGeneration)"
    " && object.status.observedGeneration == object.metadata.generation"
)
CONDITION_READY = (
    "has(object.status) && has(object.status.conditions) && "
    "object.status.conditions.exists(c, c.type == 'Ready' && c.status == 'True')"
)
#: Rook reports ``status.phase: Ready`` on pools, clients and filesystems (no conditions).
ROOK_READY = "has(object.status) && has(object.status.phase) && object.status.phase == 'Ready'"
#: A CephCluster whose OSDs Rook encrypts: ``storage.config.encryptedDevice: "true"`` (host
#: devices; the config map holds strings) or every ``storageClassDeviceSets[].encrypted``
#: (PVCs). Rook's CephCluster CRD (``spec.storage``).
CEPH_ENCRYPTED_READY = (
    "has(object.spec) && has(object.spec.storage) && ("
    "(has(object.spec.storage.config) && 'encryptedDevice' in object.spec.storage.config"
    " && object.spec.storage.config.encryptedDevice == 'true')"
    " || (has(object.spec.storage.storageClassDeviceSets)"
    " && size(object.spec.storage.storageClassDeviceSets) > 0"
    " && object.spec.storage.storageClassDeviceSets.all(s, has(s.encrypted) && s.encrypted)))"
)


def _readiness(query: str) -> tuple[tuple[str, str], ...]:
    return tuple(sorted(ObjectReadiness.cel(query).items()))


# Shoots have no Ready condition: Gardener reports progress in status.lastOperation.
SHOOT = register(
    "core.gardener.cloud/v1beta1",
    "Shoot",
    managed=False,
    stateful=True,
    object_readiness=_readiness(SHOOT_READY),
)
# Deleting a ControlPlane drops the tenant's OpenStack (its databases with it).
CONTROL_PLANE = register(
    "c5c3.io/v1alpha1",
    "ControlPlane",
    managed=False,
    stateful=True,
    object_readiness=_readiness(CONDITION_READY),
)
# The tenant's data: RBD pools and the CephFS.
CEPH_BLOCK_POOL = register(
    "ceph.rook.io/v1",
    "CephBlockPool",
    managed=False,
    stateful=True,
    object_readiness=_readiness(ROOK_READY),
)
CEPH_FILESYSTEM = register(
    "ceph.rook.io/v1",
    "CephFilesystem",
    managed=False,
    stateful=True,
    object_readiness=_readiness(ROOK_READY),
)
# Read only (observe-only Object): the storage operator's; its encryption is checked.
CEPH_ENCRYPTED = register(
    "ceph.rook.io/v1",
    "CephCluster",
    managed=False,
    object_readiness=_readiness(CEPH_ENCRYPTED_READY),
)
CEPH_CLIENT = register(
    "ceph.rook.io/v1", "CephClient", managed=False, object_readiness=_readiness(ROOK_READY)
)


def wrapped(comp: Composition, name: str, path: str) -> Any:
    """A field of the object ``name`` wraps, as provider-kubernetes last observed it."""
    return comp.observed_value(name, f"status.atProvider.manifest.{path}")
