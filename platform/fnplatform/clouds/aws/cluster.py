"""AWS builders for the cluster capabilities: VPC, EKS, managed node groups, Route53, identity.

Provider: upjet ``provider-upjet-aws`` v2.6.0 (cluster-scoped ``*.aws.upbound.io`` kinds, each
emitted at its storage version). Resources are wired together with ``*Ref`` fields naming the
other composed resources by ``metadata.name``, so nothing waits on an observed AWS ID when the
CRD can resolve the reference itself. Dependencies that must exist *before* creation (the
cluster role's policy before the cluster, the node role's policies before a node group, the
Internet gateway before a public NAT gateway) are expressed with ``uses``, which also orders
deletion through Crossplane Usages.

Composed-resource names (``<name>`` is the composer's name for the capability):

* network: ``<name>`` (VPC), ``<name>-igw``, ``<name>-public-{a,b}``, ``<name>-public-rt``,
  ``<name>-public-default``, ``<name>-public-{a,b}-rta``; when private also
  ``<name>-private-{a,b}``, ``<name>-nat-{a,b}-eip``, ``<name>-nat-{a,b}``,
  ``<name>-private-{a,b}-rt``, ``<name>-private-{a,b}-default``, ``<name>-private-{a,b}-rta``.
* cluster: ``<name>`` (EKS Cluster), ``<name>-role`` + ``<name>-role-cluster-policy``,
  ``<name>-node-role`` + ``<name>-node-role-{worker,cni,ecr}``; extras: ``<name>-auth``
  (ClusterAuth, the kubeconfig), ``<name>-addon-<addon>``, and the cluster autoscaler:
  ``<name>-autoscaler`` (IAM Role) + ``-policy``, ``-policy-attachment``, ``-association``
  and ``<name>-autoscaler-release`` (Helm Release).
* node pool: ``<name>`` (NodeGroup).
* DNS zone: ``<name>`` (Route53 Zone).
* workload identity: ``<name>`` (IAM Role), ``<name>-policy``, ``<name>-policy-attachment``,
  ``<name>-association`` (EKS PodIdentityAssociation).
"""

from __future__ import annotations

import ipaddress
import json
from collections.abc import Iterable, Mapping
from typing import Any

from fnplatform.composition import Composition
from fnplatform.errors import InputError
from fnplatform.importing import EXTERNAL_NAME
from fnplatform.kinds import register
from fnplatform.library.kubernetes import add_helm_release
from fnplatform.library.registry import extra, provides
from fnplatform.library.specs import (
    ClusterSpec,
    DnsZoneSpec,
    NetworkSpec,
    NodePoolSpec,
    WorkloadIdentitySpec,
)
from fnplatform.merge import get_path
from fnplatform.tagging import TagStyle

CLOUD = "aws"

# -- kinds (storage versions from provider-upjet-aws v2.6.0) --------------------------------

VPC = register("ec2.aws.upbound.io/v1beta1", "VPC", tag_style=TagStyle.AWS)
SUBNET = register("ec2.aws.upbound.io/v1beta1", "Subnet", tag_style=TagStyle.AWS)
INTERNET_GATEWAY = register("ec2.aws.upbound.io/v1beta1", "InternetGateway", tag_style=TagStyle.AWS)
EIP = register("ec2.aws.upbound.io/v1beta1", "EIP", tag_style=TagStyle.AWS)
NAT_GATEWAY = register("ec2.aws.upbound.io/v1beta1", "NATGateway", tag_style=TagStyle.AWS)
ROUTE_TABLE = register("ec2.aws.upbound.io/v1beta1", "RouteTable", tag_style=TagStyle.AWS)
ROUTE = register("ec2.aws.upbound.io/v1beta2", "Route")
ROUTE_TABLE_ASSOCIATION = register("ec2.aws.upbound.io/v1beta1", "RouteTableAssociation")
EKS_CLUSTER = register(
    "eks.aws.upbound.io/v1beta2", "Cluster", tag_style=TagStyle.AWS, stateful=True
)
NODE_GROUP = register(
    "eks.aws.upbound.io/v1beta2", "NodeGroup", tag_style=TagStyle.AWS, stateful=True
)
CLUSTER_AUTH = register("eks.aws.upbound.io/v1beta1", "ClusterAuth")
ADDON = register("eks.aws.upbound.io/v1beta1", "Addon", tag_style=TagStyle.AWS)
POD_IDENTITY_ASSOCIATION = register(
    "eks.aws.upbound.io/v1beta1", "PodIdentityAssociation", tag_style=TagStyle.AWS
)
IAM_ROLE = register("iam.aws.upbound.io/v1beta1", "Role", tag_style=TagStyle.AWS)
IAM_POLICY = register("iam.aws.upbound.io/v1beta1", "Policy", tag_style=TagStyle.AWS)
ROLE_POLICY_ATTACHMENT = register("iam.aws.upbound.io/v1beta1", "RolePolicyAttachment")
ZONE = register("route53.aws.upbound.io/v1beta1", "Zone", tag_style=TagStyle.AWS, stateful=True)

