"""GKE: a regional, VPC-native Standard cluster without its default pool, and its node pools.

The cluster points at the VPC and subnetwork with ``networkRef``/``subnetworkRef`` and pools at
the cluster with ``clusterRef``: the provider resolves those by ``metadata.name``, so nothing
here waits for an observed id.
"""

from __future__ import annotations

from typing import Any

from fnplatform.clouds.gcp import kinds
from fnplatform.clouds.gcp.common import (
    GKE_NAME_MAX,
    external_name,
    project,
    subnet_name,
    workload_pool,
)
from fnplatform.clouds.gcp.iam import add_service_account, grant_project_roles
from fnplatform.clouds.gcp.network import PODS_RANGE, SERVICES_RANGE
from fnplatform.clouds.gcp.settings import AuthorizedNetwork, gcp_environment
from fnplatform.clouds.gcp.tags import GCP_LABELS
from fnplatform.composition import Composition
from fnplatform.errors import SpecError
from fnplatform.importing import EXTERNAL_NAME
from fnplatform.kinds import connection_secret_ref
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
from fnplatform.rules.controls import Control, vouch
from fnplatform.rules.guard import refuse_replacement

#: Nodes get the cloud-platform scope; what they may really do is decided by IAM, as Google
#: recommends, and workloads use their own identities through workload identity.
OAUTH_SCOPES = ["https://www.googleapis.com/auth/cloud-platform"]
#: What nodes themselves need (logs, metrics, autoscaler metrics, image pulls): Google's
#: minimal node role instead of the Editor-holding default compute service account.
NODE_ROLES = ("roles/artifactregistry.reader", "roles/container.defaultNodeServiceAccount")
#: Ports GKE's control plane must reach on private nodes for admission webhooks that don't
#: listen on 443/10250 (GKE opens only those): ingress-nginx's admission controller.
WEBHOOK_PORTS = ["8443"]


@add_cluster.on("gcp")
def cluster(
    comp: Composition,
    name: str,
    spec: ClusterSpec,
) -> None:
    """The GKE control plane as ``name``, writing its kubeconfig to the connection secret.

    It also uses the subnetwork: the Usage keeps the subnet until the cluster is gone.
    """
    settings = gcp_environment(comp)
    subnet = subnet_name(spec.network)
    for_provider: dict[str, Any] = {
        "project": project(comp),
        "location": comp.region,
        "networkRef": comp.ref(spec.network),
        "subnetworkRef": comp.ref(subnet),
        "networkingMode": "VPC_NATIVE",
        "ipAllocationPolicy": {
            "clusterSecondaryRangeName": PODS_RANGE,
            "servicesSecondaryRangeName": SERVICES_RANGE,
        },
        "releaseChannel": {"channel": settings.releaseChannel},
        "workloadIdentityConfig": {"workloadPool": workload_pool(comp)},
        # Dataplane V2 (eBPF): NetworkPolicy enforcement built in.
        "datapathProvider": "ADVANCED_DATAPATH",
        "enableShieldedNodes": True,
        # The Terraform provider's guard, not a GKE setting: while true, deleting the Cluster
        # fails (the claim's deletion hangs until it is set false). It guards the control
        # plane only; node pools are their own resources and are deleted with the claim.
        # Off by default: the stateful guard and Usages cover accidental drops.
        "deletionProtection": settings.deletionProtection,
    }
    if spec.version:
        for_provider["minMasterVersion"] = spec.version
    for_provider[AUTHORIZED_NETWORKS_FIELD] = {
        "cidrBlocks": _authorized_networks(comp, name, spec, settings.masterAuthorizedNetworks)
    }
    if spec.private:
        for_provider["privateClusterConfig"] = {
            "enablePrivateNodes": True,
            # Public endpoint kept: Crossplane's Helm and Kubernetes providers run outside
            # the VPC and must reach the API server.
            "enablePrivateEndpoint": False,
            "masterIpv4CidrBlock": settings.masterCidr,
            "masterGlobalAccessConfig": {"enabled": True},
        }
    body = kinds.CLUSTER.new(
        for_provider,
        initProvider=_cluster_creation_only(),
        writeConnectionSecretToRef=connection_secret_ref(
            spec.connection_secret, spec.connection_namespace
        ),
    )
    comp.emit(
        name,
        body,
        uses=(subnet,),
        external_name=spec.cluster_name or external_name(comp, name, GKE_NAME_MAX),
    )
    _report_api_server_access(comp, name, spec, settings.masterAuthorizedNetworks)
    if spec.private:
        _webhook_firewall(comp, name, spec, settings.masterCidr)
    _node_service_account(comp, name)


