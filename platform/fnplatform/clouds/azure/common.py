"""What every Azure builder shares: the kinds it emits, the resource group and naming rules."""

from __future__ import annotations

import hashlib
import re
from typing import Any

from fnplatform.composition import Composition
from fnplatform.errors import InputError
from fnplatform.importing import EXTERNAL_NAME
from fnplatform.kinds import register
from fnplatform.tagging import TagStyle

# Storage versions of provider-upjet-azure v2.7.0 (schemas/crds/provider-upjet-azure): upjet
# v1beta2 kinds carry nested blocks as objects, v1beta1 ones are flat.
VIRTUAL_NETWORK = register(
    "network.azure.upbound.io/v1beta2", "VirtualNetwork", tag_style=TagStyle.AZURE
)
SUBNET = register("network.azure.upbound.io/v1beta2", "Subnet")  # Azure subnets have no tags
# Egress of private AKS clusters (see clouds/azure/network.py): all upjet v1beta1, flat.
PUBLIC_IP = register("network.azure.upbound.io/v1beta1", "PublicIP", tag_style=TagStyle.AZURE)
NAT_GATEWAY = register(
    "network.azure.upbound.io/v1beta1", "NATGateway", tag_style=TagStyle.AZURE
)
NAT_GATEWAY_PUBLIC_IP_ASSOCIATION = register(
    "network.azure.upbound.io/v1beta1", "NATGatewayPublicIPAssociation"
)
SUBNET_NAT_GATEWAY_ASSOCIATION = register(
    "network.azure.upbound.io/v1beta1", "SubnetNATGatewayAssociation"
)
KUBERNETES_CLUSTER = register(
    "containerservice.azure.upbound.io/v1beta2",
    "KubernetesCluster",
    tag_style=TagStyle.AZURE,
    stateful=True,
)
NODE_POOL = register(
    "containerservice.azure.upbound.io/v1beta2",
    "KubernetesClusterNodePool",
    tag_style=TagStyle.AZURE,
    stateful=True,
)
DNS_ZONE = register(
    "network.azure.upbound.io/v1beta2", "DNSZone", tag_style=TagStyle.AZURE, stateful=True
)
PRIVATE_DNS_ZONE = register(
    "network.azure.upbound.io/v1beta2", "PrivateDNSZone", tag_style=TagStyle.AZURE, stateful=True
)
PRIVATE_DNS_ZONE_LINK = register(
    "network.azure.upbound.io/v1beta1",
    "PrivateDNSZoneVirtualNetworkLink",
    tag_style=TagStyle.AZURE,
)
USER_ASSIGNED_IDENTITY = register(
    "managedidentity.azure.upbound.io/v1beta1", "UserAssignedIdentity", tag_style=TagStyle.AZURE
)
FEDERATED_IDENTITY_CREDENTIAL = register(
    "managedidentity.azure.upbound.io/v1beta1", "FederatedIdentityCredential"
)
FLEXIBLE_SERVER = register(
    "dbforpostgresql.azure.upbound.io/v1beta2",
    "FlexibleServer",
    tag_style=TagStyle.AZURE,
    stateful=True,
)
FLEXIBLE_SERVER_DATABASE = register(
    "dbforpostgresql.azure.upbound.io/v1beta1", "FlexibleServerDatabase", stateful=True
)
FRONTDOOR_PROFILE = register(
    "cdn.azure.upbound.io/v1beta1", "FrontdoorProfile", tag_style=TagStyle.AZURE
)
FRONTDOOR_ENDPOINT = register(
    "cdn.azure.upbound.io/v1beta1", "FrontdoorEndpoint", tag_style=TagStyle.AZURE
)
FRONTDOOR_ORIGIN_GROUP = register("cdn.azure.upbound.io/v1beta2", "FrontdoorOriginGroup")
FRONTDOOR_ORIGIN = register("cdn.azure.upbound.io/v1beta2", "FrontdoorOrigin")
FRONTDOOR_ROUTE = register("cdn.azure.upbound.io/v1beta2", "FrontdoorRoute")

