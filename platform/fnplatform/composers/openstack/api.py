"""The openstack module's four APIs (``tools/generate_apis.py`` writes one XRD each).

Pools in ``crossplane.c5c3.io``; the tenant cluster in ``c5c3.io``, the CobaltCore operator's
group. Its composite kind ``XOpenStackCluster`` and claim kind ``OpenStackCluster`` don't
collide with the operator's kinds there (ControlPlane, CredentialRotation, KeystoneService,
SecretAggregate at C5C3/cobaltcore ``da0515f0380a``); ``tests/test_openstack.py`` checks it.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

from fnplatform.api.xrd import ApiDefinition
from fnplatform.composers.openstack.model import (
    ControlPlaneClusterSpec,
    HypervisorClusterSpec,
    OpenStackClusterSpec,
    OpenStackClusterStatus,
    PoolStatus,
    StorageClusterSpec,
)

POOL_GROUP = "crossplane.c5c3.io"
TENANT_GROUP = "c5c3.io"
VERSION = "v1alpha1"
READY = {
    "name": "Ready",
    "type": "string",
    "jsonPath": ".status.conditions[?(@.type=='Ready')].status",
}
PHASE = {"name": "Phase", "type": "string", "jsonPath": ".status.phase"}
REGION = {"name": "Region", "type": "string", "jsonPath": ".spec.region"}
AGE = {"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"}
SHOOT = {"name": "Shoot", "type": "string", "jsonPath": ".status.clusterName"}
NODES = {"name": "Nodes", "type": "integer", "jsonPath": ".status.nodeCount"}


def _pool(kind: str, spec_model: type[BaseModel], *columns: dict[str, Any]) -> ApiDefinition:
    """A pool's API: composite ``X<kind>`` and claim ``<kind>`` in the pool group, plurals in
    lowercase, the pools' one status, and the pools' columns with ``columns`` after the nodes."""
    return ApiDefinition(
        group=POOL_GROUP,
        version=VERSION,
        kind=f"X{kind}",
        plural=f"x{kind.lower()}s",
        claim_kind=kind,
        claim_plural=f"{kind.lower()}s",
        spec_model=spec_model,
        status_model=PoolStatus,
        printer_columns=(REGION, SHOOT, NODES, *columns, PHASE, READY, AGE),
    )


CONTROL_PLANE_CLUSTER = _pool("ControlPlaneCluster", ControlPlaneClusterSpec)
HYPERVISOR_CLUSTER = _pool("HypervisorCluster", HypervisorClusterSpec)
STORAGE_CLUSTER = _pool(
    "StorageCluster",
    StorageClusterSpec,
    {"name": "Capacity", "type": "string", "jsonPath": ".status.capacity"},
)
OPENSTACK_CLUSTER = ApiDefinition(
    group=TENANT_GROUP,
    version=VERSION,
    kind="XOpenStackCluster",
    plural="xopenstackclusters",
    claim_kind="OpenStackCluster",
    claim_plural="openstackclusters",
    spec_model=OpenStackClusterSpec,
    status_model=OpenStackClusterStatus,
    printer_columns=(
        REGION,
        {"name": "Size", "type": "string", "jsonPath": ".spec.size"},
        PHASE,
        READY,
        {
            "name": "Keystone",
            "type": "string",
            "jsonPath": ".status.endpoints.keystone",
            "priority": 1,
        },
        AGE,
    ),
)

APIS = (CONTROL_PLANE_CLUSTER, HYPERVISOR_CLUSTER, STORAGE_CLUSTER, OPENSTACK_CLUSTER)
