"""The cluster module on AWS, end to end over gRPC: VPC, EKS, node groups, Route53, identity.

Each test sends an ``XCluster`` labelled ``cloud: aws`` to the real function server and reads
the desired state back. Observed state is what the simulated providers report once Ready
(platform/providersim/simulation.py), pass after pass, as Crossplane would.
"""

from __future__ import annotations

import copy
import json
from typing import Any

import providersim
import pytest

from tests.support.deletion import deletion_order
from tests.support.harness import Rendered, request, step_input
from tests.support.table import case

REGION = "eu-west-1"
ACCOUNT = "123456789012"
SETTINGS: dict[str, Any] = {
    "defaultMachineType": "m6i.xlarge",
    "network": {"subnetCidr": "10.0.0.0/20"},
}
CLUSTER_HELPERS = ("cluster-role", "cluster-role-cluster-policy", "cluster-node-role")


def composite(*, pools: dict[str, Any] | None = None, **parameters: Any) -> dict[str, Any]:
    """An XCluster on AWS with a domain and two pools unless told otherwise."""
    params: dict[str, Any] = {"domain": "example.com", "tags": {"team": "platform"}}
    params.update(parameters)
    return {
        "apiVersion": "myplatform.io/v1alpha1",
        "kind": "XCluster",
        "metadata": {
            "name": "prod",
            "labels": {"cloud": "aws", "planeId": ACCOUNT, "planeType": "production"},
        },
        "spec": {
            "forProvider": {"location": REGION},
            "parameters": {k: v for k, v in params.items() if v is not None},
            "pools": pools
            if pools is not None
            else {
                "general": {
                    "autoscaling": {"minNodeCount": 2, "maxNodeCount": 6},
                    "nodeConfig": {"machineType": "m6i.large"},
                },
                "batch": {"autoscaling": {"minNodeCount": 0, "maxNodeCount": 10}},
            },
        },
    }


def run(
    client: Any,
    xr: dict[str, Any],
    observed: dict[str, Any] | None = None,
    settings: dict[str, Any] | None = None,
    protocol: str = "v1",
) -> Rendered:
    """One pass of the cluster module; fails on a fatal result."""
    rendered = client.run(
        request(xr, step_input("cluster", settings=settings or SETTINGS), observed=observed or {}),
        protocol=protocol,
    )
    assert not rendered.fatal, rendered.fatal
    return rendered


def observe(rendered: Rendered, observed: dict[str, Any]) -> dict[str, Any]:
    """Everything desired, observed Ready as the simulated providers report it."""
    return {**observed, **{n: providersim.ready(b) for n, b in rendered.resources.items()}}


def at_provider(observed: dict[str, Any], name: str) -> dict[str, Any]:
    """What the simulated provider reported for ``name``."""
    return dict(observed[name]["status"]["atProvider"])


def converge(
    client: Any, xr: dict[str, Any], settings: dict[str, Any] | None = None, passes: int = 6
) -> tuple[Rendered, dict[str, Any]]:
    """Passes until nothing new is desired; the last pass and what it observed."""
    observed: dict[str, Any] = {}
    rendered = run(client, xr, observed, settings)
    for _ in range(passes):
        if set(rendered.resources) <= set(observed):
            return rendered, observed
        observed = observe(rendered, observed)
        rendered = run(client, xr, observed, settings)
    return rendered, observed


def of_kind(rendered: Rendered, kind: str) -> dict[str, dict[str, Any]]:
    """Desired resources of ``kind`` by composition name."""
    return {n: b for n, b in rendered.resources.items() if b["kind"] == kind}


def for_provider(rendered: Rendered, name: str) -> dict[str, Any]:
    """``spec.forProvider`` of desired resource ``name``."""
    return dict(rendered.resource(name)["spec"]["forProvider"])


def composed_message(rendered: Rendered) -> str:
    """The message of the ``Composed`` condition, which must be set."""
    composed = rendered.condition("Composed")
    assert composed is not None
    return str(composed.message)


def assert_all_valid(rendered: Rendered, catalog: Any) -> None:
    """Every desired resource validates against the provider CRDs."""
    errors = {n: catalog.validate(b) for n, b in sorted(rendered.resources.items())}
    assert {n: e for n, e in errors.items() if e} == {}


@pytest.fixture(scope="module")
def converged(client: Any) -> tuple[Rendered, dict[str, Any]]:
    """The private cluster with a domain after all passes."""
    return converge(client, composite())


# -- 1. first pass --------------------------------------------------------------------------


