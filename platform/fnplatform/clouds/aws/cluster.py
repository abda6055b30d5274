"""EKS: the control plane with its IAM roles, the kubeconfig (ClusterAuth), managed addons and
managed node groups.

Composed names: ``<name>`` (EKS Cluster), ``<name>-role`` + ``<name>-role-cluster-policy``,
``<name>-node-role`` + ``<name>-node-role-{worker,cni,ecr}``; extra: ``<name>-auth``
(ClusterAuth, the kubeconfig) and ``<name>-addon-<addon>``; node pool: ``<name>`` (NodeGroup).
"""

from __future__ import annotations

from typing import Any

from fnplatform.clouds.aws.common import eks_cluster_name, managed_policy_arn
from fnplatform.clouds.aws.iam import (
    CNI_POLICY,
    NODE_POLICIES,
    POD_IDENTITY_SERVICE,
    add_managed_role,
    add_role,
    attach_policy,
    node_role_attachments,
)
from fnplatform.clouds.aws.kinds import (
    ADDON,
    CLUSTER_AUTH,
    EKS_CLUSTER,
    LAUNCH_TEMPLATE,
    NODE_GROUP,
    OIDC_PROVIDER,
)
from fnplatform.clouds.aws.network import all_subnets, node_subnets
from fnplatform.clouds.aws.settings import ADDONS, aws_environment
from fnplatform.clouds.aws.tags import autoscaler_discovery_tags
from fnplatform.composition import Composition
from fnplatform.errors import InputError, SpecError
from fnplatform.holds import Wait
from fnplatform.library.cluster import (
    ClusterSpec,
    NodePoolSpec,
    add_cluster,
    add_node_pool,
    autoscaler_values,
    cluster_access,
    cluster_credentials,
    cluster_name_rule,
    cluster_status,
    kubeconfig_source,
    running_version,
)
from fnplatform.library.rules import NameRule
from fnplatform.rules.guard import refuse_replacement, replacement_refused

CLUSTER_POLICIES = {"cluster-policy": "AmazonEKSClusterPolicy"}
# A Deployment: without nodes the addon stays DEGRADED and its creation times out.
NEEDS_NODES = frozenset({"coredns"})
CLUSTER_LOG_TYPES = ["api", "audit", "authenticator"]
OIDC_ISSUER = "status.atProvider.identity[0].oidc[0].issuer"
STS_AUDIENCE = "sts.amazonaws.com"  # the audience IRSA's projected tokens carry
CNI_ADDON, CNI_SERVICE_ACCOUNT = "vpc-cni", "aws-node"
#: IMDSv2 only, one hop: the node reaches its metadata, pods (one hop further) don't, so no
#: pod can take the node role's credentials.
NODE_METADATA = {"httpEndpoint": "enabled", "httpTokens": "required", "httpPutResponseHopLimit": 1}


def cni_role(cluster: str) -> str:
    """Composition name of vpc-cni's own IAM role."""
    return f"{cluster}-vpc-cni"


def launch_template(cluster: str) -> str:
    """Composition name of the node groups' launch template."""
    return f"{cluster}-nodes"


def _cni_role(comp: Composition, cluster: str) -> None:
    """vpc-cni's Pod Identity role with the CNI policy (bound by the addon's association)."""
    role = cni_role(cluster)
    add_role(comp, role, POD_IDENTITY_SERVICE, f"vpc-cni (aws-node) of {comp.name}")
    attach_policy(
        comp,
        f"{role}-cni",
        role,
        {"policyArn": managed_policy_arn(comp.region, CNI_POLICY)},
        uses=[role],
    )


def _node_launch_template(comp: Composition, cluster: str) -> None:
    """The node groups' launch template: IMDSv2 with a hop limit of 1, nothing else (no AMI,
    so EKS keeps choosing the EKS-optimised one for ``releaseVersion``)."""
    name = launch_template(cluster)
    comp.emit(
        name,
        LAUNCH_TEMPLATE.new(
            {
                "region": comp.region,
                "name": comp.resource_name(name),
                "description": f"EKS nodes of {comp.name}: IMDSv2, hop limit 1",
                "metadataOptions": dict(NODE_METADATA),
                "updateDefaultVersion": True,
            }
        ),
    )


