"""AKS: the managed control plane with its system node pool, user node pools, and status.

Choices, and why:

* Azure CNI overlay with the Cilium data plane and network policy: pods don't consume VNet
  addresses, and Cilium is the policy engine Azure supports going forward.
* OIDC issuer and workload identity on: add-ons (cert-manager) get cloud access through
  federated identities, never through static secrets.
* The control plane's identity: ``SystemAssigned`` for public clusters; a user-assigned one
  (``<name>-control-plane``) for private clusters, whose subnet egresses through a NAT
  gateway. ``outboundType: userAssignedNATGateway`` in a VNet we bring needs the cluster
  identity to hold ``Network Contributor`` on the node subnet *when the cluster is created*
  (AKS validates the subnet and its gateway then), and a system-assigned identity only exists
  after creation; see :func:`_control_plane`.
* Local accounts are disabled and authorisation is Entra ID with Azure RBAC: no long-lived
  cluster-admin client certificate exists. Crossplane's Helm and Kubernetes providers use
  ``environment.azure.clusterIdentity`` (workload identity or service principal
  credentials), granted "Azure Kubernetes Service RBAC Cluster Admin" on the cluster (see
  :func:`cluster_credentials`).
* Private clusters also get a public FQDN that resolves to the private endpoint, so operators
  on peered networks reach the API server without AKS's private DNS zone. The provider's
  kubeconfig names the private FQDN, so the network Crossplane runs in must resolve it
  (peering plus a link to that zone): a deployment prerequisite, not composed here.
* The default node pool is the *system* pool (``onlyCriticalAddonsEnabled``); the user's
  pools are ``KubernetesClusterNodePool`` resources in mode ``User``.
* Every pool states the cluster's minor version as ``orchestratorVersion``. ``kubernetesVersion``
  upgrades the control plane only; without it a pool keeps its old minor version (and the
  provider writes the observed one into the pool's spec), and a new user pool gets AKS's latest
  recommended version instead of the cluster's. The ``patch`` channel keeps all of them on the
  newest patch of that minor; the minor alias (``1.33``) never drifts from what AKS reports.
* The cluster is managed without ``LateInitialize`` (see :func:`cluster`): the autoscaler owns
  the system pool's node count.
* Every pool names its ``temporaryNameForRotation``: the provider needs it to change VM size,
  zones and similar properties in place instead of failing.
* Egress: ``outboundType: userAssignedNATGateway`` for private clusters (the NAT gateway the
  network composes, :mod:`fnplatform.clouds.azure.network`), ``loadBalancer`` for public ones.
* Not composed, as optional or needing the user's choices: maintenance windows (AKS then
  upgrades at any time), Azure Policy, Image Cleaner.
* Public clusters answer only ``azure.apiServerAuthorizedIpRanges`` (required).
* The cluster identity gets ``Network Contributor`` on the node subnet: AKS's cloud provider
  needs it to place internal load balancers (private ingress) in a subnet it didn't create,
  and AKS to join nodes to it ("at least Network Contributor permissions on the subnet", AKS
  Azure CNI prerequisites). The system-assigned identity of a public cluster gets it once
  observed (``<name>-network-contributor``); the user-assigned one of a private cluster before
  the cluster is created (``<name>-control-plane-network-contributor``).
"""

from __future__ import annotations

import re
from typing import Any

from fnplatform.clouds.azure.common import (
    agent_pool_name,
    grant_role,
    nat_gateway_name,
    nat_ip_association_name,
    resource_group,
    rotation_pool_name,
    subnet_name,
    subnet_nat_association_name,
)
from fnplatform.clouds.azure.kinds import (
    KUBERNETES_CLUSTER,
    NODE_POOL,
    USER_ASSIGNED_IDENTITY,
)
from fnplatform.clouds.azure.network import dns_service_ip
from fnplatform.clouds.azure.settings import ClusterIdentity, azure_environment
from fnplatform.clouds.azure.tags import AZURE_TAGS
from fnplatform.composition import Composition
from fnplatform.errors import InputError, SpecError
from fnplatform.holds import READY, Wait
from fnplatform.kinds import WITHOUT_LATE_INITIALIZE, connection_secret_ref
from fnplatform.library.cluster import (
    ClusterSpec,
    NodePoolSpec,
    add_cluster,
    add_node_pool,
    cluster_access,
    cluster_credentials,
    cluster_name_rule,
    cluster_scope_from_plane,
    cluster_status,
    kubeconfig_source,
)
from fnplatform.library.rules import NameRule
from fnplatform.rules.guard import refuse_replacement

