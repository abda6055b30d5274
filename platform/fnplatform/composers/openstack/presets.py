"""Size presets: replicas of an OpenStack cluster's control-plane services per ``spec.size``.

The design source (C5C3 ``docs/07-crossplane/02-openstack-provisioning.md``, the OpenStack
Composition's map transforms) fixes three rows: mariadb, keystone and nova-api. **Every other
row is ours**, chosen to scale with them; the c5c3 ControlPlane API has no nova today, so the
nova-api row only shows up in status and the ServicesNotInControlPlane condition.
"""

from __future__ import annotations

from dataclasses import dataclass

from fnplatform.composers.openstack.model import Size


@dataclass(frozen=True)
class Preset:
    """Replicas for one size."""

    mariadb: int  # design source
    keystone: int  # design source
    nova_api: int  # design source
    memcached: int  # ours
    glance: int  # ours
    placement: int  # ours
    horizon: int  # ours
    barbican: int  # ours


PRESETS: dict[Size, Preset] = {
    "small": Preset(
        mariadb=1, keystone=1, nova_api=1, memcached=1, glance=1, placement=1, horizon=1, barbican=1
    ),
    "medium": Preset(
        mariadb=3, keystone=3, nova_api=3, memcached=3, glance=2, placement=2, horizon=2, barbican=2
    ),
    "large": Preset(
        mariadb=3, keystone=3, nova_api=5, memcached=3, glance=3, placement=3, horizon=2, barbican=2
    ),
    "xlarge": Preset(
        mariadb=5, keystone=5, nova_api=7, memcached=5, glance=5, placement=5, horizon=3, barbican=3
    ),
}


#: Logical bytes each of a tenant's RBD pools may hold, per size (Ceph pool quotas,
#: ``CephBlockPool.spec.quotas.maxSize``). **Ours**: the design names "Quotas per pool" as
#: the isolation of shared storage pools without figures. A region overrides any of them in
#: its EnvironmentConfig (``storageQuotas.<size>.<pool>``).
QUOTAS: dict[Size, dict[str, str]] = {
    "small": {"volumes": "2Ti", "images": "500Gi", "ephemeral": "1Ti"},
    "medium": {"volumes": "10Ti", "images": "1Ti", "ephemeral": "4Ti"},
    "large": {"volumes": "50Ti", "images": "2Ti", "ephemeral": "10Ti"},
    "xlarge": {"volumes": "200Ti", "images": "5Ti", "ephemeral": "40Ti"},
}