@pytest.mark.parametrize("protocol", ["v1", "v1beta1"])
def test_first_pass_creates_network_and_roles_and_holds_what_needs_the_cluster(
    client, catalog, protocol
):
    rendered = run(client, composite(), protocol=protocol)
    kinds = rendered.kinds
    assert kinds["network"] == "VPC"
    assert sorted(of_kind(rendered, "Subnet")) == [
        "network-private-a",
        "network-private-b",
        "network-public-a",
        "network-public-b",
    ]
    assert kinds["network-igw"] == "InternetGateway"
    assert sorted(of_kind(rendered, "EIP")) == ["network-nat-a-eip", "network-nat-b-eip"]
    # Only the public default route: the private ones wait for their NAT gateways, which
    # wait for the Internet gateway (a route to a gateway that doesn't exist fails).
    assert list(of_kind(rendered, "Route")) == ["network-public-default"]
    assert len(of_kind(rendered, "RouteTableAssociation")) == 4
    for helper in CLUSTER_HELPERS:
        assert helper in rendered.resources
    assert kinds["dns-public"] == "Zone"
    held = [
        "cluster",
        "cluster-auth",
        "pool-general",
        "pool-batch",
        "providers-helm",
        "providers-kubernetes",
        "release-cert-manager",
        "release-ingress-nginx",
        "release-kube-prometheus-stack",
        "network-nat-a",
        "dns-private",
        "network-private-a-default",
        "network-private-b-default",
        "cert-manager-identity-association",
        "cert-manager-identity-policy-attachment",
        "cluster-autoscaler",
        "cluster-autoscaler-association",
        "cluster-autoscaler-policy-attachment",
        "cluster-autoscaler-release",
    ]
    for name in held:
        assert name not in rendered.resources
    composed = rendered.condition("Composed")
    assert composed is not None and composed.reason == "WaitingForDependencies"
    for name in held:
        assert f"{name} (waits for" in composed.message
    assert_all_valid(rendered, catalog)


def test_cluster_waits_for_its_role_policy_and_the_network(client):
    rendered = run(client, composite())
    message = composed_message(rendered)
    assert "cluster (waits for cluster-role-cluster-policy, network)" in message


# -- 2. converged ---------------------------------------------------------------------------


def test_converged_state_has_pools_providers_releases_identity_and_usages(converged, catalog):
    rendered, _ = converged
    kinds = rendered.kinds
    assert kinds["cluster"] == "Cluster"
    assert kinds["cluster-auth"] == "ClusterAuth"
    assert sorted(of_kind(rendered, "NodeGroup")) == ["pool-batch", "pool-general"]
    assert kinds["providers-helm"] == "ProviderConfig"
    assert kinds["providers-kubernetes"] == "ProviderConfig"
    assert sorted(of_kind(rendered, "Release")) == [
        "cluster-autoscaler-release",
        "release-cert-manager",
        "release-ingress-nginx",
        "release-kube-prometheus-stack",
    ]
    assert sorted(of_kind(rendered, "Addon")) == [
        "cluster-addon-coredns",
        "cluster-addon-eks-pod-identity-agent",
        "cluster-addon-kube-proxy",
        "cluster-addon-vpc-cni",
    ]
    assert kinds["cert-manager-identity"] == "Role"
    assert kinds["cert-manager-identity-policy"] == "Policy"
    assert kinds["cert-manager-identity-association"] == "PodIdentityAssociation"
    usages = of_kind(rendered, "ClusterUsage")
    assert "usage-cluster-by-pool-general" in usages
    assert "usage-cluster-role-cluster-policy-by-cluster" in usages
    assert "usage-cluster-node-role-worker-by-pool-batch" in usages
    assert "usage-network-igw-by-network-nat-a" in usages
    assert "usage-network-nat-a-by-network-private-a-default" in usages
    assert rendered.condition("Composed").reason == "AllResourcesComposed"
    assert_all_valid(rendered, catalog)


def test_observed_ready_resources_are_ready(converged):
    rendered, observed = converged
    for name in observed:
        assert rendered.ready(name), name


def test_status_carries_endpoint_ca_name_and_issuer(converged):
    rendered, observed = converged
    status = rendered.status
    cluster = at_provider(observed, "cluster")
    assert status["clusterEndpoint"] == cluster["endpoint"]
    assert status["clusterCA"] == cluster["certificateAuthority"][0]["data"]
    assert status["clusterName"] == cluster["id"] == "prod-cluster"
    assert status["oidcIssuer"] == cluster["identity"][0]["oidc"][0]["issuer"]
    assert status["cloud"] == "aws"


def test_coredns_waits_for_a_node_group(client):
    _, observed = converge(client, composite())
    without_nodes = {n: b for n, b in observed.items() if b["kind"] != "NodeGroup"}
    without_nodes.pop("cluster-addon-coredns")
    again = run(client, composite(), without_nodes)
    assert "cluster-addon-coredns" not in again.resources
    assert "cluster-addon-coredns (waits for a node group)" in composed_message(again)
    assert "cluster-addon-vpc-cni" in again.resources


