"""The Azure kinds the builders emit: storage versions of provider-upjet-azure v2.7.0.

Each kind is declared once with its traits (tag form, statefulness); see :mod:`fnplatform.kinds`.
"""

from __future__ import annotations

from fnplatform.clouds.azure.tags import AZURE_TAGS
from fnplatform.kinds import register

# Storage versions of provider-upjet-azure v2.7.0 (schemas/crds/provider-upjet-azure): upjet
# v1beta2 kinds carry nested blocks as objects, v1beta1 ones are flat.
VIRTUAL_NETWORK = register(
    "network.azure.upbound.io/v1beta2", "VirtualNetwork", tag_style=AZURE_TAGS
)
SUBNET = register("network.azure.upbound.io/v1beta2", "Subnet")  # Azure subnets have no tags
# Egress of private AKS clusters (see clouds/azure/network.py): all upjet v1beta1, flat.
PUBLIC_IP = register("network.azure.upbound.io/v1beta1", "PublicIP", tag_style=AZURE_TAGS)
NAT_GATEWAY = register("network.azure.upbound.io/v1beta1", "NATGateway", tag_style=AZURE_TAGS)
NAT_GATEWAY_PUBLIC_IP_ASSOCIATION = register(
    "network.azure.upbound.io/v1beta1", "NATGatewayPublicIPAssociation"
)
SUBNET_NAT_GATEWAY_ASSOCIATION = register(
    "network.azure.upbound.io/v1beta1", "SubnetNATGatewayAssociation"
)
KUBERNETES_CLUSTER = register(
    "containerservice.azure.upbound.io/v1beta2",
    "KubernetesCluster",
    tag_style=AZURE_TAGS,
    stateful=True,
)
NODE_POOL = register(
    "containerservice.azure.upbound.io/v1beta2",
    "KubernetesClusterNodePool",
    tag_style=AZURE_TAGS,
    stateful=True,
)
DNS_ZONE = register(
    "network.azure.upbound.io/v1beta2", "DNSZone", tag_style=AZURE_TAGS, stateful=True
)
PRIVATE_DNS_ZONE = register(
    "network.azure.upbound.io/v1beta2", "PrivateDNSZone", tag_style=AZURE_TAGS, stateful=True
)
PRIVATE_DNS_ZONE_LINK = register(
    "network.azure.upbound.io/v1beta1",
    "PrivateDNSZoneVirtualNetworkLink",
    tag_style=AZURE_TAGS,
)
USER_ASSIGNED_IDENTITY = register(
    "managedidentity.azure.upbound.io/v1beta1", "UserAssignedIdentity", tag_style=AZURE_TAGS
)
FEDERATED_IDENTITY_CREDENTIAL = register(
    "managedidentity.azure.upbound.io/v1beta1", "FederatedIdentityCredential"
)
FLEXIBLE_SERVER = register(
    "dbforpostgresql.azure.upbound.io/v1beta2",
    "FlexibleServer",
    tag_style=AZURE_TAGS,
    stateful=True,
)
FLEXIBLE_SERVER_DATABASE = register(
    "dbforpostgresql.azure.upbound.io/v1beta1", "FlexibleServerDatabase", stateful=True
)
FRONTDOOR_PROFILE = register(
    "cdn.azure.upbound.io/v1beta1", "FrontdoorProfile", tag_style=AZURE_TAGS
)
FRONTDOOR_ENDPOINT = register(
    "cdn.azure.upbound.io/v1beta1", "FrontdoorEndpoint", tag_style=AZURE_TAGS
)
FRONTDOOR_ORIGIN_GROUP = register("cdn.azure.upbound.io/v1beta2", "FrontdoorOriginGroup")
FRONTDOOR_ORIGIN = register("cdn.azure.upbound.io/v1beta2", "FrontdoorOrigin")
FRONTDOOR_ROUTE = register("cdn.azure.upbound.io/v1beta2", "FrontdoorRoute")
FRONTDOOR_CUSTOM_DOMAIN = register("cdn.azure.upbound.io/v1beta2", "FrontdoorCustomDomain")
#: A custom domain's validation and its CNAME to the endpoint, in the platform's DNS zone.
DNS_TXT_RECORD = register("network.azure.upbound.io/v1beta1", "DNSTXTRecord", tag_style=AZURE_TAGS)
DNS_CNAME_RECORD = register(
    "network.azure.upbound.io/v1beta1", "DNSCNAMERecord", tag_style=AZURE_TAGS
)

# -- storage, keys, ingress, failover (contact-center and environment) ---------------------------
# A resource group takes everything in it when deleted; accounts, containers, vaults and keys
# hold (or unlock) the data: all stateful.
RESOURCE_GROUP = register(
    "azure.upbound.io/v1beta1", "ResourceGroup", tag_style=AZURE_TAGS, stateful=True
)
STORAGE_ACCOUNT = register(
    "storage.azure.upbound.io/v1beta2", "Account", tag_style=AZURE_TAGS, stateful=True
)
BLOB_CONTAINER = register("storage.azure.upbound.io/v1beta1", "Container", stateful=True)
CONTAINER_IMMUTABILITY_POLICY = register(
    "storage.azure.upbound.io/v1beta1", "ContainerImmutabilityPolicy"
)
KEY_VAULT = register(
    "keyvault.azure.upbound.io/v1beta2", "Vault", tag_style=AZURE_TAGS, stateful=True
)
KEY = register("keyvault.azure.upbound.io/v1beta2", "Key", tag_style=AZURE_TAGS, stateful=True)
KEY_VAULT_ACCESS_POLICY = register("keyvault.azure.upbound.io/v1beta1", "AccessPolicy")
ROLE_ASSIGNMENT = register("authorization.azure.upbound.io/v1beta1", "RoleAssignment")
NETWORK_SECURITY_GROUP = register(
    "network.azure.upbound.io/v1beta1", "SecurityGroup", tag_style=AZURE_TAGS
)
NETWORK_SECURITY_RULE = register("network.azure.upbound.io/v1beta1", "SecurityRule")
SUBNET_NSG_ASSOCIATION = register(
    "network.azure.upbound.io/v1beta1", "SubnetNetworkSecurityGroupAssociation"
)
LOG_WORKSPACE = register(
    "operationalinsights.azure.upbound.io/v1beta2",
    "Workspace",
    tag_style=AZURE_TAGS,
    stateful=True,
)
DIAGNOSTIC_SETTING = register("insights.azure.upbound.io/v1beta2", "MonitorDiagnosticSetting")
TRAFFIC_MANAGER_PROFILE = register(
    "network.azure.upbound.io/v1beta2", "TrafficManagerProfile", tag_style=AZURE_TAGS
)
TRAFFIC_MANAGER_EXTERNAL_ENDPOINT = register(
    "network.azure.upbound.io/v1beta1", "TrafficManagerExternalEndpoint"
)