SYSTEM_POOL = "system"
DEFAULT_VM_SIZE = "Standard_D4ds_v5"
MAX_SURGE = "10%"  # AKS's own default for new pools; stated so the provider sees no drift
DNS_PREFIX_MAX = 54
CROSSPLANE_ADMIN = "crossplane-admin"
#: Azure RBAC for Kubernetes: full access to every resource in the cluster.
CLUSTER_ADMIN_ROLE = "Azure Kubernetes Service RBAC Cluster Admin"
NETWORK_CONTRIBUTOR = "Network Contributor"
LOAD_BALANCER, NAT_GATEWAY_EGRESS = "loadBalancer", "userAssignedNATGateway"
KUBECONFIG_KEY = "kubeconfig"  # the connection detail provider-upjet-azure writes for AKS
_SERVER = re.compile(r"^\s*server:\s*['\"]?(\S+?)['\"]?\s*$", re.MULTILINE)
_CA_DATA = re.compile(r"^\s*certificate-authority-data:\s*['\"]?(\S+?)['\"]?\s*$", re.MULTILINE)


@add_cluster.on("azure")
def cluster(
    comp: Composition,
    name: str,
    spec: ClusterSpec,
) -> None:
    """The AKS cluster ``name`` in the network ``spec.network``, writing its kubeconfig.

    Managed without ``LateInitialize``. upjet would copy the observed
    ``defaultNodePool.nodeCount`` into ``forProvider`` (provider-upjet-azure's KubernetesCluster
    late-init ignores only ``kubelet_identity`` and ``private_link_enabled``); once the
    autoscaler resizes the system pool, every sync then asks to set the old count back, and
    azurerm refuses (``cannot change `node_count` when `enable_auto_scaling` is set to
    `true```), so the cluster stops syncing. Without late-initialisation the spec holds only
    what is composed here; ``nodeCount`` is never sent and the pool starts at ``minCount``.
    """
    control_plane = _control_plane(comp, name, spec)
    if control_plane is None:
        return  # held: the identity, its grant or the subnet's NAT gateway isn't ready yet
    identity_block, outbound_type, uses = control_plane
    for_provider: dict[str, Any] = {
        "location": comp.region,
        "resourceGroupName": resource_group(comp),
        "dnsPrefix": _dns_prefix(comp.resource_name(name)),
        "skuTier": "Standard",  # the SLA-backed control plane tier
        "automaticUpgradeChannel": "patch",
        "nodeOsUpgradeChannel": "NodeImage",
        "identity": identity_block,
        "oidcIssuerEnabled": True,
        "workloadIdentityEnabled": True,
        "roleBasedAccessControlEnabled": True,
        "localAccountDisabled": True,
        "azureActiveDirectoryRoleBasedAccessControl": {"azureRbacEnabled": True},
        "privateClusterEnabled": spec.private,
        "defaultNodePool": _system_pool(comp, spec),
        "networkProfile": _network_profile(comp, spec, outbound_type),
    }
    if spec.private:
        for_provider["privateClusterPublicFqdnEnabled"] = True
    else:
        for_provider["apiServerAccessProfile"] = {"authorizedIpRanges": _authorized_ranges(comp)}
    if spec.version:
        for_provider["kubernetesVersion"] = spec.version
    body = KUBERNETES_CLUSTER.new(
        for_provider,
        managementPolicies=list(WITHOUT_LATE_INITIALIZE),
        writeConnectionSecretToRef=connection_secret_ref(
            spec.connection_secret, spec.connection_namespace
        ),
    )
    comp.emit(name, body, uses=uses, external_name=spec.cluster_name)
    identity = _cluster_identity(comp)
    grant_role(
        comp,
        f"{name}-{CROSSPLANE_ADMIN}",
        role=CLUSTER_ADMIN_ROLE,
        principal_of=identity.principalId,
        scope_of=name,
    )
    if identity_block["type"] == "SystemAssigned":
        grant_role(
            comp,
            f"{name}-network-contributor",
            role=NETWORK_CONTRIBUTOR,
            principal_of=(name, "status.atProvider.identity.principalId"),
            scope_of=subnet_name(spec.network),
        )