AUTHENTICATION_MODE = "API_AND_CONFIG_MAP"


@add_cluster.on("aws")
def cluster(
    comp: Composition,
    name: str,
    spec: ClusterSpec,
) -> None:
    """An EKS control plane with its IAM role, plus the node role its node groups share.

    The kubeconfig is written by the ``ClusterAuth`` the extra below adds: an EKS Cluster
    publishes no kubeconfig of its own.
    """
    cluster_attachments = add_managed_role(
        comp,
        f"{name}-role",
        "eks.amazonaws.com",
        region=comp.region,
        policies=CLUSTER_POLICIES,
        description="EKS control plane role",
    )
    add_managed_role(
        comp,
        f"{name}-node-role",
        "ec2.amazonaws.com",
        region=comp.region,
        policies=NODE_POLICIES,
        description="EKS worker node role",
    )
    _cni_role(comp, name)
    _node_launch_template(comp, name)
    for_provider: dict[str, Any] = {
        "region": comp.region,
        "roleArnRef": comp.ref(f"{name}-role"),
        "vpcConfig": _vpc_config(comp, spec),
        "enabledClusterLogTypes": list(CLUSTER_LOG_TYPES),
    }
    if spec.version:
        for_provider["version"] = spec.version
    comp.emit(
        name,
        EKS_CLUSTER.new(for_provider, initProvider=_creation_only(spec)),
        uses=cluster_attachments,
        external_name=spec.cluster_name,
    )


def _creation_only(spec: ClusterSpec) -> dict[str, Any]:
    """Cluster settings that only mean something at creation: ``spec.initProvider``.

    An adopted cluster (``import``, manage mode) keeps its own: EKS can't set
    ``bootstrapClusterCreatorAdminPermissions`` after creation (Terraform forces a new
    cluster), ``authenticationMode`` only moves forward (``CONFIG_MAP`` to
    ``API_AND_CONFIG_MAP`` to ``API``, never back), and the Service range is fixed.
    """
    init: dict[str, Any] = {
        "accessConfig": {
            "authenticationMode": AUTHENTICATION_MODE,
            # The provider's identity creates the cluster; ClusterAuth's token is that
            # identity's, so it must stay cluster admin for Helm and Kubernetes providers.
            "bootstrapClusterCreatorAdminPermissions": True,
        },
    }
    if spec.services_cidr:
        init["kubernetesNetworkConfig"] = {"serviceIpv4Cidr": spec.services_cidr}
    return init


def _vpc_config(comp: Composition, spec: ClusterSpec) -> dict[str, Any]:
    """Subnets and API endpoint access, never open to the whole internet by default.

    The public endpoint answers only the CIDRs in ``aws.endpointPublicAccessCidrs`` (say, the
    management cluster's egress IPs, so Crossplane's Helm and Kubernetes providers reach the
    API). A public cluster needs that list (EKS's own default is ``0.0.0.0/0``); a private
    cluster without it has no public endpoint at all.
    """
    config: dict[str, Any] = {
        "subnetIdRefs": [comp.ref(s) for s in node_subnets(spec.network, spec.private_network)],
        "endpointPrivateAccess": True,
        "endpointPublicAccess": False,
    }
    allowed = aws_environment(comp).endpointPublicAccessCidrs
    if not spec.private and not allowed:
        raise InputError(
            "environment.aws.endpointPublicAccessCidrs",
            "required for a public cluster: EKS would open the API endpoint to 0.0.0.0/0; "
            "list the CIDRs allowed to reach it, such as the management cluster's egress "
            "(0.0.0.0/0 opens it to the internet on purpose), or make the cluster private",
        )
    if allowed:
        config["endpointPublicAccess"] = True
        config["publicAccessCidrs"] = sorted(allowed)
    return config