# -- constants ------------------------------------------------------------------------------

ZONES = ("a", "b")  # two availability zones: EKS needs control-plane subnets in two
ANYWHERE = "0.0.0.0/0"
ELB_ROLE_TAG = "kubernetes.io/role/elb"
INTERNAL_ELB_ROLE_TAG = "kubernetes.io/role/internal-elb"
CLUSTER_POLICIES = {"cluster-policy": "AmazonEKSClusterPolicy"}
NODE_POLICIES = {
    "worker": "AmazonEKSWorkerNodePolicy",
    "cni": "AmazonEKS_CNI_Policy",
    "ecr": "AmazonEC2ContainerRegistryReadOnly",
}
# Managed addons: the CNI and kube-proxy every node needs, CoreDNS, and the agent that hands
# EKS Pod Identity credentials to pods (used by cert-manager's DNS01 identity).
ADDONS = ("coredns", "eks-pod-identity-agent", "kube-proxy", "vpc-cni")
# A Deployment: without nodes the addon stays DEGRADED and its creation times out.
NEEDS_NODES = frozenset({"coredns"})
CLUSTER_LOG_TYPES = ["api", "audit", "authenticator"]
AUTHENTICATION_MODE = "API_AND_CONFIG_MAP"
GLOBAL_REGION = "us-east-1"  # Route53 and IAM are global; the provider still wants a region
MIN_VPC_PREFIX, MAX_VPC_PREFIX = 16, 24  # AWS VPCs are /16../28; four subnets need /24 or larger
PUBLIC_ACCESS_CIDRS_KEY = "aws.endpointPublicAccessCidrs"
ADDON_VERSIONS_KEY = "aws.addonVersions"
POD_IDENTITY_SERVICE = "pods.eks.amazonaws.com"

# Cluster autoscaler: a managed node group's min/max only bound its Auto Scaling group; nothing
# resizes it inside those bounds on EKS unless an autoscaler runs in the cluster.
AUTOSCALER_CHART = "cluster-autoscaler"
AUTOSCALER_REPOSITORY = "https://kubernetes.github.io/autoscaler"
AUTOSCALER_NAMESPACE = "kube-system"
AUTOSCALER_SERVICE_ACCOUNT = "cluster-autoscaler"
#: The first chart release of each autoscaler minor (the autoscaler's compatibility table). The
#: autoscaler simulates the scheduler of its own Kubernetes minor, so it must match the cluster;
#: ``charts.cluster-autoscaler.version`` in the environment pins a later patch release.
AUTOSCALER_CHART_VERSIONS = {
    "1.28": "9.34.0",
    "1.29": "9.35.0",
    "1.30": "9.37.0",
    "1.31": "9.38.0",
    "1.32": "9.45.0",
    "1.33": "9.47.0",
    "1.34": "9.51.0",
}
#: Tags the autoscaler discovers node groups by. EKS puts them on each managed node group's Auto
#: Scaling group itself (that is what the autoscaler and its IAM condition read); the NodeGroup
#: carries them too so the intent is visible on the resource Crossplane manages.
AUTOSCALER_ENABLED_TAG = "k8s.io/cluster-autoscaler/enabled"
AUTOSCALER_CLUSTER_TAG_PREFIX = "k8s.io/cluster-autoscaler/"
#: Composition name of the Helm ProviderConfig the cluster composer builds from the kubeconfig.
HELM_PROVIDER_CONFIG = "providers-helm"


# -- small helpers --------------------------------------------------------------------------


def partition(region: str) -> str:
    """The ARN partition of ``region``: managed policy ARNs differ in China and GovCloud."""
    if region.startswith("cn-"):
        return "aws-cn"
    if region.startswith("us-gov-"):
        return "aws-us-gov"
    return "aws"


def managed_policy_arn(region: str, policy: str) -> str:
    """The ARN of the AWS managed policy ``policy``."""
    return f"arn:{partition(region)}:iam::aws:policy/{policy}"




def composite_region(comp: Composition) -> str:
    """The composite's region, for global services (Route53, IAM) whose specs carry none."""
    return str(get_path(comp.spec, "forProvider.location") or GLOBAL_REGION)


def trust_policy(service: str, *actions: str) -> str:
    """An IAM trust policy letting AWS service ``service`` assume the role."""
    statement = {"Effect": "Allow", "Principal": {"Service": service}, "Action": list(actions)}
    return policy_document([statement])


def policy_document(statements: list[dict[str, Any]]) -> str:
    """A deterministic IAM policy document (sorted keys, compact)."""
    return json.dumps(
        {"Version": "2012-10-17", "Statement": statements}, sort_keys=True, separators=(",", ":")
    )