# -- storage, keys, ingress, failover (contact-center and environment) ---------------------------
# A resource group takes everything in it when deleted; accounts, containers, vaults and keys
# hold (or unlock) the data: all stateful.
RESOURCE_GROUP = register(
    "azure.upbound.io/v1beta1", "ResourceGroup", tag_style=TagStyle.AZURE, stateful=True
)
STORAGE_ACCOUNT = register(
    "storage.azure.upbound.io/v1beta2", "Account", tag_style=TagStyle.AZURE, stateful=True
)
BLOB_CONTAINER = register("storage.azure.upbound.io/v1beta1", "Container", stateful=True)
CONTAINER_IMMUTABILITY_POLICY = register(
    "storage.azure.upbound.io/v1beta1", "ContainerImmutabilityPolicy"
)
KEY_VAULT = register(
    "keyvault.azure.upbound.io/v1beta2", "Vault", tag_style=TagStyle.AZURE, stateful=True
)
KEY = register("keyvault.azure.upbound.io/v1beta2", "Key", tag_style=TagStyle.AZURE, stateful=True)
KEY_VAULT_ACCESS_POLICY = register("keyvault.azure.upbound.io/v1beta1", "AccessPolicy")
ROLE_ASSIGNMENT = register("authorization.azure.upbound.io/v1beta1", "RoleAssignment")
NETWORK_SECURITY_GROUP = register(
    "network.azure.upbound.io/v1beta1", "SecurityGroup", tag_style=TagStyle.AZURE
)
NETWORK_SECURITY_RULE = register("network.azure.upbound.io/v1beta1", "SecurityRule")
SUBNET_NSG_ASSOCIATION = register(
    "network.azure.upbound.io/v1beta1", "SubnetNetworkSecurityGroupAssociation"
)
LOG_WORKSPACE = register(
    "operationalinsights.azure.upbound.io/v1beta2", "Workspace", tag_style=TagStyle.AZURE,
    stateful=True,
)
DIAGNOSTIC_SETTING = register("insights.azure.upbound.io/v1beta2", "MonitorDiagnosticSetting")
TRAFFIC_MANAGER_PROFILE = register(
    "network.azure.upbound.io/v1beta2", "TrafficManagerProfile", tag_style=TagStyle.AZURE
)
TRAFFIC_MANAGER_EXTERNAL_ENDPOINT = register(
    "network.azure.upbound.io/v1beta1", "TrafficManagerExternalEndpoint"
)


def grant_role(
    comp: Composition, name: str, *, role: str, principal_of: tuple[str, str] | str,
    scope_of: str, uses: tuple[str, ...] = (),
) -> None:
    """A RoleAssignment ``name``: ``role`` for the principal at ``principal_of`` (composed
    resource, observed path; or a principal id as such) on the observed Azure id of
    ``scope_of``.

    Both are known only once observed (the kinds have no references for them), so the
    assignment waits for them; an assignment that exists keeps the values it was composed
    with while they are briefly unobserved (dropping it would revoke the role).
    ``skipServicePrincipalAadCheck``: a just-created managed identity may not have replicated
    in Entra ID yet, and Azure would refuse it.
    """
    principal = (principal_of if isinstance(principal_of, str)
                 else _observed_or_kept(comp, name, "principalId", *principal_of))
    scope = _observed_or_kept(comp, name, "scope", scope_of, "status.atProvider.id")
    if principal is None or scope is None:
        return
    needed = {scope_of, *uses} | ({principal_of[0]} if isinstance(principal_of, tuple) else set())
    comp.emit(name, ROLE_ASSIGNMENT.new({
        "principalId": str(principal),
        "principalType": "ServicePrincipal",
        "scope": str(scope),
        "roleDefinitionName": role,
        "skipServicePrincipalAadCheck": True,
    }), uses=sorted(needed))

def _observed_or_kept(comp: Composition, name: str, field: str, source: str, path: str) -> Any:
    """``path`` of ``source`` once observed, else the ``field`` the existing ``name`` was
    composed with; None (``name`` held, waiting for ``source``) when neither is known."""
    value = comp.observed_value(source, path)
    if value in (None, "") and comp.is_observed(name):
        value = comp.observed_value(name, f"spec.forProvider.{field}")
    return value if value not in (None, "") else comp.needs(source, path, by=name)


# Azure resource group names: 1-90 of letters, digits, ``_ - . ( )``, not ending in a period.
_RESOURCE_GROUP = re.compile(r"^[-\w.()]{0,89}[-\w()]$")
_AGENT_POOL = re.compile(r"^[a-z][a-z0-9]{0,11}$")
AGENT_POOL_MAX = 12  # AKS Linux agent pool names: lowercase alphanumerics, at most 12