#: The condition saying who may reach the GKE API server, on every GKE composite: a condition
#: the function stops sending stays on the composite as last written (Crossplane v2.4 keeps
#: function conditions it no longer receives), so both answers are always given.
API_SERVER_ACCESS = "ApiServerAccess"
#: The cluster's field holding them (``forProvider``), as an import names it in ``manage``.
AUTHORIZED_NETWORKS_FIELD = "masterAuthorizedNetworksConfig"
#: ``masterAuthorizedNetworksConfig.cidrBlocks[].displayName`` of the default entry.
CLUSTER_NETWORK = "cluster nodes' subnet (default)"


def _authorized_networks(
    comp: Composition, name: str, spec: ClusterSpec, configured: list[AuthorizedNetwork]
) -> list[dict[str, str]]:
    """Who may reach the GKE API server's public endpoint: the platform's allowlist
    (``gcp.masterAuthorizedNetworks``), else only the cluster's own subnet.

    GKE keeps the endpoint public here (Crossplane's Helm and Kubernetes providers run outside
    the VPC), and without authorized networks it admits any source. Refusing a configuration
    without an allowlist (the multi-cloud design's EnvironmentConfigs have none) stopped
    everything; admitting only the nodes' own range keeps the endpoint closed to the internet
    and lets everything else be composed (:func:`_report_api_server_access` says which
    applies). An adopted cluster keeps its own list unless the import takes the field over.
    """
    networks = [n.model_dump() for n in configured] or (
        [{"cidrBlock": spec.node_cidr, "displayName": CLUSTER_NETWORK}] if spec.node_cidr else []
    )
    if comp.import_spec.adopts(name, AUTHORIZED_NETWORKS_FIELD) or configured:
        return networks
    if spec.node_cidr is None:
        raise SpecError(
            "node_cidr",
            "required when gcp.masterAuthorizedNetworks is not set: "
            "the API server then admits the nodes' own range only",
        )
    return networks


def _report_api_server_access(
    comp: Composition, name: str, spec: ClusterSpec, configured: list[AuthorizedNetwork]
) -> None:
    """The ``ApiServerAccess`` condition, once cluster ``name`` is composed: which list of
    authorized networks applies and, for the default, what the platform must add (the
    providers reach the API server only from an authorized network, so the Helm releases stay
    unready until their egress is listed). The allowlist is vouched for (True) only while the
    GKE cluster carrying it is Synced and Ready (:func:`fnplatform.rules.controls.vouch`): a cluster
    the provider cannot update may still admit an older list. An adopted cluster keeps its own
    list unless the import takes the field over: the condition then says that rather than
    claim a list the cluster does not have.
    """
    if comp.import_spec.adopts(name, AUTHORIZED_NETWORKS_FIELD):
        comp.condition(
            API_SERVER_ACCESS,
            None,
            "AdoptedClusterSettings",
            "the adopted GKE cluster keeps its own authorized networks; take "
            f"{AUTHORIZED_NETWORKS_FIELD} over (spec.parameters.import.resources."
            f"{name}.manage) to set them from environment.gcp.masterAuthorizedNetworks",
        )
        return
    if configured:
        listed = ", ".join(f"{n.cidrBlock} ({n.displayName})" for n in configured)
        vouch(
            comp,
            API_SERVER_ACCESS,
            [Control(f"the GKE API server admits only {listed}", (name,))],
            reason="AuthorizedNetworks",
            message=f"the GKE API server admits environment.gcp.masterAuthorizedNetworks: {listed}",
        )
        return
    comp.condition(
        API_SERVER_ACCESS,
        False,
        "ClusterNetworkOnly",
        "environment.gcp.masterAuthorizedNetworks is not set, so the GKE API server admits "
        f"only the cluster's own subnet {spec.node_cidr} (a safe default: closed to the "
        "internet); Crossplane's Helm and Kubernetes providers reach it only from an "
        "authorized network, so list their egress (say, the management cluster's NAT "
        "addresses) in environment.gcp.masterAuthorizedNetworks",
    )