def eks_cluster_name(comp: Composition, cluster: str) -> str:
    """The name of composed cluster ``cluster`` in EKS: its external name when imported, else
    its ``metadata.name`` (the provider names an EKS cluster after its resource)."""
    emitted = comp.desired.get(cluster)
    if emitted is None:
        return comp.resource_name(cluster)
    metadata = emitted.body["metadata"]
    return str((metadata.get("annotations") or {}).get(EXTERNAL_NAME) or metadata["name"])


def name_tag(comp: Composition, name: str) -> dict[str, str]:
    """The ``Name`` tag the AWS console shows: the resource's Kubernetes name."""
    return {"Name": comp.ref(name)["name"]}


# -- network --------------------------------------------------------------------------------


def subnet_cidrs(vpc_cidr: str) -> dict[str, str]:
    """Split the VPC range in four fixed quarters: private a, private b, public a, public b.

    The layout never depends on ``private``, so switching a cluster between private and public
    never changes (and so never replaces) an existing subnet.
    """
    try:
        network = ipaddress.ip_network(vpc_cidr)
    except ValueError as err:
        raise InputError("environment.network.subnetCidr", str(err)) from None
    if network.version != 4 or not MIN_VPC_PREFIX <= network.prefixlen <= MAX_VPC_PREFIX:
        raise InputError(
            "environment.network.subnetCidr",
            f"{vpc_cidr} must be an IPv4 range from /{MIN_VPC_PREFIX} to /{MAX_VPC_PREFIX}",
        )
    quarters = [str(q) for q in network.subnets(prefixlen_diff=2)]
    return {
        "private-a": quarters[0],
        "private-b": quarters[1],
        "public-a": quarters[2],
        "public-b": quarters[3],
    }


def node_subnets(comp: Composition, network: str) -> list[str]:
    """Composition names of the subnets nodes and the control plane live in.

    Private networks put them in the private subnets (egress through NAT); public ones in the
    public subnets, since without NAT only those reach the Internet.
    """
    tier = "private" if f"{network}-private-a" in comp.desired else "public"
    return [f"{network}-{tier}-{zone}" for zone in ZONES]


@provides("network", CLOUD)
def network(
    comp: Composition, name: str, spec: NetworkSpec, *, uses: Iterable[str],
    template: Mapping[str, Any] | None,
) -> None:
    """A VPC over two availability zones: public subnets behind an Internet gateway, and when
    ``spec.private`` private subnets with one NAT gateway per zone (no single-AZ egress)."""
    cidrs = subnet_cidrs(spec.subnet_cidr)
    vpc = {"region": spec.region, "cidrBlock": spec.subnet_cidr, "enableDnsSupport": True,
           "enableDnsHostnames": True, "tags": name_tag(comp, name)}
    comp.emit(name, VPC.new(vpc), uses=uses, template=template)
    gateway = f"{name}-igw"
    comp.emit(gateway, INTERNET_GATEWAY.new(
        {"region": spec.region, "vpcIdRef": comp.ref(name), "tags": name_tag(comp, gateway)}))
    public_table = _route_table(comp, f"{name}-public-rt", name, spec.region)
    _default_route(comp, f"{name}-public-default", public_table, spec.region,
                   {"gatewayIdRef": comp.ref(gateway)})
    for zone in ZONES:
        subnet = _subnet(comp, name, f"public-{zone}", cidrs, spec.region, public=True)
        _associate(comp, subnet, public_table, spec.region)
    if spec.private:
        for zone in ZONES:
            _private_zone_egress(comp, name, zone, cidrs, region=spec.region, gateway=gateway)


def _subnet(
    comp: Composition, network_name: str, part: str, cidrs: Mapping[str, str], region: str,
    *, public: bool,
) -> str:
    name = f"{network_name}-{part}"
    role_tag = ELB_ROLE_TAG if public else INTERNAL_ELB_ROLE_TAG
    comp.emit(name, SUBNET.new({
        "region": region,
        "vpcIdRef": comp.ref(network_name),
        "cidrBlock": cidrs[part],
        "availabilityZone": f"{region}{part[-1]}",
        "mapPublicIpOnLaunch": public,
        "tags": {**name_tag(comp, name), role_tag: "1"},
    }))
    return name


def _route_table(comp: Composition, name: str, network_name: str, region: str) -> str:
    comp.emit(name, ROUTE_TABLE.new(
        {"region": region, "vpcIdRef": comp.ref(network_name), "tags": name_tag(comp, name)}))
    return name


def _default_route(
    comp: Composition, name: str, table: str, region: str, target: Mapping[str, Any],
) -> None:
    comp.emit(name, ROUTE.new({"region": region, "routeTableIdRef": comp.ref(table),
                               "destinationCidrBlock": ANYWHERE, **target}))


def _associate(comp: Composition, subnet: str, table: str, region: str) -> None:
    comp.emit(f"{subnet}-rta", ROUTE_TABLE_ASSOCIATION.new(
        {"region": region, "subnetIdRef": comp.ref(subnet), "routeTableIdRef": comp.ref(table)}))