ControlPlane = tuple[dict[str, Any], str, tuple[str, ...]]


def _control_plane(comp: Composition, name: str, spec: ClusterSpec) -> ControlPlane | None:
    """The cluster's ``identity``, its ``outboundType`` and what it uses for them; None holds a
    cluster that doesn't exist yet back until they are ready.

    Without a NAT gateway on the node subnet (public clusters; a network without one), or
    for an adopted cluster keeping its own identity (imported, ``identity`` not taken over),
    it is the system-assigned identity and the load balancer, and no identity is composed.
    With one, the user-assigned identity ``<name>-control-plane`` and its ``Network
    Contributor`` grant on the subnet are composed here; AKS checks both the grant and the
    subnet's gateway when it creates the cluster, and its nodes need working egress (the
    gateway's public IP) to bootstrap, so a new cluster waits until the identity's Azure id is
    observed and the grant and both associations (subnet and public IP) are Ready. The Usages
    (``uses``) delete the cluster before all of them.

    A private cluster that exists from before the NAT gateway (system-assigned, load balancer)
    is never dropped meanwhile: it keeps what it has until the same are ready, then moves in
    place (AKS migrates a BYO-VNet cluster from ``loadBalancer`` to
    ``userAssignedNATGateway`` and updates its identity to a user-assigned one; see
    docs/cluster.md). Once moved, what it was last composed with (its observed spec) keeps it
    there even while the identity is briefly unobserved.
    """
    system_assigned: ControlPlane = ({"type": "SystemAssigned"}, LOAD_BALANCER, ())
    association = subnet_nat_association_name(spec.network)
    address = nat_ip_association_name(spec.network)
    # the network composes the NAT gateway for a Kubernetes network it does not adopt
    nat = spec.network_nat and not comp.import_spec.adopts(spec.network)
    if not nat or comp.import_spec.adopts(name, "identity"):
        return system_assigned
    identity = f"{name}-control-plane"
    grant = f"{identity}-network-contributor"
    comp.emit(
        identity,
        USER_ASSIGNED_IDENTITY.new(
            {
                "name": comp.resource_name(identity),
                "location": comp.region,
                "resourceGroupName": resource_group(comp),
            }
        ),
    )
    grant_role(
        comp,
        grant,
        role=NETWORK_CONTRIBUTOR,
        principal_of=(identity, "status.atProvider.principalId"),
        scope_of=subnet_name(spec.network),
    )
    ready = (grant, association, address)
    uses = (identity, *ready, nat_gateway_name(spec.network))
    if comp.is_observed(name):
        moved = comp.observed_value(name, "spec.forProvider.networkProfile.outboundType")
        identity_ids = comp.observed_value(name, "spec.forProvider.identity.identityIds")
        if moved == NAT_GATEWAY_EGRESS and identity_ids:
            return _user_assigned(identity_ids), NAT_GATEWAY_EGRESS, uses
        identity_id = comp.observed_value(identity, "status.atProvider.id")
        if identity_id and all(comp.is_ready(needed) for needed in ready):
            return _user_assigned([identity_id]), NAT_GATEWAY_EGRESS, uses
        return system_assigned  # an existing cluster moves once its prerequisites are ready
    identity_id = comp.needs(identity, "status.atProvider.id", by=name)
    unready = [needed for needed in ready if not comp.needs_ready(needed, by=name)]
    if identity_id is None or unready:
        waiting = [Wait(identity, "status.atProvider.id")] if identity_id is None else []
        comp.hold(name, *waiting, *(Wait(needed, READY) for needed in unready))
        return None
    return _user_assigned([identity_id]), NAT_GATEWAY_EGRESS, uses