@add_cluster.extra("aws")
def cluster_access_and_addons(comp: Composition, name: str, spec: ClusterSpec) -> None:
    """The kubeconfig (``ClusterAuth``) and the EKS managed addons of cluster ``name``.

    ClusterAuth writes a kubeconfig with a short-lived token for the provider's identity and
    refreshes it before it expires, into ``spec.connection_secret``.
    """
    auth = {"region": comp.region, "clusterNameRef": comp.ref(name)}
    secret = {"name": spec.connection_secret, "namespace": spec.connection_namespace}
    comp.emit(
        f"{name}-auth", CLUSTER_AUTH.new(auth, writeConnectionSecretToRef=secret), uses=[name]
    )
    has_nodes = bool(comp.observed.names_of(NODE_GROUP.api_version, NODE_GROUP.kind))
    versions = aws_environment(comp).addonVersions
    for addon in ADDONS:
        addon_name = f"{name}-addon-{addon}"
        if addon in NEEDS_NODES and not has_nodes and addon_name not in comp.observed:
            comp.hold(addon_name, Wait(None, "a node group"))
            continue
        for_provider: dict[str, Any] = {
            "region": comp.region,
            "clusterNameRef": comp.ref(name),
            "addonName": addon,
            # EKS bootstraps self-managed vpc-cni, kube-proxy and CoreDNS; take them over.
            "resolveConflictsOnCreate": "OVERWRITE",
            "resolveConflictsOnUpdate": "OVERWRITE",
        }
        if addon in versions:
            for_provider["addonVersion"] = versions[addon]
        uses = [name]
        if addon == CNI_ADDON:
            role_arn = comp.observed_value(cni_role(name), "status.atProvider.arn")
            if role_arn is None and addon_name not in comp.observed:
                comp.hold(addon_name, Wait(cni_role(name), "status.atProvider.arn"))
                continue
            if role_arn is not None:
                for_provider["podIdentityAssociation"] = [
                    {"roleArn": str(role_arn), "serviceAccount": CNI_SERVICE_ACCOUNT}
                ]
            uses.append(cni_role(name))
        comp.emit(addon_name, ADDON.new(for_provider), uses=uses)


@add_cluster.extra("aws")
def oidc_provider(comp: Composition, name: str, spec: ClusterSpec) -> None:
    """``<name>-oidc``: the IAM OIDC provider for the cluster's issuer, so IRSA works.

    Workloads that assume IAM roles through a service-account token (IRSA: the async-actor
    module's actors, KEDA with ``identityOwner: workload``) need it; EKS doesn't create it.
    Its URL is the issuer the cluster reports, so it waits for the observed cluster; no
    thumbprint is given (IAM retrieves and trusts the issuer's CA itself). Status
    ``oidcProviderArn`` is what an IRSA role's trust policy names as federated principal.
    """
    oidc = f"{name}-oidc"
    issuer = comp.needs(name, OIDC_ISSUER, by=oidc, remember="oidcIssuer")
    if issuer is None:
        return
    comp.emit(
        oidc, OIDC_PROVIDER.new({"url": str(issuer), "clientIdList": [STS_AUDIENCE]}), uses=[name]
    )
    comp.status_from(oidc, "status.atProvider.arn", "oidcProviderArn")