def _private_zone_egress(
    comp: Composition, network_name: str, zone: str, cidrs: Mapping[str, str], *, region: str,
    gateway: str,
) -> None:
    """Private subnet of ``zone`` with its own NAT gateway (in the zone's public subnet)."""
    subnet = _subnet(comp, network_name, f"private-{zone}", cidrs, region, public=False)
    nat = f"{network_name}-nat-{zone}"
    comp.emit(f"{nat}-eip", EIP.new(
        {"region": region, "domain": "vpc", "tags": name_tag(comp, f"{nat}-eip")}))
    comp.emit(nat, NAT_GATEWAY.new({
        "region": region,
        "connectivityType": "public",
        "allocationIdRef": comp.ref(f"{nat}-eip"),
        "subnetIdRef": comp.ref(f"{network_name}-public-{zone}"),
        "tags": name_tag(comp, nat),
    }), uses=[gateway])  # a public NAT gateway fails to create without the Internet gateway
    table = _route_table(comp, f"{network_name}-private-{zone}-rt", network_name, region)
    _default_route(comp, f"{network_name}-private-{zone}-default", table, region,
                   {"natGatewayIdRef": comp.ref(nat)})
    _associate(comp, subnet, table, region)


# -- IAM ------------------------------------------------------------------------------------


def _role(
    comp: Composition, name: str, service: str, description: str, *, uses: Iterable[str] = (),
    template: Mapping[str, Any] | None = None,
) -> None:
    role = {
        "assumeRolePolicy": trust_policy(service, "sts:AssumeRole", "sts:TagSession"),
        "description": description,
        "tags": name_tag(comp, name),
    }
    comp.emit(name, IAM_ROLE.new(role), uses=uses, template=template)


def _attach(
    comp: Composition, name: str, role: str, policy: Mapping[str, Any], *,
    uses: Iterable[str] = (),
) -> None:
    """Attach a policy (``{"policyArn": ...}`` or ``{"policyArnRef": ...}``) to ``role``."""
    comp.emit(name, ROLE_POLICY_ATTACHMENT.new({"roleRef": comp.ref(role), **policy}),
              uses=uses)


def _managed_role(
    comp: Composition, name: str, service: str, *, region: str, policies: Mapping[str, str],
    description: str,
) -> list[str]:
    """A role ``service`` assumes with AWS managed ``policies``; returns the attachments."""
    _role(comp, name, service, description)
    attachments = []
    for part, policy in sorted(policies.items()):
        _attach(comp, f"{name}-{part}", name, {"policyArn": managed_policy_arn(region, policy)})
        attachments.append(f"{name}-{part}")
    return attachments


def node_role_attachments(cluster: str) -> list[str]:
    """Composition names of the node role's policy attachments: a node group needs them."""
    return [f"{cluster}-node-role-{part}" for part in sorted(NODE_POLICIES)]


# -- cluster --------------------------------------------------------------------------------


@provides("cluster", CLOUD)
def cluster(
    comp: Composition, name: str, spec: ClusterSpec, *, uses: Iterable[str],
    template: Mapping[str, Any] | None,
) -> None:
    """An EKS control plane with its IAM role, plus the node role its node groups share.

    The kubeconfig is written by the ``ClusterAuth`` the extra below adds: an EKS Cluster
    publishes no kubeconfig of its own.
    """
    cluster_attachments = _managed_role(
        comp, f"{name}-role", "eks.amazonaws.com", region=spec.region,
        policies=CLUSTER_POLICIES, description="EKS control plane role")
    _managed_role(comp, f"{name}-node-role", "ec2.amazonaws.com", region=spec.region,
                  policies=NODE_POLICIES, description="EKS worker node role")
    for_provider: dict[str, Any] = {
        "region": spec.region,
        "roleArnRef": comp.ref(f"{name}-role"),
        "vpcConfig": _vpc_config(comp, spec),
        "accessConfig": {
            "authenticationMode": AUTHENTICATION_MODE,
            # The provider's identity creates the cluster; ClusterAuth's token is that
            # identity's, so it must stay cluster admin for Helm and Kubernetes providers.
            "bootstrapClusterCreatorAdminPermissions": True,
        },
        "enabledClusterLogTypes": list(CLUSTER_LOG_TYPES),
    }
    if spec.version:
        for_provider["version"] = spec.version
    if spec.services_cidr:
        for_provider["kubernetesNetworkConfig"] = {"serviceIpv4Cidr": spec.services_cidr}
    comp.emit(name, EKS_CLUSTER.new(for_provider), uses=[*uses, *cluster_attachments],
              template=template)


