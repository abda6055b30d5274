"""EKS: the control plane with its IAM roles, the kubeconfig (ClusterAuth), managed addons and
managed node groups.

Composed names: ``<name>`` (EKS Cluster), ``<name>-role`` + ``<name>-role-cluster-policy``,
``<name>-node-role`` + ``<name>-node-role-{worker,cni,ecr}``; extra: ``<name>-auth``
(ClusterAuth, the kubeconfig) and ``<name>-addon-<addon>``; node pool: ``<name>`` (NodeGroup).
"""

from __future__ import annotations

from typing import Any

from fnplatform.clouds.aws.common import CLOUD, eks_cluster_name
from fnplatform.clouds.aws.iam import NODE_POLICIES, add_managed_role, node_role_attachments
from fnplatform.clouds.aws.kinds import ADDON, CLUSTER_AUTH, EKS_CLUSTER, NODE_GROUP
from fnplatform.clouds.aws.network import node_subnets
from fnplatform.clouds.aws.settings import ADDONS, aws_environment
from fnplatform.clouds.aws.tags import autoscaler_discovery_tags
from fnplatform.composition import Composition
from fnplatform.library.registry import extra, provides
from fnplatform.library.specs import ClusterSpec, NodePoolSpec

CLUSTER_POLICIES = {"cluster-policy": "AmazonEKSClusterPolicy"}
# A Deployment: without nodes the addon stays DEGRADED and its creation times out.
NEEDS_NODES = frozenset({"coredns"})
CLUSTER_LOG_TYPES = ["api", "audit", "authenticator"]
AUTHENTICATION_MODE = "API_AND_CONFIG_MAP"


@provides("cluster", CLOUD)
def cluster(
    comp: Composition, name: str, spec: ClusterSpec,
) -> None:
    """An EKS control plane with its IAM role, plus the node role its node groups share.

    The kubeconfig is written by the ``ClusterAuth`` the extra below adds: an EKS Cluster
    publishes no kubeconfig of its own.
    """
    cluster_attachments = add_managed_role(
        comp, f"{name}-role", "eks.amazonaws.com", region=comp.region,
        policies=CLUSTER_POLICIES, description="EKS control plane role")
    add_managed_role(comp, f"{name}-node-role", "ec2.amazonaws.com", region=comp.region,
                  policies=NODE_POLICIES, description="EKS worker node role")
    for_provider: dict[str, Any] = {
        "region": comp.region,
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
    comp.emit(name, EKS_CLUSTER.new(for_provider), uses=cluster_attachments)


def _vpc_config(comp: Composition, spec: ClusterSpec) -> dict[str, Any]:
    """Subnets and API endpoint access: private clusters answer only inside the VPC, unless
    the environment lists ``aws.endpointPublicAccessCidrs`` (say, the management cluster's
    egress IPs) so Crossplane's Helm and Kubernetes providers can reach the API."""
    config: dict[str, Any] = {
        "subnetIdRefs": [comp.ref(s) for s in node_subnets(comp, spec.network)],
        "endpointPrivateAccess": True,
        "endpointPublicAccess": not spec.private,
    }
    allowed = aws_environment(comp).endpointPublicAccessCidrs
    if spec.private and allowed:
        config["endpointPublicAccess"] = True
        config["publicAccessCidrs"] = sorted(allowed)
    return config


@extra("cluster", CLOUD)
def cluster_access_and_addons(comp: Composition, name: str, spec: ClusterSpec) -> None:
    """The kubeconfig (``ClusterAuth``) and the EKS managed addons of cluster ``name``.

    ClusterAuth writes a kubeconfig with a short-lived token for the provider's identity and
    refreshes it before it expires, into ``spec.connection_secret``.
    """
    auth = {"region": comp.region, "clusterNameRef": comp.ref(name)}
    secret = {"name": spec.connection_secret, "namespace": spec.connection_namespace}
    comp.emit(f"{name}-auth", CLUSTER_AUTH.new(auth, writeConnectionSecretToRef=secret),
              uses=[name])
    has_nodes = bool(comp.observed.names_of(NODE_GROUP.api_version, NODE_GROUP.kind))
    versions = aws_environment(comp).addonVersions
    for addon in ADDONS:
        addon_name = f"{name}-addon-{addon}"
        if addon in NEEDS_NODES and not has_nodes and addon_name not in comp.observed:
            comp.hold(addon_name, "a node group")
            continue
        for_provider = {
            "region": comp.region,
            "clusterNameRef": comp.ref(name),
            "addonName": addon,
            # EKS bootstraps self-managed vpc-cni, kube-proxy and CoreDNS; take them over.
            "resolveConflictsOnCreate": "OVERWRITE",
            "resolveConflictsOnUpdate": "OVERWRITE",
        }
        if addon in versions:
            for_provider["addonVersion"] = versions[addon]
        comp.emit(addon_name, ADDON.new(for_provider), uses=[name])


@provides("node_pool", CLOUD)
def node_pool(
    comp: Composition, name: str, spec: NodePoolSpec,
) -> None:
    """An EKS managed node group in the cluster's node subnets.

    ``desiredSize`` goes to ``initProvider``: it is only the starting size, after which the
    cluster autoscaler owns it (inside ``minSize``..``maxSize``) without Crossplane undoing it.
    """
    for_provider = {
        "region": comp.region,
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
              uses=node_role_attachments(spec.cluster))