@add_node_pool.on("aws")
def node_pool(
    comp: Composition,
    name: str,
    spec: NodePoolSpec,
) -> None:
    """An EKS managed node group in the cluster's node subnets.

    ``desiredSize`` goes to ``initProvider``: it is only the starting size, after which the
    cluster autoscaler owns it (inside ``minSize``..``maxSize``) without Crossplane undoing it
    (the provider's late-initialiser skips ``scaling_config`` when ``initProvider`` sets it).
    See :func:`_scaling` for when it is stated after creation, and :func:`_version` for the
    Kubernetes version.
    """
    subnets = _pool_subnets(comp, spec)
    for_provider: dict[str, Any] = {
        "region": comp.region,
        "clusterNameRef": comp.ref(spec.cluster),
        "nodeRoleArnRef": comp.ref(f"{spec.cluster}-node-role"),
        "subnetIdRefs": [comp.ref(s) for s in subnets],
        "instanceTypes": [spec.machine_type],
        "capacityType": "SPOT" if spec.spot else "ON_DEMAND",
        "scalingConfig": _scaling(comp, name, spec),
        "updateConfig": {"maxUnavailable": 1},
        "labels": {**spec.labels, "platform.fn.crossplane.io/pool": spec.pool},
        "tags": autoscaler_discovery_tags(eks_cluster_name(comp, spec.cluster, spec.cluster_name)),
    }
    if spec.taints:
        for_provider["taint"] = [
            {"key": t.key, **({"value": t.value} if t.value else {}), "effect": t.api_effect}
            for t in spec.taints
        ]
    version = _version(comp, spec.cluster)
    if version:
        for_provider["version"] = version
    release = aws_environment(comp).nodeReleaseVersion
    if release:
        for_provider["releaseVersion"] = release
    own_template = _pool_launch_template(comp, name, spec)
    template_name = own_template or launch_template(spec.cluster)
    running = comp.observed_value(name, "spec.forProvider.launchTemplate.name")
    wanted = comp.observed_value(template_name, "spec.forProvider.name") or comp.resource_name(
        template_name
    )
    if running and running != wanted:
        # EKS can't move a group to another launch template: a disk of its own (or back to
        # the cluster's) would replace the group.
        raise replacement_refused("disk_size_gb", "node group")
    template = _launch_template_of(comp, name, template_name)
    if template is not None:
        for_provider["launchTemplate"] = template
    elif name not in comp.observed:
        return  # held: a new group starts with the launch template (see _launch_template_of)
    # EKS replaces a group whose capacity type, subnets or launch template (not version) change.
    refuse_replacement(
        comp, name, for_provider, {"capacityType": ("spot", "ON_DEMAND")}, what="node group"
    )
    # Compared by zone: a private cluster made public moves its groups to the public subnets
    # (announced, as before); only a change of zones is the user's to make differently.
    running_refs = comp.observed_value(name, "spec.forProvider.subnetIdRefs")
    if running_refs and running_refs != for_provider["subnetIdRefs"]:  # else nothing moved
        running_zones = {subnet[-1] for subnet in _composed_names(comp, spec.network, running_refs)}
        if running_zones != {subnet[-1] for subnet in subnets}:
            raise replacement_refused("zones", "node group")
    init_provider = {"scalingConfig": {"desiredSize": max(spec.min_nodes, 1)}}
    # The launch template is named, not referenced: ``uses`` keeps it until the group is gone.
    uses = [
        *node_role_attachments(spec.cluster),
        *([template_name] if "launchTemplate" in for_provider else []),
    ]
    comp.emit(name, NODE_GROUP.new(for_provider, initProvider=init_provider), uses=uses)


def _scaling(comp: Composition, name: str, spec: NodePoolSpec) -> dict[str, Any]:
    """``minSize``/``maxSize``, plus ``desiredSize`` only when the observed size is outside them.

    EKS rejects a scaling update whose ``minSize`` is above (or ``maxSize`` below) the current
    desired size, and ``desiredSize`` lives in ``initProvider`` (ignored after creation), so
    raising ``minNodeCount`` above the running size would fail every sync. Then, and only
    then, the desired size is moved to the nearest bound; once observed inside them it is
    left to the autoscaler again.
    """
    scaling: dict[str, Any] = {"minSize": spec.min_nodes, "maxSize": spec.max_nodes}
    current = comp.observed_value(name, "status.atProvider.scalingConfig.desiredSize")
    if isinstance(current, (int, float)):
        wanted = min(max(int(current), spec.min_nodes), spec.max_nodes)
        if wanted != int(current):
            scaling["desiredSize"] = wanted
    return scaling