def _vpc_config(comp: Composition, spec: ClusterSpec) -> dict[str, Any]:
    """Subnets and API endpoint access: private clusters answer only inside the VPC, unless
    the environment lists ``aws.endpointPublicAccessCidrs`` (say, the management cluster's
    egress IPs) so Crossplane's Helm and Kubernetes providers can reach the API."""
    config: dict[str, Any] = {
        "subnetIdRefs": [comp.ref(s) for s in node_subnets(comp, spec.network)],
        "endpointPrivateAccess": True,
        "endpointPublicAccess": not spec.private,
    }
    allowed = get_path(comp.env, PUBLIC_ACCESS_CIDRS_KEY)
    if spec.private and allowed:
        if not isinstance(allowed, list) or not all(isinstance(c, str) for c in allowed):
            raise InputError(f"environment.{PUBLIC_ACCESS_CIDRS_KEY}", "must be a list of CIDRs")
        config["endpointPublicAccess"] = True
        config["publicAccessCidrs"] = sorted(allowed)
    return config


@extra("cluster", CLOUD)
def cluster_access_and_addons(comp: Composition, name: str, spec: ClusterSpec) -> None:
    """The kubeconfig (``ClusterAuth``) and the EKS managed addons of cluster ``name``.

    ClusterAuth writes a kubeconfig with a short-lived token for the provider's identity and
    refreshes it before it expires, into ``spec.connection_secret``.
    """
    auth = {"region": spec.region, "clusterNameRef": comp.ref(name)}
    secret = {"name": spec.connection_secret, "namespace": spec.connection_namespace}
    comp.emit(f"{name}-auth", CLUSTER_AUTH.new(auth, writeConnectionSecretToRef=secret),
              uses=[name])
    has_nodes = bool(comp.observed.names_of(NODE_GROUP.api_version, NODE_GROUP.kind))
    versions = addon_versions(comp)
    for addon in ADDONS:
        addon_name = f"{name}-addon-{addon}"
        if addon in NEEDS_NODES and not has_nodes and addon_name not in comp.observed:
            comp.hold(addon_name, "a node group")
            continue
        for_provider = {
            "region": spec.region,
            "clusterNameRef": comp.ref(name),
            "addonName": addon,
            # EKS bootstraps self-managed vpc-cni, kube-proxy and CoreDNS; take them over.
            "resolveConflictsOnCreate": "OVERWRITE",
            "resolveConflictsOnUpdate": "OVERWRITE",
        }
        if addon in versions:
            for_provider["addonVersion"] = versions[addon]
        comp.emit(addon_name, ADDON.new(for_provider), uses=[name])


def addon_versions(comp: Composition) -> dict[str, str]:
    """Addon versions the environment pins (``aws.addonVersions``), by addon name.

    Without a pin EKS installs the addon's default version for the cluster's Kubernetes minor
    at creation, and the provider then keeps that version: a cluster upgrade does not upgrade
    its addons (kube-proxy and vpc-cni must follow the control plane). Platform teams that
    upgrade clusters pin the versions here, next to the Kubernetes version.
    """
    field = f"environment.{ADDON_VERSIONS_KEY}"
    pinned = get_path(comp.env, ADDON_VERSIONS_KEY)
    if pinned is None:
        return {}
    if not isinstance(pinned, Mapping) or not all(
        isinstance(v, str) and v for v in pinned.values()
    ):
        raise InputError(field, "must be a map of addon name to version, e.g. vpc-cni: v1.20.0")
    unknown = sorted(set(map(str, pinned)) - set(ADDONS))
    if unknown:
        raise InputError(field, f"unknown addons {', '.join(unknown)}; known: {', '.join(ADDONS)}")
    return {str(k): str(v) for k, v in pinned.items()}


# -- node pools -----------------------------------------------------------------------------


@provides("node_pool", CLOUD)
def node_pool(
    comp: Composition, name: str, spec: NodePoolSpec, *, uses: Iterable[str],
    template: Mapping[str, Any] | None,
) -> None:
    """An EKS managed node group in the cluster's node subnets.

    ``desiredSize`` goes to ``initProvider``: it is only the starting size, after which the
    cluster autoscaler owns it (inside ``minSize``..``maxSize``) without Crossplane undoing it.
    """
    for_provider = {
        "region": spec.region,
        "clusterNameRef": comp.ref(spec.cluster),
        # Resolved on every reconcile, not once: the default (IfNotPresent) would keep the
        # version of the first pass, and nodes would never follow a control-plane upgrade.
        "versionRef": {**comp.ref(spec.cluster), "policy": {"resolve": "Always"}},
        "nodeRoleArnRef": comp.ref(f"{spec.cluster}-node-role"),
        "subnetIdRefs": [comp.ref(s) for s in node_subnets(comp, spec.network)],
        "instanceTypes": [spec.machine_type],
        "capacityType": "ON_DEMAND",
        "scalingConfig": {"minSize": spec.min_nodes, "maxSize": spec.max_nodes},
        "updateConfig": {"maxUnavailable": 1},
        "labels": {"platform.fn.crossplane.io/pool": spec.pool},
        "tags": autoscaler_discovery_tags(eks_cluster_name(comp, spec.cluster)),
    }
    init_provider = {"scalingConfig": {"desiredSize": max(spec.min_nodes, 1)}}
    comp.emit(name, NODE_GROUP.new(for_provider, initProvider=init_provider),
              uses=[*uses, *node_role_attachments(spec.cluster)], template=template)


