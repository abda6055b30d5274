"""Azure-only knobs a platform team may set in the environment under ``azure``.

All optional, with production defaults; the cloud-agnostic composers never need to know them.
"""

from __future__ import annotations

import ipaddress
from typing import Annotated, Literal

from pydantic import AfterValidator, BaseModel, ConfigDict, Field

from fnplatform.api.validation import SecretKeyRef, check_cidr, describe_pattern, parse
from fnplatform.api.xrd import ordered
from fnplatform.composition import Composition

#: The private ranges Key Vault's network rules refuse.
RFC1918 = tuple(
    ipaddress.IPv4Network(text) for text in ("10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16")
)


def check_vault_ip_rule(value: str) -> str:
    """A range Key Vault's firewall takes: public IPv4 only (no IPv6 rules, and private
    ranges are refused: private callers reach a vault through a private endpoint)."""
    check_cidr(value)
    network = ipaddress.ip_network(value)
    if network.version != 4:
        msg = "must be an IPv4 range: Key Vault's firewall has no IPv6 rules"
        raise ValueError(msg)
    if any(network.overlaps(private) for private in RFC1918):
        msg = "must be a public range: Key Vault's firewall refuses private addresses"
        raise ValueError(msg)
    return value


#: An IPv4 CIDR range for a Key Vault network rule.
VaultIpRule = Annotated[str, AfterValidator(check_vault_ip_rule)]


class SystemPool(BaseModel):
    """``environment.azure.systemPool``: the AKS system node pool (critical add-ons only)."""

    model_config = ConfigDict(extra="forbid")

    vmSize: str | None = Field(None, min_length=1)
    minCount: int = Field(2, ge=1, le=1000)  # two nodes: no single point of failure
    maxCount: int = Field(3, ge=1, le=1000)

    _ordered = ordered("minCount", "maxCount")


VNET_ID = (
    r"^/subscriptions/[^/]+/resourceGroups/[^/]+/providers/Microsoft\.Network/"
    r"virtualNetworks/[^/]+$"
)
SUBNET_ID = VNET_ID.removesuffix("$") + r"/subnets/[^/]+$"


class AzurePrivateNetwork(BaseModel):
    """``env.azure.privateNetworks.<region>``: the VNet databases of the region join (owned by
    the platform team); passed to the builder in ``DatabaseSpec.network``."""

    model_config = ConfigDict(extra="forbid")

    virtualNetworkId: str = Field(
        pattern=describe_pattern(
            VNET_ID,
            "a virtual network id: /subscriptions/<id>/resourceGroups/<group>/providers/"
            "Microsoft.Network/virtualNetworks/<name>",
        ),
    )
    #: A subnet delegated to Microsoft.DBforPostgreSQL/flexibleServers.
    databaseSubnetId: str = Field(
        pattern=describe_pattern(
            SUBNET_ID, "a subnet id: the virtual network id, then /subnets/<name>"
        ),
    )


class ClusterIdentity(BaseModel):
    """``environment.azure.clusterIdentity``: who Crossplane's Helm and Kubernetes providers
    are on an AKS cluster with local accounts disabled (Entra ID only)."""

    model_config = ConfigDict(extra="forbid")

    type: Literal["AzureWorkloadIdentityCredentials", "AzureServicePrincipalCredentials"] = (
        "AzureWorkloadIdentityCredentials"
    )
    #: The credentials file provider-helm/-kubernetes read (clientID, tenantID, ...).
    secretRef: SecretKeyRef
    #: The identity's Entra object id: granted "Azure Kubernetes Service RBAC Cluster Admin".
    principalId: str = Field(min_length=1)


DNS_ZONE_ID = (
    r"^/subscriptions/[^/]+/resourceGroups/([^/]+)/providers/Microsoft\.Network/"
    r"dns[Zz]ones/([a-z0-9.-]+)$"
)


class AzureCdnDomains(BaseModel):
    """``env.azure.cdnDomains``: DNS for Front Door's custom domains."""

    model_config = ConfigDict(extra="forbid")

    #: The Azure DNS zone holding the custom domains: each host's ``_dnsauth`` TXT record
    #: (Front Door's domain validation) and its CNAME to the endpoint are composed into it.
    #: Unset: the claim says which records the platform must create.
    dnsZoneId: str | None = Field(
        None,
        pattern=describe_pattern(
            DNS_ZONE_ID,
            "a DNS zone id: /subscriptions/<id>/resourceGroups/<group>/providers/"
            "Microsoft.Network/dnsZones/<zone>",
        ),
    )


class AzureEnvironment(BaseModel):
    """``env.azure``."""

    model_config = ConfigDict(extra="ignore")

    systemPool: SystemPool = Field(default_factory=SystemPool)
    #: Required: AKS clusters have local accounts disabled, so the providers need an identity.
    clusterIdentity: ClusterIdentity | None = None
    #: CIDRs allowed to reach a public cluster's API server (the management cluster's egress,
    #: so Crossplane's Helm and Kubernetes providers can): required for public clusters.
    apiServerAuthorizedIpRanges: list[str] | None = Field(None, min_length=1)
    #: The subscription id, for scopes of role assignments (``/subscriptions/<id>/...``).
    subscriptionId: str | None = Field(None, min_length=1)
    cdnDomains: AzureCdnDomains = Field(default_factory=AzureCdnDomains)
    #: The Entra tenant of Key Vaults (keys for storage encryption).
    tenantId: str | None = Field(None, min_length=1)
    #: Object id of the Crossplane provider's principal: it creates and rotates vault keys,
    #: which a vault's creator may not do without an access policy of its own.
    keyVaultAdminObjectId: str | None = Field(None, min_length=1)
    #: The platform's Azure ProviderConfig sets ``storageUseAzureAD: true``: the provider reads
    #: and writes storage data planes with its Entra identity, not the account key. Only then
    #: may composed storage accounts refuse Shared Key (``sharedAccessKeyEnabled: false``):
    #: with key access off, a provider using keys gets 403 KeyBasedAuthenticationNotPermitted
    #: on every read of the account's blob properties.
    storageUseAzureAD: bool = False
    #: The Crossplane provider's egress ranges (IPv4 CIDR). Set: Key Vaults deny every other
    #: network (``networkAcls.defaultAction: Deny``); trusted Azure services, such as Storage
    #: unwrapping its customer-managed key with the account's identity, bypass the firewall.
    #: Unset: vaults accept any network (Azure's default), since the provider manages keys on
    #: the vault's data plane from wherever it runs.
    keyVaultAllowedIpRanges: list[VaultIpRule] | None = Field(None, min_length=1)


def azure_environment(comp: Composition) -> AzureEnvironment:
    """The parsed ``azure`` environment block; an InputError names any bad field."""
    raw = comp.env.get("azure")
    return parse(AzureEnvironment, raw if raw is not None else {}, "environment.azure")