def _cluster_creation_only() -> dict[str, Any]:
    """Cluster fields that only mean something at creation: ``spec.initProvider``.

    upjet applies ``initProvider`` when it creates the cluster and ignores it afterwards, like
    Terraform's ``ignore_changes``. In ``forProvider`` these fields would act on an adopted
    cluster (``import`` in manage mode), whose state never recorded them:
    ``removeDefaultNodePool`` turning true deletes the cluster's ``default-pool`` with its
    workloads, and ``initialNodeCount`` and the client-certificate setting force replacement,
    which upjet refuses, leaving the resource failing every reconcile.
    """
    return {
        # Pools are separate NodePools we manage; GKE insists on creating one to start with.
        "removeDefaultNodePool": True,
        "initialNodeCount": 1,
        # No legacy client certificate (GKE's default, stated): the kubeconfig the provider
        # writes then holds endpoint and CA only, and access is by Google identity, see
        # ``cluster_credentials``.
        "masterAuth": {"clientCertificateConfig": {"issueClientCertificate": False}},
    }


def node_service_account_name(cluster_name: str) -> str:
    """The composition name of the service account the cluster's nodes run as."""
    return f"{cluster_name}-nodes"


def _node_service_account(comp: Composition, cluster_name: str) -> None:
    """A dedicated, least-privileged service account for the cluster's node pools."""
    account_name = node_service_account_name(cluster_name)
    add_service_account(
        comp,
        account_name,
        display_name=f"GKE nodes of {comp.name}",
        description=f"Node pools of the GKE cluster of {comp.name}",
    )
    grant_project_roles(comp, account_name, NODE_ROLES)


def _webhook_firewall(comp: Composition, name: str, spec: ClusterSpec, master_cidr: str) -> None:
    """Let the private control plane call admission webhooks on the nodes.

    From the control plane's range: the environment's for a cluster composed here, the one it
    really has for an adopted cluster (which keeps its own).
    """
    firewall = f"{name}-webhooks"
    master_cidr = comp.setting_of(
        name, "privateClusterConfig.masterIpv4CidrBlock", master_cidr, by=firewall
    )
    if master_cidr is None:
        return
    comp.emit(
        firewall,
        kinds.FIREWALL.new(
            {
                "project": project(comp),
                "networkRef": comp.ref(spec.network),
                "description": f"GKE control plane of {comp.name} to admission webhooks",
                "direction": "INGRESS",
                "sourceRanges": [master_cidr],
                "allow": [{"protocol": "tcp", "ports": list(WEBHOOK_PORTS)}],
                "priority": 1000,
            }
        ),
        external_name=external_name(comp, firewall),
    )