# -- 3. key fields --------------------------------------------------------------------------


def test_region_on_every_regional_resource(converged):
    rendered, _ = converged
    global_kinds = {"Role", "Policy", "RolePolicyAttachment", "Zone", "OpenIDConnectProvider"}
    for name, body in rendered.resources.items():
        if body["apiVersion"].endswith(".aws.upbound.io/v1beta1") or body["apiVersion"].endswith(
            ".aws.upbound.io/v1beta2"
        ):
            if body["kind"] in global_kinds:
                assert "region" not in body["spec"]["forProvider"], name
            else:
                assert body["spec"]["forProvider"]["region"] == REGION, name


def test_private_cluster_endpoint_subnets_and_access(converged):
    rendered, _ = converged
    cluster = for_provider(rendered, "cluster")
    assert cluster["vpcConfig"] == {
        "endpointPrivateAccess": True,
        "endpointPublicAccess": False,
        "subnetIdRefs": [{"name": "prod-network-private-a"}, {"name": "prod-network-private-b"}],
    }
    assert cluster["roleArnRef"] == {"name": "prod-cluster-role"}
    # Creation-only (initProvider): an adopted cluster keeps its own access settings.
    assert "accessConfig" not in cluster
    access = rendered.resource("cluster")["spec"]["initProvider"]["accessConfig"]
    assert access["authenticationMode"] == "API_AND_CONFIG_MAP"
    assert access["bootstrapClusterCreatorAdminPermissions"] is True
    assert "version" not in cluster


def test_kubernetes_version_and_services_range(client):
    settings = {**SETTINGS, "network": {**SETTINGS["network"], "servicesCidr": "172.20.0.0/16"}}
    rendered, _ = converge(client, composite(kubernetesVersion="1.33"), settings)
    cluster = for_provider(rendered, "cluster")
    assert cluster["version"] == "1.33"
    # Creation-only: an adopted cluster keeps its own Service range.
    assert "kubernetesNetworkConfig" not in cluster
    init = rendered.resource("cluster")["spec"]["initProvider"]
    assert init["kubernetesNetworkConfig"] == {"serviceIpv4Cidr": "172.20.0.0/16"}


def test_public_access_cidrs_keep_a_private_cluster_reachable_from_the_control_plane(client):
    settings = {**SETTINGS, "aws": {"endpointPublicAccessCidrs": ["203.0.113.0/24"]}}
    rendered, _ = converge(client, composite(), settings)
    vpc_config = for_provider(rendered, "cluster")["vpcConfig"]
    assert vpc_config["endpointPublicAccess"] is True
    assert vpc_config["publicAccessCidrs"] == ["203.0.113.0/24"]


def test_network_layout_and_load_balancer_subnet_tags(converged):
    rendered, _ = converged
    vpc = for_provider(rendered, "network")
    assert vpc["cidrBlock"] == "10.0.0.0/20"
    assert vpc["enableDnsSupport"] is True and vpc["enableDnsHostnames"] is True
    expected = {
        "network-private-a": ("10.0.0.0/22", "eu-west-1a", "kubernetes.io/role/internal-elb"),
        "network-private-b": ("10.0.4.0/22", "eu-west-1b", "kubernetes.io/role/internal-elb"),
        "network-public-a": ("10.0.8.0/22", "eu-west-1a", "kubernetes.io/role/elb"),
        "network-public-b": ("10.0.12.0/22", "eu-west-1b", "kubernetes.io/role/elb"),
    }
    for name, (cidr, zone, role_tag) in expected.items():
        subnet = for_provider(rendered, name)
        assert (subnet["cidrBlock"], subnet["availabilityZone"]) == (cidr, zone)
        assert subnet["tags"][role_tag] == "1"
        assert subnet["vpcIdRef"] == {"name": "prod-network"}
        assert subnet["mapPublicIpOnLaunch"] is name.startswith("network-public")
    nat = for_provider(rendered, "network-nat-b")
    assert nat["subnetIdRef"] == {"name": "prod-network-public-b"}
    assert nat["allocationIdRef"] == {"name": "prod-network-nat-b-eip"}
    route = for_provider(rendered, "network-private-b-default")
    assert route["natGatewayIdRef"] == {"name": "prod-network-nat-b"}
    assert route["destinationCidrBlock"] == "0.0.0.0/0"
    assert for_provider(rendered, "network-public-default")["gatewayIdRef"] == {
        "name": "prod-network-igw"
    }