# -- cluster autoscaler ---------------------------------------------------------------------


@extra("cluster", CLOUD)
def cluster_autoscaler(comp: Composition, name: str, spec: ClusterSpec) -> None:
    """The cluster autoscaler, which resizes node groups within their min/max.

    Installed with Helm through the composer's ``providers-helm`` ProviderConfig into
    ``kube-system``, with an IAM role bound by EKS Pod Identity (no OIDC provider, no
    ServiceAccount annotation). The release waits for the association: an autoscaler started
    without credentials crash-loops until restarted. The environment's
    ``charts.cluster-autoscaler`` may pin another ``version`` or set ``disabled`` (say, where
    Karpenter scales nodes instead).
    """
    pinned, disabled = chart_settings(comp, AUTOSCALER_CHART)
    if disabled:
        return
    cluster_name = eks_cluster_name(comp, name)
    identity = f"{name}-autoscaler"
    association = _pod_identity(
        comp, identity, cluster=name, region=spec.region, namespace=AUTOSCALER_NAMESPACE,
        service_account=AUTOSCALER_SERVICE_ACCOUNT,
        description=f"{AUTOSCALER_NAMESPACE}/{AUTOSCALER_SERVICE_ACCOUNT} in {comp.name}"
                    " (cluster-autoscaler)",
        policy_description=f"cluster-autoscaler of {comp.name}: its own node groups only",
        policy=autoscaler_policy(cluster_name, spec.region), uses=[name],
    )
    add_helm_release(
        comp,
        f"{identity}-release",
        chart=AUTOSCALER_CHART,
        repository=AUTOSCALER_REPOSITORY,
        version=pinned or autoscaler_chart_version(comp, name, spec),
        namespace=AUTOSCALER_NAMESPACE,
        values=autoscaler_values(cluster_name, spec.region),
        provider_config=comp.resource_name(HELM_PROVIDER_CONFIG),
        uses=[HELM_PROVIDER_CONFIG, name, association],
    )


def chart_settings(comp: Composition, chart: str) -> tuple[str | None, bool]:
    """``charts.<chart>.{version,disabled}`` from the environment, as the composer reads them
    for its own charts."""
    field = f"environment.charts.{chart}"
    charts = comp.env.get("charts") or {}
    settings = charts.get(chart) if isinstance(charts, Mapping) else None
    if settings is None:
        return None, False
    if not isinstance(settings, Mapping):
        raise InputError(field, "must be a map with version and disabled")
    version, disabled = settings.get("version"), settings.get("disabled", False)
    if version is not None and (not isinstance(version, str) or not version):
        raise InputError(f"{field}.version", "must be a chart version string")
    if not isinstance(disabled, bool):
        raise InputError(f"{field}.disabled", "must be true or false")
    return version, disabled


def _minor_key(minor: str) -> tuple[int, int] | None:
    """``(1, 33)`` for ``"1.33"`` (or ``"1.33.2"``), None for anything else."""
    parts = minor.split(".")
    if len(parts) < 2 or not (parts[0].isdigit() and parts[1].isdigit()):
        return None
    return int(parts[0]), int(parts[1])


def autoscaler_chart_version(comp: Composition, cluster: str, spec: ClusterSpec) -> str:
    """The chart release matching the cluster's Kubernetes minor.

    The minor is the one asked for, else the one EKS reports for the running cluster (EKS
    picks its newest when none is asked for). Outside the known range the nearest known
    release is used and a warning says to pin one.
    """
    asked = spec.version or comp.observed_value(cluster, "status.atProvider.version")
    key = _minor_key(str(asked)) if asked else None
    known = sorted((_minor_key(m) or (0, 0), m) for m in AUTOSCALER_CHART_VERSIONS)
    matching = [m for k, m in known if k == key]
    if matching:
        return AUTOSCALER_CHART_VERSIONS[matching[0]]
    nearest = known[0][1] if key is not None and key < known[0][0] else known[-1][1]
    if asked:
        comp.event(
            f"cluster-autoscaler has no chart release known for Kubernetes {asked}; using "
            f"{AUTOSCALER_CHART_VERSIONS[nearest]} (Kubernetes {nearest}). Set "
            f"charts.{AUTOSCALER_CHART}.version in the environment to match the cluster.",
            warning=True, reason="AutoscalerVersion",
        )
    return AUTOSCALER_CHART_VERSIONS[nearest]


def autoscaler_values(cluster_name: str, region: str) -> dict[str, Any]:
    """Chart values: discover this cluster's node groups by tag, in its region, under the
    service account the Pod Identity association names."""
    return {
        "cloudProvider": "aws",
        "awsRegion": region,
        "autoDiscovery": {"clusterName": cluster_name},
        "fullnameOverride": AUTOSCALER_CHART,
        "rbac": {"serviceAccount": {"create": True, "name": AUTOSCALER_SERVICE_ACCOUNT}},
    }


