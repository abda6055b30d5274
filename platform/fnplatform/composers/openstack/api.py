"""The openstack module's four APIs (``tools/generate_apis.py`` writes one XRD each).

Pools in ``crossplane.c5c3.io``; the tenant cluster in ``c5c3.io``, the CobaltCore operator's
group. Its composite kind ``XOpenStackCluster`` and claim kind ``OpenStackCluster`` don't
collide with the operator's kinds there (ControlPlane, CredentialRotation, KeystoneService,
SecretAggregate at C5C3/cobaltcore ``da0515f0380a``); ``tests/test_openstack.py`` checks it.
"""

from __future__ import annotations

from pydantic import BaseModel

from fnplatform.api.xrd import AGE_COLUMN, PHASE_COLUMN, READY_COLUMN, ApiDefinition, PrinterColumn
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
REGION = PrinterColumn("Region", ".spec.region")
SHOOT = PrinterColumn("Shoot", ".status.clusterName")
NODES = PrinterColumn("Nodes", ".status.nodeCount", "integer")


def _pool(kind: str, spec_model: type[BaseModel], *columns: PrinterColumn) -> ApiDefinition:
    """A pool's API: composite ``X<kind>`` and claim ``<kind>`` in the pool group, the pools'
    one status, and the pools' columns with ``columns`` after the nodes."""
    return ApiDefinition(
        group=POOL_GROUP,
        kind=f"X{kind}",
        claim_kind=kind,
        spec_model=spec_model,
        status_model=PoolStatus,
        printer_columns=(REGION, SHOOT, NODES, *columns, PHASE_COLUMN, READY_COLUMN, AGE_COLUMN),
    )


CONTROL_PLANE_CLUSTER = _pool("ControlPlaneCluster", ControlPlaneClusterSpec)
HYPERVISOR_CLUSTER = _pool("HypervisorCluster", HypervisorClusterSpec)
STORAGE_CLUSTER = _pool(
    "StorageCluster", StorageClusterSpec, PrinterColumn("Capacity", ".status.capacity")
)
OPENSTACK_CLUSTER = ApiDefinition(
    group=TENANT_GROUP,
    kind="XOpenStackCluster",
    claim_kind="OpenStackCluster",
    spec_model=OpenStackClusterSpec,
    status_model=OpenStackClusterStatus,
    printer_columns=(
        REGION,
        PrinterColumn("Size", ".spec.size"),
        PHASE_COLUMN,
        READY_COLUMN,
        PrinterColumn("Keystone", ".status.endpoints.keystone", priority=1),
        AGE_COLUMN,
    ),
)

APIS = (CONTROL_PLANE_CLUSTER, HYPERVISOR_CLUSTER, STORAGE_CLUSTER, OPENSTACK_CLUSTER)