def test_node_groups_autoscaling_machine_type_and_references(converged):
    rendered, _ = converged
    general = rendered.resource("pool-general")["spec"]
    assert general["forProvider"]["scalingConfig"] == {"minSize": 2, "maxSize": 6}
    assert general["initProvider"] == {"scalingConfig": {"desiredSize": 2}}
    assert general["forProvider"]["instanceTypes"] == ["m6i.large"]
    assert general["forProvider"]["clusterNameRef"] == {"name": "prod-cluster"}
    assert general["forProvider"]["nodeRoleArnRef"] == {"name": "prod-cluster-node-role"}
    assert general["forProvider"]["subnetIdRefs"] == [
        {"name": "prod-network-private-a"},
        {"name": "prod-network-private-b"},
    ]
    batch = rendered.resource("pool-batch")["spec"]
    assert batch["forProvider"]["instanceTypes"] == ["m6i.xlarge"]  # environment default
    assert batch["forProvider"]["scalingConfig"] == {"minSize": 0, "maxSize": 10}


def test_node_role_has_the_worker_policies(converged):
    rendered, _ = converged
    trust = json.loads(for_provider(rendered, "cluster-node-role")["assumeRolePolicy"])
    assert trust["Statement"][0]["Principal"] == {"Service": "ec2.amazonaws.com"}
    arns = sorted(
        for_provider(rendered, n)["policyArn"]
        for n in of_kind(rendered, "RolePolicyAttachment")
        if n.startswith("cluster-node-role-")
    )
    assert arns == [
        "arn:aws:iam::aws:policy/AmazonEC2ContainerRegistryReadOnly",
        "arn:aws:iam::aws:policy/AmazonEKSWorkerNodePolicy",
    ]  # not the CNI policy: vpc-cni has its own role
    cluster_trust = json.loads(for_provider(rendered, "cluster-role")["assumeRolePolicy"])
    assert cluster_trust["Statement"][0]["Principal"] == {"Service": "eks.amazonaws.com"}
    assert for_provider(rendered, "cluster-role-cluster-policy")["policyArn"] == (
        "arn:aws:iam::aws:policy/AmazonEKSClusterPolicy"
    )


def test_tags_provider_config_and_connection_secret(converged):
    rendered, _ = converged
    tags = for_provider(rendered, "cluster")["tags"]
    assert tags["crossplane-composite"] == "prod"
    assert tags["platform-module"] == "cluster"
    assert tags["team"] == "platform"
    assert for_provider(rendered, "network-nat-a")["tags"]["Name"] == "prod-network-nat-a"
    assert rendered.resource("cluster")["spec"]["providerConfigRef"] == {"name": "default"}
    auth = rendered.resource("cluster-auth")["spec"]
    assert auth["writeConnectionSecretToRef"] == {
        "name": "prod-kubeconfig",
        "namespace": "crossplane-system",
    }
    assert auth["forProvider"]["clusterNameRef"] == {"name": "prod-cluster"}
    helm = rendered.resource("providers-helm")["spec"]
    assert helm["credentials"]["secretRef"]["name"] == "prod-kubeconfig"
    assert "identity" not in helm  # ClusterAuth's kubeconfig carries a token


def test_environment_names_the_aws_provider_config(client):
    settings = {**SETTINGS, "providerConfigs": {"aws": "aws-prod"}}
    rendered = run(client, composite(), settings=settings)
    assert rendered.resource("network")["spec"]["providerConfigRef"] == {"name": "aws-prod"}


def test_dns_zones_and_the_private_zone_vpc(converged):
    rendered, _ = converged
    public = for_provider(rendered, "dns-public")
    private = for_provider(rendered, "dns-private")
    assert public["name"] == private["name"] == "example.com"
    assert "vpc" not in public
    assert private["vpc"] == [{"vpcIdRef": {"name": "prod-network"}, "vpcRegion": REGION}]


def test_cert_manager_identity_uses_pod_identity_scoped_to_the_zones(converged):
    rendered, observed = converged
    trust = json.loads(for_provider(rendered, "cert-manager-identity")["assumeRolePolicy"])
    assert trust["Statement"][0]["Principal"] == {"Service": "pods.eks.amazonaws.com"}
    assert sorted(trust["Statement"][0]["Action"]) == ["sts:AssumeRole", "sts:TagSession"]
    policy = json.loads(for_provider(rendered, "cert-manager-identity-policy")["policy"])
    change = next(
        s for s in policy["Statement"] if s["Action"] == ["route53:ChangeResourceRecordSets"]
    )
    assert change["Resource"] == sorted(
        f"arn:aws:route53:::hostedzone/{at_provider(observed, zone)['zoneId']}"
        for zone in ("dns-private", "dns-public")
    )
    names = change["Condition"]["ForAllValues:StringLike"][
        "route53:ChangeResourceRecordSetsNormalizedRecordNames"
    ]
    assert "_acme-challenge.example.com" in names
    association = for_provider(rendered, "cert-manager-identity-association")
    assert (association["namespace"], association["serviceAccount"]) == (
        "cert-manager",
        "cert-manager",
    )
    assert association["roleArnRef"] == {"name": "prod-cert-manager-identity"}
    assert association["clusterNameRef"] == {"name": "prod-cluster"}
    attachment = for_provider(rendered, "cert-manager-identity-policy-attachment")
    assert attachment["policyArnRef"] == {"name": "prod-cert-manager-identity-policy"}
    values = for_provider(rendered, "release-cert-manager")["values"]
    assert "annotations" not in values["serviceAccount"]  # Pod Identity needs none