def autoscaler_discovery_tags(cluster_name: str) -> dict[str, str]:
    """The auto-discovery tags of a node group of ``cluster_name``."""
    return {
        AUTOSCALER_ENABLED_TAG: "true",
        f"{AUTOSCALER_CLUSTER_TAG_PREFIX}{cluster_name}": "owned",
    }


def autoscaler_policy(cluster_name: str, region: str) -> str:
    """The autoscaler's IAM policy, least privilege (the autoscaler's documented minimum).

    Reads are account-wide (describe calls take no resource). Resizing and terminating are
    limited to Auto Scaling groups tagged as this cluster's, and reading node groups (their
    labels and taints, to scale a pool up from zero) to this cluster's node groups.
    """
    owned = {f"aws:ResourceTag/{tag}": value
             for tag, value in autoscaler_discovery_tags(cluster_name).items()}
    node_groups = f"arn:{partition(region)}:eks:{region}:*:nodegroup/{cluster_name}/*"
    return policy_document([
        {
            "Effect": "Allow",
            "Action": [
                "autoscaling:DescribeAutoScalingGroups",
                "autoscaling:DescribeAutoScalingInstances",
                "autoscaling:DescribeLaunchConfigurations",
                "autoscaling:DescribeScalingActivities",
                "autoscaling:DescribeTags",
                "ec2:DescribeImages",
                "ec2:DescribeInstanceTypes",
                "ec2:DescribeLaunchTemplateVersions",
                "ec2:GetInstanceTypesFromInstanceRequirements",
            ],
            "Resource": ["*"],
        },
        {
            "Effect": "Allow",
            "Action": [
                "autoscaling:SetDesiredCapacity",
                "autoscaling:TerminateInstanceInAutoScalingGroup",
            ],
            "Resource": ["*"],
            "Condition": {"StringEquals": owned},
        },
        {"Effect": "Allow", "Action": ["eks:DescribeNodegroup"], "Resource": [node_groups]},
    ])


# -- DNS ------------------------------------------------------------------------------------


@provides("dns_zone", CLOUD)
def dns_zone(
    comp: Composition, name: str, spec: DnsZoneSpec, *, uses: Iterable[str],
    template: Mapping[str, Any] | None,
) -> None:
    """A Route53 hosted zone; a private one is associated with the network's VPC."""
    visibility = "private" if spec.private else "public"
    for_provider: dict[str, Any] = {  # Route53 is global: a Zone has no region
        "name": spec.domain,
        "comment": f"{visibility} zone of {comp.name}, managed by Crossplane",
    }
    if spec.private:
        if not spec.network:
            raise InputError("spec.parameters.privateCluster", "a private zone needs a network")
        for_provider["vpc"] = [{"vpcIdRef": comp.ref(spec.network),
                                "vpcRegion": composite_region(comp)}]
    comp.emit(name, ZONE.new(for_provider), uses=uses, template=template)


# -- workload identity ----------------------------------------------------------------------


@provides("workload_identity", CLOUD)
def workload_identity(
    comp: Composition, name: str, spec: WorkloadIdentitySpec, *, uses: Iterable[str],
    template: Mapping[str, Any] | None,
) -> None:
    """An IAM role the service account assumes through EKS Pod Identity, allowed to solve
    ACME DNS01 challenges in ``spec.zones``.

    Pod Identity, not IRSA: no OIDC provider and thumbprint to manage, a trust policy that
    doesn't embed the cluster's issuer URL (known only once the cluster is observed), and no
    ServiceAccount annotation whose value would change after the first pass.
    """
    region = composite_region(comp)
    _pod_identity(
        comp, name, cluster=spec.cluster, region=region, namespace=spec.namespace,
        service_account=spec.service_account,
        description=f"{spec.namespace}/{spec.service_account} in {comp.name} ({spec.purpose})",
        policy_description=f"DNS01 challenges of {comp.name} in its Route53 zones",
        policy=dns01_policy(comp, spec.zones, region), uses=uses, template=template,
    )


def _pod_identity(
    comp: Composition, name: str, *, cluster: str, region: str, namespace: str,
    service_account: str, description: str, policy_description: str, policy: str,
    uses: Iterable[str], template: Mapping[str, Any] | None = None,
) -> str:
    """An IAM role with its own ``policy``, bound to a service account by EKS Pod Identity.

    Emits ``name`` (Role), ``name-policy``, ``name-policy-attachment`` and
    ``name-association``; returns the association's name: pods started before it exists get
    no credentials, so whatever runs them waits for it.
    """
    _role(comp, name, POD_IDENTITY_SERVICE, description, uses=uses, template=template)
    comp.emit(f"{name}-policy", IAM_POLICY.new(
        {"description": policy_description, "policy": policy}))
    # Held with the role (which waits for the cluster): no reference left dangling meanwhile.
    _attach(comp, f"{name}-policy-attachment", name,
            {"policyArnRef": comp.ref(f"{name}-policy")}, uses=[name])
    association = f"{name}-association"
    comp.emit(association, POD_IDENTITY_ASSOCIATION.new({
        "region": region,
        "clusterNameRef": comp.ref(cluster),
        "namespace": namespace,
        "serviceAccount": service_account,
        "roleArnRef": comp.ref(name),
    }), uses=[cluster])
    return association