def _user_assigned(identity_ids: list[Any]) -> dict[str, Any]:
    """The ``identity`` block naming the user-assigned identities by Azure resource id."""
    return {"type": "UserAssigned", "identityIds": [str(i) for i in identity_ids]}


def _cluster_identity(comp: Composition) -> ClusterIdentity:
    """The identity Crossplane's providers use on the cluster; required (no local accounts)."""
    identity = azure_environment(comp).clusterIdentity
    if identity is None:
        raise InputError(
            "environment.azure.clusterIdentity",
            "required: AKS clusters have local accounts disabled (no admin client "
            "certificate), so name the Entra identity Crossplane's Helm and Kubernetes "
            "providers use: type (AzureWorkloadIdentityCredentials or "
            "AzureServicePrincipalCredentials), secretRef to its credentials and principalId",
        )
    return identity


def _authorized_ranges(comp: Composition) -> list[str]:
    """Who may reach a public cluster's API server: never the whole internet by default."""
    ranges = azure_environment(comp).apiServerAuthorizedIpRanges
    if not ranges:
        raise InputError(
            "environment.azure.apiServerAuthorizedIpRanges",
            "required for a public cluster: AKS would accept API calls from anywhere; list "
            "the CIDRs allowed to reach it, such as the management cluster's egress "
            "(0.0.0.0/0 opens it to the internet on purpose), or make the cluster private",
        )
    return sorted(ranges)


def _dns_prefix(resource_name: str) -> str:
    """AKS's DNS prefix: 1-54 letters, digits and dashes, starting and ending alphanumeric."""
    return resource_name[:DNS_PREFIX_MAX].strip("-")


def _system_pool(comp: Composition, spec: ClusterSpec) -> dict[str, Any]:
    """The default (system) pool: autoscaled, tainted for critical add-ons, in the node subnet."""
    settings = azure_environment(comp).systemPool
    vm_size = settings.vmSize or spec.default_machine_type or DEFAULT_VM_SIZE
    pool: dict[str, Any] = {
        "name": SYSTEM_POOL,
        "vmSize": str(vm_size),
        "autoScalingEnabled": True,
        "minCount": settings.minCount,
        "maxCount": settings.maxCount,
        "onlyCriticalAddonsEnabled": True,
        "temporaryNameForRotation": f"{SYSTEM_POOL}tmp",
        "upgradeSettings": {"maxSurge": MAX_SURGE},
        "vnetSubnetIdRef": comp.ref(subnet_name(spec.network)),
        "tags": comp.tags_in(AZURE_TAGS),
    }
    if spec.version:
        pool["orchestratorVersion"] = spec.version
    return pool


def _network_profile(comp: Composition, spec: ClusterSpec, outbound_type: str) -> dict[str, Any]:
    """Azure CNI overlay with Cilium; pods and services ranges from the cluster's network."""
    if not spec.pods_cidr or not spec.services_cidr:
        raise SpecError("pods_cidr", "AKS needs pod and service ranges")
    return {
        "networkPlugin": "azure",
        "networkPluginMode": "overlay",
        "networkDataPlane": "cilium",
        "networkPolicy": "cilium",
        "loadBalancerSku": "standard",
        "outboundType": outbound_type,
        "podCidr": spec.pods_cidr,
        "serviceCidr": spec.services_cidr,
        "dnsServiceIp": dns_service_ip(spec.services_cidr),
    }