def _version(comp: Composition, cluster: str) -> str | None:
    """The Kubernetes version the control plane really runs (observed), or None.

    Not the desired one: provider-upjet-aws resolves ``versionRef`` with
    ``ExtractParamPath("version", false)``, the Cluster's *spec*, so during an upgrade node
    groups would ask for a version the control plane doesn't run yet, which EKS refuses. The
    observed version changes only once the control-plane upgrade is done. Without it (before
    the cluster is observed) EKS creates the group at the cluster's version.
    """
    return aws_running_version(comp, cluster)


def _launch_template_of(comp: Composition, name: str, template: str) -> dict[str, Any] | None:
    """``{name, version}`` of the nodes' launch template, or None.

    The version is the template's observed ``latestVersion`` (EKS wants a number). A new
    group waits for it (held); an existing group created without a template keeps none:
    EKS can't add one to an existing group (it forces a new group), so such pools move to
    IMDSv2 by being replaced.
    """
    version = comp.observed_value(template, "status.atProvider.latestVersion")
    existing = comp.observed_value(name, "spec.forProvider.launchTemplate")
    if name in comp.observed and not existing:
        return None
    if version is None:
        if name in comp.observed:
            return dict(existing)
        comp.hold(name, Wait(template, "status.atProvider.latestVersion"))
        return None
    return {"name": comp.resource_name(template), "version": str(version)}


@cluster_credentials.on("aws")
def aws_cluster_credentials(
    comp: Composition, cluster_name: str, spec: ClusterSpec
) -> dict[str, Any]:
    """No ``identity`` block: the kubeconfig alone works.

    ClusterAuth's kubeconfig carries a bearer token (not an ``exec`` aws-iam-authenticator
    plugin, which provider pods lack) and ClusterAuth refreshes it before its 15-minute expiry.
    ``AWSWebIdentityCredentials`` would additionally need IRSA on the provider pods, which a
    management cluster need not have.
    """
    return {}


@kubeconfig_source.on("aws")
def aws_kubeconfig_source(comp: Composition, cluster: str) -> str:
    """``<cluster>-auth``: EKS publishes no kubeconfig; ClusterAuth writes (and refreshes) it.

    Whatever reads the kubeconfig uses this resource, so a ClusterUsage keeps ClusterAuth (and
    its Secret) until the Releases and ProviderConfigs are gone: deleted first, it would take
    the Secret with it and every Release would fail to uninstall and keep its finalizer.
    """
    return f"{cluster}-auth"


@cluster_access.on("aws")
def aws_cluster_access(comp: Composition, cluster: str) -> list[str]:
    """Nothing besides ClusterAuth: its token is the creator's, cluster admin from creation."""
    return []


@cluster_status.on("aws")
def aws_cluster_status(comp: Composition, cluster_name: str) -> None:
    """XR status from the observed EKS cluster: endpoint, CA, name and OIDC issuer."""
    comp.status_from(cluster_name, "status.atProvider.endpoint", "clusterEndpoint")
    comp.status_from(cluster_name, "status.atProvider.certificateAuthority[0].data", "clusterCA")
    comp.status_from(cluster_name, "status.atProvider.id", "clusterName")
    comp.status_from(cluster_name, "status.atProvider.identity[0].oidc[0].issuer", "oidcIssuer")


@autoscaler_values.on("aws")
def aws_autoscaler_values(comp: Composition, cluster: str, spec: ClusterSpec) -> dict[str, Any]:
    """cluster-autoscaler chart values of this cloud: discover this cluster's node groups by
    tag, in its region.

    Only AWS provides this: GKE and AKS resize their pools themselves.
    """
    return {
        "cloudProvider": "aws",
        "awsRegion": comp.region,
        "autoDiscovery": {"clusterName": eks_cluster_name(comp, cluster, spec.cluster_name)},
    }