@add_node_pool.on("gcp")
def node_pool(
    comp: Composition,
    name: str,
    spec: NodePoolSpec,
) -> None:
    """One autoscaled pool of ``spec.cluster``, running as the cluster's node account.

    Autoscaling bounds are the pool's totals across the region's zones
    (``totalMin/MaxNodeCount``), which is what a user means by "at least 1, at most 3 nodes";
    the per-zone ``min/maxNodeCount`` would triple them on a regional cluster.
    """
    account = node_service_account_name(spec.cluster)
    node_config: dict[str, Any] = {
        "machineType": spec.machine_type,
        "imageType": "COS_CONTAINERD",
        "diskType": _disk_type(spec),
        "serviceAccountRef": comp.ref(account),
        "oauthScopes": list(OAUTH_SCOPES),
        # Pods see the GKE metadata server: workload identity instead of node keys.
        "workloadMetadataConfig": {"mode": "GKE_METADATA"},
        "shieldedInstanceConfig": {
            "enableSecureBoot": True,
            "enableIntegrityMonitoring": True,
        },
        "labels": {**spec.labels, "platform.fn.crossplane.io/pool": spec.pool},
        "resourceLabels": comp.tags_in(GCP_LABELS),
        # Stated either way: spot is fixed at creation (refused below once the pool exists).
        "spot": spec.spot,
    }
    if spec.disk_size_gb is not None:
        node_config["diskSizeGb"] = spec.disk_size_gb
    if spec.taints:
        node_config["taint"] = [
            {"key": t.key, "value": t.value, "effect": t.api_effect} for t in spec.taints
        ]
    for_provider: dict[str, Any] = {
        "project": project(comp),
        "location": comp.region,
        "clusterRef": comp.ref(spec.cluster),
        "autoscaling": {
            "totalMinNodeCount": spec.min_nodes,
            "totalMaxNodeCount": spec.max_nodes,
            "locationPolicy": "BALANCED",
        },
        "management": {"autoRepair": True, "autoUpgrade": True},
        "upgradeSettings": {"strategy": "SURGE", "maxSurge": 1, "maxUnavailable": 0},
        "nodeConfig": node_config,
    }
    if spec.zones:
        for_provider["nodeLocations"] = _zones(comp, spec)
    refuse_replacement(comp, name, for_provider, {"nodeConfig.spot": ("spot", False)}, what="pool")
    body = kinds.NODE_POOL.new(
        for_provider,
        # Nodes per zone at creation only: GKE changes it when the pool is resized, and in
        # forProvider a difference forces replacing the pool (Terraform's own advice is
        # ignore_changes, which is what initProvider is).
        initProvider={"initialNodeCount": 1},
    )
    comp.emit(
        name,
        body,
        uses=(account,),
        external_name=external_name(comp, name, GKE_NAME_MAX),
    )


GKE_OIDC_BASE = "https://container.googleapis.com/v1"


@cluster_credentials.on("gcp")
def gcp_cluster_credentials(
    comp: Composition, cluster_name: str, spec: ClusterSpec
) -> dict[str, Any]:
    """``GoogleApplicationCredentials``: the kubeconfig alone cannot authenticate to GKE.

    provider-upjet-gcp writes a kubeconfig with the endpoint, the CA and the legacy client
    certificate. GKE stopped issuing client certificates (and the cluster asks for none), so
    that user is anonymous. GKE authenticates Google OAuth tokens: with this identity,
    provider-helm and provider-kubernetes mint a token from Google credentials and add it to
    the kubeconfig. By default they use the credentials injected into their pods
    (``InjectedIdentity``: GKE workload identity of the control plane, no static key);
    ``environment.gcp.clusterIdentity`` may name a Secret with a key file instead.

    That Google identity needs ``roles/container.admin`` in the project, not
    ``roles/container.developer``: the charts create ClusterRoles, ClusterRoleBindings, CRDs
    and webhook configurations, and creating RBAC roles needs ``container.clusterRoles.create``
    (and ``...bind``/``escalate``), which only Kubernetes Engine Admin carries among the
    predefined roles (GCP IAM, "Google Kubernetes Engine roles and permissions"). The grant is
    not composed: the identity is the management cluster's, outside this composite.
    """
    identity = gcp_environment(comp).clusterIdentity
    credentials: dict[str, Any] = {
        "type": "GoogleApplicationCredentials",
        "source": identity.source,
    }
    if identity.source == "Secret" and identity.secretRef is not None:
        credentials["secretRef"] = identity.secretRef.model_dump()
    return credentials