@add_node_pool.on("azure")
def node_pool(
    comp: Composition,
    name: str,
    spec: NodePoolSpec,
) -> None:
    """A ``User`` pool of the cluster ``spec.cluster``, autoscaled between min and max nodes.

    Its Azure name is the agent pool name (external name), since AKS restricts pool names far
    more than Kubernetes names; ``nodeCount`` is left to the autoscaler.
    """
    agent_pool = agent_pool_name(spec.pool, reserved=(SYSTEM_POOL, f"{SYSTEM_POOL}tmp"))
    for_provider: dict[str, Any] = {
        "kubernetesClusterIdRef": comp.ref(spec.cluster),
        "vnetSubnetIdRef": comp.ref(subnet_name(spec.network)),
        "mode": "User",
        "osType": "Linux",
        "vmSize": spec.machine_type,
        "autoScalingEnabled": True,
        "minCount": spec.min_nodes,
        "maxCount": spec.max_nodes,
        "nodeLabels": {**spec.labels, "platform.fn.crossplane.io/pool": spec.pool},
        "temporaryNameForRotation": rotation_pool_name(spec.pool),
        "upgradeSettings": {"maxSurge": MAX_SURGE},
        # Stated either way: the priority is fixed at creation (refused below after).
        "priority": "Spot" if spec.spot else "Regular",
    }
    taints = [f"{t.key}={t.value}:{t.effect}" for t in spec.taints]
    if spec.spot:
        # AKS labels and taints every spot node itself; stating them keeps the provider from
        # seeing a difference on every sync (azurerm's kubernetes_cluster_node_pool docs).
        for_provider["nodeLabels"][SPOT_LABEL] = "spot"
        taints.append(SPOT_TAINT)
        for_provider["evictionPolicy"] = "Delete"
        for_provider["spotMaxPrice"] = -1  # up to the on-demand price, never evicted for price
    if taints:
        for_provider["nodeTaints"] = sorted(taints)
    if spec.disk_size_gb is not None:
        for_provider["osDiskSizeGb"] = spec.disk_size_gb
    if spec.disk_type is not None:
        if spec.disk_type not in DISK_TYPES:
            raise SpecError(
                "disk_type",
                f"{spec.disk_type!r} is not an AKS OS disk type; use "
                f"one of {', '.join(DISK_TYPES)}",
            )
        for_provider["osDiskType"] = spec.disk_type
    if spec.zones:
        unknown = [zone for zone in spec.zones if zone not in AVAILABILITY_ZONES]
        if unknown:
            raise SpecError(
                "zones",
                f"{unknown[0]!r} is not an Azure availability zone; use "
                f"{', '.join(AVAILABILITY_ZONES)}",
            )
        for_provider["zones"] = sorted(set(spec.zones))
    # Disk, zones and size rotate through temporaryNameForRotation; the priority can't.
    refuse_replacement(comp, name, for_provider, {"priority": ("spot", "Regular")}, what="pool")
    # The version the pool's cluster states (its ClusterSpec.version, user's or template's;
    # None: AKS picks it), unless the cluster is adopted with its own version: then the one
    # it runs (Composition.setting_of holds the import rule).
    version = comp.setting_of(spec.cluster, "kubernetesVersion", spec.version or None, by=name)
    if name in comp.notes.held:
        return  # an adopted cluster: waits to learn the version it runs
    if version:
        for_provider["orchestratorVersion"] = version
    comp.emit(name, NODE_POOL.new(for_provider), external_name=agent_pool)


@cluster_credentials.on("azure")
def azure_cluster_credentials(
    comp: Composition, cluster_name: str, spec: ClusterSpec
) -> dict[str, Any]:
    """The Entra identity of ``environment.azure.clusterIdentity``.

    provider-upjet-azure writes AKS's ``kube_config_raw`` as the ``kubeconfig`` connection
    detail. With local accounts disabled and Entra ID integration, that kubeconfig holds a
    ``kubelogin`` exec plugin instead of a client certificate; provider-helm and
    provider-kubernetes replace it with a token for this identity (``WorkloadIdentityLogin``
    or ``ServicePrincipalLogin`` from the credentials in ``secretRef``, see
    provider-kubernetes ``pkg/kube/config`` azure). The identity is granted "Azure
    Kubernetes Service RBAC Cluster Admin" on the cluster (``<cluster>-crossplane-admin``).
    """
    identity = _cluster_identity(comp)
    return {"type": identity.type, "source": "Secret", "secretRef": identity.secretRef.model_dump()}