def resource_group(comp: Composition) -> str:
    """The resource group every resource goes into: the scope the composer placed it in.

    It is referenced by name (``resourceGroupName``); whoever owns it (the plane, or a
    composer that composes its own) decides its lifecycle.
    """
    group = comp.scope
    if not _RESOURCE_GROUP.match(group):
        raise InputError(
            comp.placement.scope.field,
            "must be an Azure resource group name: 1-90 letters, digits, '_-.()', "
            "not ending in '.'",
        )
    return group


def location(comp: Composition) -> str:
    """The placed Azure location, for kinds whose spec carries no region of its own."""
    return comp.region


def subnet_name(network: str) -> str:
    """Composition name of the node subnet of the network composed as ``network``."""
    return f"{network}-nodes"


def nat_gateway_name(network: str) -> str:
    """Composition name of the NAT gateway the node subnet of ``network`` egresses through."""
    return f"{network}-nat"


def nat_ip_name(network: str) -> str:
    """Composition name of the NAT gateway's public IP (the network's egress address)."""
    return f"{network}-nat-ip"


def nat_ip_association_name(network: str) -> str:
    """Composition name of the association of the NAT gateway with its public IP."""
    return f"{network}-nat-ip-association"


def subnet_nat_association_name(network: str) -> str:
    """Composition name of the association of the node subnet with the NAT gateway."""
    return f"{subnet_name(network)}-nat"


def agent_pool_name(pool: str, *, reserved: tuple[str, ...] = ()) -> str:
    """The AKS agent pool name for the user's pool ``pool``.

    AKS allows only lowercase alphanumerics (at most 12, starting with a letter) while pool
    names here are DNS labels of up to 40. A name that already fits is kept so it reads the
    same in the portal; any other (or a ``reserved`` one) is shortened and suffixed with a
    hash of the full name, so two different pools never share an agent pool name.
    """
    if _AGENT_POOL.match(pool) and pool not in reserved:
        return pool
    digest = hashlib.sha256(pool.encode()).hexdigest()[:4]
    letters = re.sub(r"[^a-z0-9]", "", pool.lower())
    if not letters or not letters[0].isalpha():
        letters = f"p{letters}"
    return f"{letters[: AGENT_POOL_MAX - len(digest)]}{digest}"


def rotation_pool_name(pool: str) -> str:
    """The temporary agent pool name the provider cycles the user's pool ``pool`` through.

    Changing a pool's VM size, zones, OS SKU and similar properties makes the provider create
    this pool, move the workload, and recreate the original; without a name the change fails.
    The name is a hash of ``pool``, so it is a valid agent pool name that neither matches a
    user's pool nor is shared by two pools rotating at once (a prefix like ``<pool>tmp`` could
    be both).
    """
    return agent_pool_name(f"{pool}.rotation")


def observed_external_name(comp: Composition, name: str) -> str | None:
    """The cloud name of the observed resource ``name`` (its external name, else its name)."""
    metadata: dict[str, Any] = (comp.observed.get(name) or {}).get("metadata") or {}
    annotations = metadata.get("annotations") or {}
    value = annotations.get(EXTERNAL_NAME) or metadata.get("name")
    return str(value) if value else None


def compact_name(
    comp: Composition, name: str, max_length: int, *, alphanumeric: bool = False,
    prefix: str = "",
) -> str:
    """A globally unique Azure name for composed resource ``name`` (storage accounts, vaults).

    Lowercase, starting with a letter; only letters and digits with ``alphanumeric`` (storage
    accounts), else also ``-``. A name that doesn't fit keeps a hash of the full one, so two
    composites never share it.
    """
    full = f"{prefix}-{comp.name}-{name}" if prefix else f"{comp.name}-{name}"
    allowed = r"[^a-z0-9]" if alphanumeric else r"[^a-z0-9-]"
    text = re.sub(r"-{2,}", "-", re.sub(allowed, "", full.lower())).strip("-")
    if not text or not text[0].isalpha():
        text = f"x{text}"
    if len(text) <= max_length:
        return text
    digest = hashlib.sha256(full.encode()).hexdigest()[:6]
    return f"{text[: max_length - len(digest) - (0 if alphanumeric else 1)].rstrip('-')}" + (
        digest if alphanumeric else f"-{digest}"
    )