@kubeconfig_source.on("gcp")
def gcp_kubeconfig_source(comp: Composition, cluster: str) -> str:
    """The GKE Cluster itself writes the kubeconfig (its connection secret)."""
    return cluster


@cluster_access.on("gcp")
def gcp_cluster_access(comp: Composition, cluster: str) -> list[str]:
    """Nothing composed: the providers' Google identity is granted outside the composite."""
    return []


@cluster_status.on("gcp")
def gcp_cluster_status(comp: Composition, cluster_name: str) -> None:
    """Endpoint, CA, name and OIDC issuer of the observed GKE cluster into the XR status.

    GKE reports the endpoint as a bare IP; status carries a URL like the other clouds.
    The issuer is GKE's per-cluster OIDC discovery URL, derived from the cluster id
    ``projects/<p>/locations/<l>/clusters/<name>``.
    """
    endpoint = comp.observed_value(cluster_name, "status.atProvider.endpoint")
    if endpoint:
        url = endpoint if str(endpoint).startswith("https://") else f"https://{endpoint}"
        comp.set_status("clusterEndpoint", url)
    comp.status_from(cluster_name, "status.atProvider.masterAuth.clusterCaCertificate", "clusterCA")
    cluster_id = comp.observed_value(cluster_name, "status.atProvider.id")
    annotations = comp.observed_value(cluster_name, "metadata.annotations") or {}
    named = annotations.get(EXTERNAL_NAME)
    if cluster_id:
        comp.set_status("clusterName", str(cluster_id).rsplit("/", 1)[-1])
        comp.set_status("oidcIssuer", f"{GKE_OIDC_BASE}/{cluster_id}")
    elif named:
        comp.set_status("clusterName", str(named))


#: GKE cluster names: 1-40 lowercase letters, digits and '-', starting with a letter and not
#: ending with '-'.
CLUSTER_NAME_RULE = NameRule(
    pattern=r"[a-z]([-a-z0-9]*[a-z0-9])?",
    min_length=1,
    max_length=GKE_NAME_MAX,
    description=f"1-{GKE_NAME_MAX} lowercase letters, digits and '-', starting with a letter "
    "and ending with a letter or digit (GKE cluster names)",
)


@cluster_name_rule.on("gcp")
def gcp_cluster_name_rule(comp: Composition) -> NameRule:
    """What GKE accepts as a cluster name."""
    return CLUSTER_NAME_RULE


#: Boot disk types a GKE node pool takes (Compute Engine persistent disks).
DISK_TYPES = ("pd-balanced", "pd-ssd", "pd-standard")


def _disk_type(spec: NodePoolSpec) -> str:
    """The pool's boot disk type; pd-balanced unless asked (GKE changes it in place)."""
    disk_type = spec.disk_type or "pd-balanced"
    if disk_type not in DISK_TYPES:
        raise SpecError(
            "disk_type",
            f"{disk_type!r} is not a GKE node disk type; use one of {', '.join(DISK_TYPES)}",
        )
    return disk_type


def _zones(comp: Composition, spec: NodePoolSpec) -> list[str]:
    """The zones of the cluster's region the pool runs in (GKE updates them in place)."""
    outside = [zone for zone in spec.zones if not zone.startswith(f"{comp.region}-")]
    if outside:
        raise SpecError(
            "zones", f"{outside[0]!r} is not a zone of {comp.region} (such as {comp.region}-b)"
        )
    return sorted(spec.zones)


#: The cluster composite's plane id names the GCP project the cluster goes in.
cluster_scope_from_plane.on("gcp")
