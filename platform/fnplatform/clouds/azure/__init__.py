"""Cloud module: azure (provider-upjet-azure, cluster-scoped ``*.azure.upbound.io`` kinds).

Importing it registers the Azure builders of the cluster capabilities: VNet and subnet (a
private cluster's subnet egresses through a composed NAT gateway, a public one through AKS's
load balancer; see :mod:`.network`), AKS with workload identity, node pools, public and
private DNS zones, and a user-assigned identity federated with a Kubernetes service account.

Everything lands in the existing resource group named by the composite's ``planeId`` label.
"""

from fnplatform.clouds.azure import (
    bucket,
    cdn,
    cluster,
    database,
    dns,
    failover,
    identity,
    ingress,
    key,
    network,
    resource_group,
)

__all__ = [
    "bucket",
    "cdn",
    "cluster",
    "database",
    "dns",
    "failover",
    "identity",
    "ingress",
    "key",
    "network",
    "resource_group",
]