def test_dns_policy_is_limited_to_challenge_records_before_zone_ids_are_known(client):
    rendered = run(client, composite())
    policy = json.loads(for_provider(rendered, "cert-manager-identity-policy")["policy"])
    change = next(
        s for s in policy["Statement"] if s["Action"] == ["route53:ChangeResourceRecordSets"]
    )
    assert change["Resource"] == ["arn:aws:route53:::hostedzone/*"]
    assert change["Condition"]["ForAllValues:StringEquals"] == {
        "route53:ChangeResourceRecordSetsRecordTypes": ["TXT"]
    }


def test_private_ingress_gets_an_internal_load_balancer(converged):
    rendered, _ = converged
    values = for_provider(rendered, "release-ingress-nginx")["values"]
    annotations = values["controller"]["service"]["annotations"]
    assert annotations["service.beta.kubernetes.io/aws-load-balancer-internal"] == "true"
    assert annotations["service.beta.kubernetes.io/aws-load-balancer-scheme"] == "internal"


def _with_observed(observed: dict[str, Any], name: str, **at_provider: Any) -> dict[str, Any]:
    body = copy.deepcopy(observed[name])
    body["status"].setdefault("atProvider", {}).update(at_provider)
    return {**observed, name: body}


def test_node_groups_follow_the_observed_control_plane_version_not_the_desired_one(client):
    # An upgrade 1.33 -> 1.34 asked for; the control plane still runs 1.33.
    _, observed = converge(client, composite(kubernetesVersion="1.34"))
    upgrading = _with_observed(observed, "cluster", version="1.33")
    rendered = run(client, composite(kubernetesVersion="1.34"), upgrading)
    assert for_provider(rendered, "cluster")["version"] == "1.34"
    for pool in ("pool-general", "pool-batch"):
        spec = for_provider(rendered, pool)
        assert spec["version"] == "1.33"
        # versionRef would resolve the Cluster's *spec* version (ExtractParamPath, false).
        assert "versionRef" not in spec
    release = for_provider(rendered, "cluster-autoscaler-release")
    assert release["chart"]["version"] == "9.47.0"  # the 1.33 autoscaler
    done = _with_observed(observed, "cluster", version="1.34")
    rendered = run(client, composite(kubernetesVersion="1.34"), done)
    assert for_provider(rendered, "pool-general")["version"] == "1.34"
    assert for_provider(rendered, "cluster-autoscaler-release")["chart"]["version"] == "9.51.0"


def test_node_groups_state_no_version_before_the_cluster_reports_one(converged):
    rendered, _ = converged
    assert "version" not in for_provider(rendered, "pool-general")


@pytest.mark.parametrize(
    ("running", "desired"),
    [
        case(
            "the running size is inside the bounds: desiredSize is left out so the "
            "autoscaler keeps its choice",
            2,
            None,
        ),
        case(
            "the running size is under minSize: desiredSize is raised to the minimum, as "
            "EKS refuses a size below it",
            1,
            2,
        ),
        case(
            "the running size is inside the bounds at a larger value: not stated, the "
            "autoscaler's scale-up is kept",
            4,
            None,
        ),
        case("the running size is over maxSize: desiredSize is lowered to the maximum", 9, 6),
    ],
)
def test_desired_size_is_stated_only_when_the_running_size_is_outside_the_bounds(
    client, converged, catalog, running, desired
):
    _, observed = converged
    seen = _with_observed(
        observed, "pool-general", scalingConfig={"desiredSize": running, "minSize": 1, "maxSize": 6}
    )
    rendered = run(client, composite(), seen)  # general: min 2, max 6
    node_group = rendered.resource("pool-general")
    scaling = node_group["spec"]["forProvider"]["scalingConfig"]
    assert scaling.get("desiredSize") == desired
    assert node_group["spec"]["initProvider"]["scalingConfig"]["desiredSize"] == 2
    assert catalog.validate(node_group) == []


def test_node_groups_carry_autoscaler_discovery_tags(converged):
    rendered, _ = converged
    for pool in ("pool-general", "pool-batch"):
        spec = for_provider(rendered, pool)
        assert spec["tags"]["k8s.io/cluster-autoscaler/enabled"] == "true"
        assert spec["tags"]["k8s.io/cluster-autoscaler/prod-cluster"] == "owned"
        assert spec["tags"]["crossplane-composite"] == "prod"  # platform tags kept


