"""The ``openstack`` module: CobaltCore (C5C3) OpenStack clusters on shared Gardener pools.

One composer, four APIs, dispatched on the composite's kind: the region's control-plane
cluster, hypervisor pools and storage pools (each a Gardener Shoot plus the ProviderConfig
that reaches it), and tenant OpenStack clusters consuming them (a c5c3 ControlPlane in the
control-plane cluster, Ceph resources on a storage pool, ClusterUsages of every pool).
See docs/openstack.md.
"""

from __future__ import annotations

from collections.abc import Callable

from fnplatform.composers.openstack.pools import (
    compose_control_plane_cluster,
    compose_hypervisor_cluster,
    compose_storage_cluster,
)
from fnplatform.composers.openstack.tenant import compose_openstack_cluster
from fnplatform.composition import CLAIM_NAME, CLAIM_NAMESPACE, Composition
from fnplatform.errors import InputError

COMPOSERS: dict[str, Callable[[Composition], None]] = {
    "XControlPlaneCluster": compose_control_plane_cluster,
    "XHypervisorCluster": compose_hypervisor_cluster,
    "XStorageCluster": compose_storage_cluster,
    "XOpenStackCluster": compose_openstack_cluster,
}


def compose(comp: Composition) -> None:
    """Compose whichever of the module's four composites ``comp`` is."""
    if not (comp.composite.get("metadata") or {}).get("name"):
        raise InputError("metadata.name", "required: every composed name derives from it")
    if not (comp.claim_name and comp.namespace):
        # Pools are found by their claim's name and namespace; a tenant is its claim's namespace.
        raise InputError(
            "metadata.labels",
            f"{CLAIM_NAME} and {CLAIM_NAMESPACE} are required: "
            "the openstack APIs are used through their claims",
        )
    kind = str(comp.composite.get("kind") or "")
    composer = COMPOSERS.get(kind)
    if composer is None:
        raise InputError(
            "kind",
            f"the openstack module composes {', '.join(sorted(COMPOSERS))}"
            f", not {kind or 'a composite without kind'}",
        )
    composer(comp)