@cluster_access.on("azure")
def azure_cluster_access(comp: Composition, cluster_name: str) -> list[str]:
    """What the providers' access depends on besides the kubeconfig: the RBAC grant, which
    must outlive every Release (their uninstall needs it)."""
    return [f"{cluster_name}-{CROSSPLANE_ADMIN}"]


@kubeconfig_source.on("azure")
def azure_kubeconfig_source(comp: Composition, cluster: str) -> str:
    """The AKS KubernetesCluster itself writes the kubeconfig (its connection secret)."""
    return cluster


@cluster_status.on("azure")
def azure_cluster_status(comp: Composition, cluster_name: str) -> None:
    """``clusterName``, ``clusterEndpoint``, ``clusterCA`` and ``oidcIssuer`` once observed.

    Endpoint and CA come from the observed kubeconfig connection detail (what clients really
    use); without it the endpoint falls back to the observed FQDN. Each value falls back to
    the one already in the composite's status, so a briefly unobserved cluster keeps them.
    """
    kubeconfig = _observed_kubeconfig(comp, cluster_name)
    fqdn = comp.observed_value(cluster_name, "status.atProvider.fqdn") or comp.observed_value(
        cluster_name, "status.atProvider.privateFqdn"
    )
    endpoint = _match(_SERVER, kubeconfig) or (f"https://{fqdn}:443" if fqdn else None)
    name = comp.observed_external_name(cluster_name)
    comp.remember("clusterName", name)
    comp.remember("clusterEndpoint", endpoint)
    comp.remember("clusterCA", _match(_CA_DATA, kubeconfig))
    issuer = comp.observed_value(cluster_name, "status.atProvider.oidcIssuerUrl")
    comp.remember("oidcIssuer", issuer)


def _observed_kubeconfig(comp: Composition, cluster_name: str) -> str:
    """The kubeconfig Crossplane read from the cluster's connection secret ('' if none)."""
    raw = comp.observed.connection_details(cluster_name).get(KUBECONFIG_KEY, b"")
    return raw.decode("utf-8", errors="replace")


def _match(pattern: re.Pattern[str], text: str) -> str | None:
    """The first value ``pattern`` captures in the kubeconfig (plain-scalar YAML, as AKS writes)."""
    found = pattern.search(text)
    return found.group(1) if found else None


#: AKS cluster names: 1-63 letters, digits, '-' and '_', starting and ending alphanumeric.
CLUSTER_NAME_RULE = NameRule(
    pattern=r"[a-zA-Z0-9]([-_a-zA-Z0-9]{0,61}[a-zA-Z0-9])?",
    min_length=1,
    max_length=63,
    description="1-63 letters, digits, '-' and '_', starting and ending with a letter or "
    "digit (AKS cluster names)",
)


@cluster_name_rule.on("azure")
def azure_cluster_name_rule(comp: Composition) -> NameRule:
    """What AKS accepts as a cluster name."""
    return CLUSTER_NAME_RULE


#: What AKS puts on every spot node (and a pool must state to stay in sync).
SPOT_LABEL = "kubernetes.azure.com/scalesetpriority"
SPOT_TAINT = "kubernetes.azure.com/scalesetpriority=spot:NoSchedule"
#: OS disk types of an AKS pool.
DISK_TYPES = ("Ephemeral", "Managed")
#: Availability zones as AKS names them.
AVAILABILITY_ZONES = ("1", "2", "3")


#: The cluster composite's plane id names the Azure resource group the cluster goes in.
cluster_scope_from_plane.on("azure")