def test_iam_documents_are_valid_compact_json_with_sorted_keys(converged):
    rendered, _ = converged
    documents = [for_provider(rendered, n)["assumeRolePolicy"] for n in of_kind(rendered, "Role")]
    documents += [for_provider(rendered, n)["policy"] for n in of_kind(rendered, "Policy")]
    assert len(documents) == 7  # cluster, node, vpc-cni, 2 identities; 2 identity policies
    for document in documents:
        parsed = json.loads(document)
        assert parsed["Version"] == "2012-10-17"
        assert document == json.dumps(parsed, sort_keys=True, separators=(",", ":"))


# -- 3b. cluster autoscaler -----------------------------------------------------------------


def test_cluster_autoscaler_is_installed_through_the_composed_helm_provider(converged, catalog):
    rendered, _ = converged
    release = rendered.resource("cluster-autoscaler-release")
    assert release["spec"]["providerConfigRef"] == {"name": "prod-providers-helm"}
    spec = release["spec"]["forProvider"]
    assert spec["chart"] == {
        "name": "cluster-autoscaler",
        "repository": "https://kubernetes.github.io/autoscaler",
        "version": "9.51.0",
    }  # no version asked or observed: newest
    assert spec["namespace"] == "kube-system"
    assert spec["values"] == {
        "cloudProvider": "aws",
        "awsRegion": REGION,
        "autoDiscovery": {"clusterName": "prod-cluster"},
        "fullnameOverride": "cluster-autoscaler",
        "rbac": {"serviceAccount": {"create": True, "name": "cluster-autoscaler"}},
    }
    order = deletion_order(rendered.resources)  # directly or through other Usages
    for needed in ("providers-helm", "cluster", "cluster-autoscaler-association"):
        assert (needed, "cluster-autoscaler-release") in order, needed
    assert catalog.validate(release) == []


def test_cluster_autoscaler_identity_is_pod_identity_scoped_to_this_cluster(converged):
    rendered, _ = converged
    trust = json.loads(for_provider(rendered, "cluster-autoscaler")["assumeRolePolicy"])
    assert trust["Statement"] == [
        {
            "Action": ["sts:AssumeRole", "sts:TagSession"],
            "Effect": "Allow",
            "Principal": {"Service": "pods.eks.amazonaws.com"},
        }
    ]
    association = for_provider(rendered, "cluster-autoscaler-association")
    assert (association["namespace"], association["serviceAccount"]) == (
        "kube-system",
        "cluster-autoscaler",
    )
    assert association["roleArnRef"] == {"name": "prod-cluster-autoscaler"}
    assert association["clusterNameRef"] == {"name": "prod-cluster"}
    assert association["region"] == REGION
    assert for_provider(rendered, "cluster-autoscaler-policy-attachment") == {
        "policyArnRef": {"name": "prod-cluster-autoscaler-policy"},
        "roleRef": {"name": "prod-cluster-autoscaler"},
    }
    policy = json.loads(for_provider(rendered, "cluster-autoscaler-policy")["policy"])
    by_action = {a: s for s in policy["Statement"] for a in s["Action"]}
    resize = by_action["autoscaling:SetDesiredCapacity"]
    assert resize is by_action["autoscaling:TerminateInstanceInAutoScalingGroup"]
    assert resize["Condition"] == {
        "StringEquals": {
            "aws:ResourceTag/k8s.io/cluster-autoscaler/enabled": "true",
            "aws:ResourceTag/k8s.io/cluster-autoscaler/prod-cluster": "owned",
        }
    }
    assert by_action["eks:DescribeNodegroup"]["Resource"] == [
        f"arn:aws:eks:{REGION}:*:nodegroup/prod-cluster/*"
    ]
    reads = by_action["autoscaling:DescribeAutoScalingGroups"]
    assert "Condition" not in reads
    assert not [a for a in reads["Action"] if not a.split(":")[1].startswith(("Describe", "Get"))]


def test_cluster_autoscaler_waits_for_its_pod_identity_association(client):
    _, observed = converge(client, composite())
    without = {
        n: b
        for n, b in observed.items()
        if n not in ("cluster-autoscaler-association", "cluster-autoscaler-release")
    }
    again = run(client, composite(), without)
    assert "cluster-autoscaler-association" in again.resources
    assert "cluster-autoscaler-release" not in again.resources
    assert "cluster-autoscaler-release (waits for cluster-autoscaler-association)" in (
        composed_message(again)
    )


