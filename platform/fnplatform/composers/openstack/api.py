"""The openstack module's four APIs (``tools/generate_apis.py`` writes one XRD each).

Pools in ``crossplane.c5c3.io``; the tenant cluster in ``c5c3.io``, the CobaltCore operator's
group. Its composite kind ``XOpenStackCluster`` and claim kind ``OpenStackCluster`` don't
collide with the operator's kinds there (ControlPlane, CredentialRotation, KeystoneService,
SecretAggregate at C5C3/cobaltcore ``da0515f0380a``); ``tests/test_openstack.py`` checks it.
"""

from __future__ import annotations

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

CONTROL_PLANE_CLUSTER = ApiDefinition(
    group=POOL_GROUP,
    version=VERSION,
    kind="XControlPlaneCluster",
    plural="xcontrolplaneclusters",
    claim_kind="ControlPlaneCluster",
    claim_plural="controlplaneclusters",
    spec_model=ControlPlaneClusterSpec,
    status_model=PoolStatus,
    printer_columns=(REGION, SHOOT, NODES, PHASE, READY, AGE),
)
HYPERVISOR_CLUSTER = ApiDefinition(
    group=POOL_GROUP,
    version=VERSION,
    kind="XHypervisorCluster",
    plural="xhypervisorclusters",
    claim_kind="HypervisorCluster",
    claim_plural="hypervisorclusters",
    spec_model=HypervisorClusterSpec,
    status_model=PoolStatus,
    printer_columns=(REGION, SHOOT, NODES, PHASE, READY, AGE),
)
STORAGE_CLUSTER = ApiDefinition(
    group=POOL_GROUP,
    version=VERSION,
    kind="XStorageCluster",
    plural="xstorageclusters",
    claim_kind="StorageCluster",
    claim_plural="storageclusters",
    spec_model=StorageClusterSpec,
    status_model=PoolStatus,
    printer_columns=(
        REGION,
        SHOOT,
        NODES,
        {"name": "Capacity", "type": "string", "jsonPath": ".status.capacity"},
        PHASE,
        READY,
        AGE,
    ),
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