@running_version.on("aws")
def aws_running_version(comp: Composition, cluster: str) -> str | None:
    """The Kubernetes version EKS reports for the running cluster (it picks its newest when
    none was asked for)."""
    return comp.observed_string(cluster, "status.atProvider.version")


#: EKS CreateCluster: 1-100 characters, alphanumerics, '-' and '_', starting alphanumeric.
CLUSTER_NAME_RULE = NameRule(
    pattern=r"[0-9A-Za-z][A-Za-z0-9_-]*",
    min_length=1,
    max_length=100,
    description="1-100 letters, digits, '-' and '_', starting with a letter or digit "
    "(EKS cluster names)",
)


@cluster_name_rule.on("aws")
def aws_cluster_name_rule(comp: Composition) -> NameRule:
    """What EKS accepts as a cluster name."""
    return CLUSTER_NAME_RULE


#: EBS volume types a node's root disk may have.
DISK_TYPES = ("gp2", "gp3", "io1", "io2")
#: The root device of the EKS-optimised Amazon Linux AMIs (AL2, AL2023).
ROOT_DEVICE = "/dev/xvda"


def _pool_subnets(comp: Composition, spec: NodePoolSpec) -> list[str]:
    """The node subnets in the pool's zones (every zone of the network by default)."""
    names = node_subnets(spec.network, spec.private_network)
    if not spec.zones:
        return names
    offered = {f"{comp.region}{subnet[-1]}": subnet for subnet in names}
    unknown = [zone for zone in spec.zones if zone not in offered]
    if unknown:
        raise SpecError(
            "zones",
            f"{unknown[0]!r}: the network has node subnets in {', '.join(sorted(offered))} only",
        )
    return [offered[zone] for zone in sorted(set(spec.zones))]


def _composed_names(comp: Composition, network: str, refs: list[dict[str, Any]]) -> list[str]:
    """The composition names of the subnets of ``network`` that ``refs`` (``*Refs`` entries)
    name, sorted (an adopted network's subnets are composed but not observed; fixtures may
    name either)."""
    by_name = {comp.resource_name(subnet): subnet for subnet in all_subnets(network)}
    by_name.update(
        {
            str((body.get("metadata") or {}).get("name")): composed
            for composed, body in comp.observed.items()
        }
    )
    names = [str(ref.get("name")) for ref in refs]
    return sorted(by_name.get(name, name) for name in names)


def _pool_launch_template(comp: Composition, name: str, spec: NodePoolSpec) -> str | None:
    """A launch template of the pool's own when it sets its disk (EKS takes the disk from
    the launch template when there is one, never ``diskSize``), else None (the cluster's).

    The root volume: gp3 unless asked, encrypted, deleted with the node. A size or type
    change is a new template version: EKS rolls the nodes, the group stays.
    """
    if spec.disk_size_gb is None and spec.disk_type is None:
        return None
    disk_type = spec.disk_type or "gp3"
    if disk_type not in DISK_TYPES:
        raise SpecError(
            "disk_type",
            f"{disk_type!r} is not an EBS type a node boots from; "
            f"use one of {', '.join(DISK_TYPES)}",
        )
    ebs: dict[str, Any] = {
        "volumeType": disk_type,
        "encrypted": "true",
        "deleteOnTermination": "true",
    }
    if spec.disk_size_gb is not None:
        ebs["volumeSize"] = spec.disk_size_gb
    template = f"{name}-template"
    comp.emit(
        template,
        LAUNCH_TEMPLATE.new(
            {
                "region": comp.region,
                "name": comp.resource_name(template),
                "description": f"EKS nodes of pool {spec.pool} of {comp.name}: "
                "IMDSv2, hop limit 1, own root disk",
                "metadataOptions": dict(NODE_METADATA),
                "blockDeviceMappings": [{"deviceName": ROOT_DEVICE, "ebs": ebs}],
                "updateDefaultVersion": True,
            }
        ),
    )
    return template