@pytest.mark.parametrize(
    ("minor", "chart"),
    [
        case(
            "Kubernetes 1.33 gets the cluster-autoscaler chart of its minor: the "
            "autoscaler must match the control plane's minor",
            "1.33",
            "9.47.0",
        ),
        case("an older minor (1.30) gets its older chart, not the newest", "1.30", "9.37.0"),
        case("the newest minor (1.34) gets its own chart and no warning", "1.34", "9.51.0"),
    ],
)
def test_cluster_autoscaler_chart_matches_the_asked_kubernetes_minor(client, minor, chart):
    rendered, _ = converge(client, composite(kubernetesVersion=minor))
    assert for_provider(rendered, "cluster-autoscaler-release")["chart"]["version"] == chart
    assert not rendered.warnings


def test_cluster_autoscaler_chart_follows_the_observed_minor_when_none_is_asked(client):
    _, observed = converge(client, composite())
    cluster = observed["cluster"]
    observed["cluster"] = {
        **cluster,
        "status": {
            **cluster["status"],
            "atProvider": {**cluster["status"]["atProvider"], "version": "1.31"},
        },
    }
    rendered = run(client, composite(), observed)
    assert for_provider(rendered, "cluster-autoscaler-release")["chart"]["version"] == "9.38.0"


def test_unknown_kubernetes_minor_uses_the_nearest_chart_and_warns(client):
    rendered, _ = converge(client, composite(kubernetesVersion="1.40"))
    assert for_provider(rendered, "cluster-autoscaler-release")["chart"]["version"] == "9.51.0"
    assert any("charts.cluster-autoscaler.version" in w for w in rendered.warnings)


def test_environment_pins_or_disables_the_cluster_autoscaler(client):
    pinned = {**SETTINGS, "charts": {"cluster-autoscaler": {"version": "9.47.3"}}}
    rendered, _ = converge(client, composite(), pinned)
    assert for_provider(rendered, "cluster-autoscaler-release")["chart"]["version"] == "9.47.3"
    disabled = {**SETTINGS, "charts": {"cluster-autoscaler": {"disabled": True}}}
    rendered, _ = converge(client, composite(), disabled)
    assert not [n for n in rendered.resources if n.startswith("cluster-autoscaler")]
    assert "release-cert-manager" in rendered.resources


def test_imported_cluster_is_discovered_by_its_external_name(client, catalog):
    # Nothing is composed inside an imported cluster unless named in import.include (see
    # test_cluster_lifecycle.py): here a pool and the autoscaler, with what they need there.
    inside = [
        "pool-batch",
        "pool-general",
        "cluster-auth",
        "providers-helm",
        "cluster-autoscaler",
        "cluster-autoscaler-policy",
        "cluster-autoscaler-policy-attachment",
        "cluster-autoscaler-association",
        "cluster-autoscaler-release",
    ]
    xr = composite(
        **{
            "import": {
                "enabled": True,
                "mode": "manage",
                "include": inside,
                "resources": {"cluster": {"externalName": "legacy-eks"}},
            }
        }
    )
    rendered, _ = converge(client, xr)
    values = for_provider(rendered, "cluster-autoscaler-release")["values"]
    assert values["autoDiscovery"]["clusterName"] == "legacy-eks"
    tags = for_provider(rendered, "pool-general")["tags"]
    assert tags["k8s.io/cluster-autoscaler/legacy-eks"] == "owned"
    policy = for_provider(rendered, "cluster-autoscaler-policy")["policy"]
    assert "nodegroup/legacy-eks/*" in policy and "prod-cluster" not in policy
    assert_all_valid(rendered, catalog)


# -- 3c. addon versions ---------------------------------------------------------------------


def test_addons_take_over_self_managed_ones_at_the_default_version(converged):
    rendered, _ = converged
    for name in of_kind(rendered, "Addon"):
        spec = for_provider(rendered, name)
        assert spec["resolveConflictsOnCreate"] == spec["resolveConflictsOnUpdate"] == "OVERWRITE"
        assert "addonVersion" not in spec


def test_environment_pins_addon_versions(client, catalog):
    settings = {
        **SETTINGS,
        "aws": {
            "addonVersions": {"vpc-cni": "v1.20.4-eksbuild.1", "kube-proxy": "v1.33.3-eksbuild.6"}
        },
    }
    rendered, _ = converge(client, composite(), settings)
    assert for_provider(rendered, "cluster-addon-vpc-cni")["addonVersion"] == "v1.20.4-eksbuild.1"
    assert for_provider(rendered, "cluster-addon-kube-proxy")["addonVersion"] == (
        "v1.33.3-eksbuild.6"
    )
    assert "addonVersion" not in for_provider(rendered, "cluster-addon-coredns")
    assert_all_valid(rendered, catalog)