def dns01_policy(comp: Composition, zones: Iterable[str], region: str) -> str:
    """Route53 permissions for cert-manager's DNS01 solver, least privilege.

    Record changes are limited to ``_acme-challenge`` TXT records of the zones' domains (IAM
    condition keys, as cert-manager documents), and to the zones' own ARNs once their IDs are
    observed; until then to any hosted zone, still only for those record names.
    """
    zone_names = sorted(zones)
    domains = sorted({str(get_path(comp.desired[z].body, "spec.forProvider.name"))
                      for z in zone_names if z in comp.desired})
    if not domains:  # ForAllValues over an empty list would allow every record name
        raise InputError("spec.parameters.domain", "a DNS identity needs at least one DNS zone")
    zone_ids = [comp.observed_value(z, "status.atProvider.zoneId") for z in zone_names]
    arn = f"arn:{partition(region)}:route53:::"
    zone_arns = ([f"{arn}hostedzone/{zid}" for zid in sorted(zone_ids)]
                 if zone_ids and all(zone_ids) else [f"{arn}hostedzone/*"])
    record_names = [f"_acme-challenge.{d}" for d in domains] + [
        f"_acme-challenge.*.{d}" for d in domains]
    return policy_document([
        {"Effect": "Allow", "Action": ["route53:GetChange"], "Resource": [f"{arn}change/*"]},
        {"Effect": "Allow", "Action": ["route53:ListResourceRecordSets"], "Resource": zone_arns},
        {
            "Effect": "Allow",
            "Action": ["route53:ChangeResourceRecordSets"],
            "Resource": zone_arns,
            "Condition": {
                "ForAllValues:StringEquals": {
                    "route53:ChangeResourceRecordSetsRecordTypes": ["TXT"]},
                "ForAllValues:StringLike": {
                    "route53:ChangeResourceRecordSetsNormalizedRecordNames": record_names},
            },
        },
        {"Effect": "Allow", "Action": ["route53:ListHostedZonesByName"], "Resource": ["*"]},
    ])


# -- values ---------------------------------------------------------------------------------


@provides("cluster_credentials", CLOUD)
def cluster_credentials(comp: Composition, cluster_name: str, spec: ClusterSpec) -> dict[str, Any]:
    """No ``identity`` block: the kubeconfig alone works.

    ClusterAuth's kubeconfig carries a bearer token (not an ``exec`` aws-iam-authenticator
    plugin, which provider pods lack) and ClusterAuth refreshes it before its 15-minute expiry.
    ``AWSWebIdentityCredentials`` would additionally need IRSA on the provider pods, which a
    management cluster need not have.
    """
    return {}


@provides("internal_load_balancer", CLOUD)
def internal_load_balancer(comp: Composition) -> dict[str, str]:
    """Annotations making a LoadBalancer Service internal: the in-tree AWS cloud provider reads
    ``aws-load-balancer-internal``, the AWS Load Balancer Controller ``-scheme``."""
    return {
        "service.beta.kubernetes.io/aws-load-balancer-internal": "true",
        "service.beta.kubernetes.io/aws-load-balancer-scheme": "internal",
    }


@provides("identity_annotations", CLOUD)
def identity_annotations(
    comp: Composition, name: str, spec: WorkloadIdentitySpec
) -> dict[str, str]:
    """None: EKS Pod Identity binds the role by association, not by ServiceAccount annotation."""
    return {}


@provides("identity_pod_labels", CLOUD)
def identity_pod_labels(comp: Composition) -> dict[str, str]:
    """None: the Pod Identity webhook injects credentials into every pod of an associated SA."""
    return {}


@provides("cluster_status", CLOUD)
def cluster_status(comp: Composition, cluster_name: str) -> None:
    """XR status from the observed EKS cluster: endpoint, CA, name and OIDC issuer."""
    comp.status_from(cluster_name, "status.atProvider.endpoint", "clusterEndpoint")
    comp.status_from(cluster_name, "status.atProvider.certificateAuthority[0].data", "clusterCA")
    comp.status_from(cluster_name, "status.atProvider.id", "clusterName")
    comp.status_from(cluster_name, "status.atProvider.identity[0].oidc[0].issuer", "oidcIssuer")


__all__ = [
    "ADDONS",
    "cluster",
    "cluster_autoscaler",
    "dns_zone",
    "network",
    "node_pool",
    "workload_identity",
]


@provides("identity_binding", "aws")
def identity_binding(comp: Composition, name: str) -> str:
    """The Pod Identity association: pods get AWS credentials only once it exists."""
    return f"{name}-association"