@pytest.mark.parametrize(
    ("versions", "says"),
    [
        case(
            "a misspelt add-on name is a fatal result naming aws.addonVersions and the "
            "unknown add-on, not an add-on silently left out",
            {"vpc-cnii": "v1"},
            "unknown addons vpc-cnii",
        ),
        case(
            "addonVersions written as a list is refused naming the field: it must be a "
            "map of add-on to version",
            ["vpc-cni"],
            "must be a map",
        ),
        case(
            "an add-on version that is not a string is refused: the map holds versions by "
            "add-on name",
            {"vpc-cni": 1},
            "must be a map",
        ),
    ],
)
def test_malformed_addon_versions_are_a_fatal_result(client, versions, says):
    settings = {**SETTINGS, "aws": {"addonVersions": versions}}
    rendered = client.run(request(composite(), step_input("cluster", settings=settings)))
    assert len(rendered.fatal) == 1
    assert "aws.addonVersions" in rendered.fatal[0] and says in rendered.fatal[0]
    assert "Traceback" not in rendered.fatal[0]


# -- 4. public cluster, no domain ----------------------------------------------------------


def test_public_cluster_has_no_nat_no_private_subnets_and_no_private_zone(client, catalog):
    settings = {**SETTINGS, "aws": {"endpointPublicAccessCidrs": ["203.0.113.0/24"]}}
    rendered, _ = converge(client, composite(privateCluster=False), settings)
    kinds = set(rendered.kinds.values())
    assert not kinds & {"NATGateway", "EIP"}
    assert sorted(of_kind(rendered, "Subnet")) == ["network-public-a", "network-public-b"]
    assert "dns-private" not in rendered.resources
    assert "dns-public" in rendered.resources
    cluster = for_provider(rendered, "cluster")
    assert cluster["vpcConfig"]["endpointPublicAccess"] is True
    assert cluster["vpcConfig"]["subnetIdRefs"] == [
        {"name": "prod-network-public-a"},
        {"name": "prod-network-public-b"},
    ]
    assert for_provider(rendered, "pool-general")["subnetIdRefs"] == [
        {"name": "prod-network-public-a"},
        {"name": "prod-network-public-b"},
    ]
    service = for_provider(rendered, "release-ingress-nginx")["values"]["controller"]["service"]
    assert "annotations" not in service
    assert_all_valid(rendered, catalog)


def test_no_domain_means_no_zones_and_no_dns_identity(client, catalog):
    rendered, _ = converge(client, composite(domain=None))
    kinds = set(rendered.kinds.values())
    assert "Zone" not in kinds
    assert sorted(of_kind(rendered, "PodIdentityAssociation")) == [
        "cluster-autoscaler-association"
    ]  # the autoscaler's identity only
    assert not [n for n in rendered.resources if n.startswith("cert-manager-identity")]
    assert "release-cert-manager" in rendered.resources
    assert_all_valid(rendered, catalog)


# -- 5. import ------------------------------------------------------------------------------


def test_import_observes_the_existing_cluster(client, catalog):
    xr = composite(
        **{
            "import": {
                "enabled": True,
                "mode": "observe",
                "resources": {"cluster": {"externalName": "legacy-eks"}},
            }
        }
    )
    rendered, _ = converge(client, xr)
    cluster = rendered.resource("cluster")
    assert cluster["spec"]["managementPolicies"] == ["Observe"]
    assert cluster["spec"]["deletionPolicy"] == "Orphan"
    assert cluster["metadata"]["annotations"]["crossplane.io/external-name"] == "legacy-eks"
    assert "managementPolicies" not in rendered.resource("network")["spec"]
    assert_all_valid(rendered, catalog)


# -- determinism and input errors ----------------------------------------------------------


def test_same_input_gives_byte_identical_output(client, converged):
    _, observed = converged
    first = run(client, composite(), observed).response.desired.SerializeToString(
        deterministic=True
    )
    second = run(client, composite(), observed).response.desired.SerializeToString(
        deterministic=True
    )
    assert first == second


@pytest.mark.parametrize("cidr", ["10.0.0.0/26", "not-a-cidr", "fd00::/56"])
def test_unusable_vpc_range_is_a_fatal_result_naming_the_field(client, cidr):
    settings = {**SETTINGS, "network": {"subnetCidr": cidr}}
    rendered = client.run(request(composite(), step_input("cluster", settings=settings)))
    assert len(rendered.fatal) == 1
    assert "environment.network.subnetCidr" in rendered.fatal[0]
    assert "Traceback" not in rendered.fatal[0]


def test_malformed_public_access_cidrs_is_a_fatal_result(client):
    settings = {**SETTINGS, "aws": {"endpointPublicAccessCidrs": "203.0.113.0/24"}}
    rendered = client.run(request(composite(), step_input("cluster", settings=settings)))
    assert rendered.fatal and "aws.endpointPublicAccessCidrs" in rendered.fatal[0]
