"""``examples/install/permissions/<module>/``: least-privilege cloud permissions per module
(issue 33, item 3), kept complete by what the modules compose.

The services and kinds come from the goldens (``tests/golden/<module>/**``, both forms): every
composed managed resource's API group names its cloud service (``ec2.aws.upbound.io`` -> ``ec2``,
``compute.gcp.upbound.io`` -> ``compute.*`` permissions, ``network.azure.upbound.io`` ->
``Microsoft.Network/*`` actions), and every kind names the permission that creates it. A module
that starts composing a kind its policy does not grant fails here, naming module, cloud and kind.
No policy grants every action: no ``*``, no ``service:*``, no ``Microsoft.X/*``, wildcards only on
read verbs, and ``Resource: "*"`` only where AWS has no resource-level permission for the action.
"""

from __future__ import annotations

import fnmatch
import json
import re
from collections import defaultdict
from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
GOLDEN = ROOT / "tests" / "golden"
PERMISSIONS = ROOT / "examples" / "install" / "permissions"
FILES = {"aws": "aws-policy.json", "gcp": "gcp-role.json", "azure": "azure-role.json"}

#: The permission that creates (or, for an attachment, writes) each composed kind, by
#: (service, kind): AWS IAM actions, GCP IAM permissions, Azure RBAC actions. A kind missing here
#: fails test_every_composed_kind_is_known: say which permission creates it.
CREATES: dict[str, dict[tuple[str, str], str]] = {
    "aws": {
        ("acm", "Certificate"): "acm:RequestCertificate",
        ("acm", "CertificateValidation"): "acm:DescribeCertificate",
        ("cloudfront", "Distribution"): "cloudfront:CreateDistribution",
        ("cloudfront", "OriginAccessControl"): "cloudfront:CreateOriginAccessControl",
        ("ec2", "EIP"): "ec2:AllocateAddress",
        ("ec2", "InternetGateway"): "ec2:CreateInternetGateway",
        ("ec2", "LaunchTemplate"): "ec2:CreateLaunchTemplate",
        ("ec2", "NATGateway"): "ec2:CreateNatGateway",
        ("ec2", "Route"): "ec2:CreateRoute",
        ("ec2", "RouteTable"): "ec2:CreateRouteTable",
        ("ec2", "RouteTableAssociation"): "ec2:AssociateRouteTable",
        ("ec2", "SecurityGroup"): "ec2:CreateSecurityGroup",
        ("ec2", "SecurityGroupIngressRule"): "ec2:AuthorizeSecurityGroupIngress",
        ("ec2", "Subnet"): "ec2:CreateSubnet",
        ("ec2", "VPC"): "ec2:CreateVpc",
        ("eks", "Addon"): "eks:CreateAddon",
        ("eks", "Cluster"): "eks:CreateCluster",
        ("eks", "ClusterAuth"): "eks:DescribeCluster",
        ("eks", "NodeGroup"): "eks:CreateNodegroup",
        ("eks", "PodIdentityAssociation"): "eks:CreatePodIdentityAssociation",
        ("iam", "OpenIDConnectProvider"): "iam:CreateOpenIDConnectProvider",
        ("iam", "Policy"): "iam:CreatePolicy",
        ("iam", "Role"): "iam:CreateRole",
        ("iam", "RolePolicy"): "iam:PutRolePolicy",
        ("iam", "RolePolicyAttachment"): "iam:AttachRolePolicy",
        ("kms", "Alias"): "kms:CreateAlias",
        ("kms", "Key"): "kms:CreateKey",
        ("rds", "Instance"): "rds:CreateDBInstance",
        ("rds", "ParameterGroup"): "rds:CreateDBParameterGroup",
        ("rds", "SubnetGroup"): "rds:CreateDBSubnetGroup",
        ("route53", "HealthCheck"): "route53:CreateHealthCheck",
        ("route53", "Record"): "route53:ChangeResourceRecordSets",
        ("route53", "Zone"): "route53:CreateHostedZone",
        ("s3", "Bucket"): "s3:CreateBucket",
        ("s3", "BucketLifecycleConfiguration"): "s3:PutLifecycleConfiguration",
        ("s3", "BucketLogging"): "s3:PutBucketLogging",
        ("s3", "BucketObjectLockConfiguration"): "s3:PutBucketObjectLockConfiguration",
        ("s3", "BucketOwnershipControls"): "s3:PutBucketOwnershipControls",
        ("s3", "BucketPolicy"): "s3:PutBucketPolicy",
        ("s3", "BucketPublicAccessBlock"): "s3:PutBucketPublicAccessBlock",
        ("s3", "BucketReplicationConfiguration"): "s3:PutReplicationConfiguration",
        ("s3", "BucketServerSideEncryptionConfiguration"): "s3:PutEncryptionConfiguration",
        ("s3", "BucketVersioning"): "s3:PutBucketVersioning",
        ("sqs", "Queue"): "sqs:CreateQueue",
    },
    "gcp": {
        ("cloudplatform", "ProjectIAMMember"): "resourcemanager.projects.setIamPolicy",
        ("cloudplatform", "ServiceAccount"): "iam.serviceAccounts.create",
        ("cloudplatform", "ServiceAccountIAMMember"): "iam.serviceAccounts.setIamPolicy",
        ("compute", "BackendBucket"): "compute.backendBuckets.create",
        ("compute", "Firewall"): "compute.firewalls.create",
        ("compute", "GlobalAddress"): "compute.globalAddresses.create",
        ("compute", "GlobalForwardingRule"): "compute.globalForwardingRules.create",
        ("compute", "HealthCheck"): "compute.healthChecks.create",
        ("compute", "ManagedSSLCertificate"): "compute.sslCertificates.create",
        ("compute", "Network"): "compute.networks.create",
        ("compute", "Router"): "compute.routers.create",
        ("compute", "RouterNAT"): "compute.routers.update",
        ("compute", "Subnetwork"): "compute.subnetworks.create",
        ("compute", "TargetHTTPSProxy"): "compute.targetHttpsProxies.create",
        ("compute", "URLMap"): "compute.urlMaps.create",
        ("container", "Cluster"): "container.clusters.create",
        ("container", "NodePool"): "container.clusters.update",
        ("dns", "ManagedZone"): "dns.managedZones.create",
        ("dns", "RecordSet"): "dns.resourceRecordSets.create",
        ("kms", "CryptoKey"): "cloudkms.cryptoKeys.create",
        ("kms", "CryptoKeyIAMMember"): "cloudkms.cryptoKeys.setIamPolicy",
        ("kms", "KeyRing"): "cloudkms.keyRings.create",
        ("sql", "Database"): "cloudsql.databases.create",
        ("sql", "DatabaseInstance"): "cloudsql.instances.create",
        ("storage", "Bucket"): "storage.buckets.create",
        ("storage", "BucketIAMMember"): "storage.buckets.setIamPolicy",
    },
    "azure": {
        ("authorization", "RoleAssignment"): "Microsoft.Authorization/roleAssignments/write",
        ("azure", "ResourceGroup"): "Microsoft.Resources/subscriptions/resourceGroups/write",
        ("cdn", "FrontdoorCustomDomain"): "Microsoft.Cdn/profiles/customDomains/write",
        ("cdn", "FrontdoorEndpoint"): "Microsoft.Cdn/profiles/afdEndpoints/write",
        ("cdn", "FrontdoorOrigin"): "Microsoft.Cdn/profiles/originGroups/origins/write",
        ("cdn", "FrontdoorOriginGroup"): "Microsoft.Cdn/profiles/originGroups/write",
        ("cdn", "FrontdoorProfile"): "Microsoft.Cdn/profiles/write",
        ("cdn", "FrontdoorRoute"): "Microsoft.Cdn/profiles/afdEndpoints/routes/write",
        (
            "containerservice",
            "KubernetesCluster",
        ): "Microsoft.ContainerService/managedClusters/write",
        (
            "containerservice",
            "KubernetesClusterNodePool",
        ): "Microsoft.ContainerService/managedClusters/agentPools/write",
        ("dbforpostgresql", "FlexibleServer"): "Microsoft.DBforPostgreSQL/flexibleServers/write",
        (
            "dbforpostgresql",
            "FlexibleServerDatabase",
        ): "Microsoft.DBforPostgreSQL/flexibleServers/databases/write",
        ("insights", "MonitorDiagnosticSetting"): "Microsoft.Insights/diagnosticSettings/write",
        ("keyvault", "AccessPolicy"): "Microsoft.KeyVault/vaults/accessPolicies/write",
        ("keyvault", "Key"): "Microsoft.KeyVault/vaults/keys/create/action",
        ("keyvault", "Vault"): "Microsoft.KeyVault/vaults/write",
        (
            "managedidentity",
            "FederatedIdentityCredential",
        ): "Microsoft.ManagedIdentity/userAssignedIdentities/federatedIdentityCredentials/write",
        (
            "managedidentity",
            "UserAssignedIdentity",
        ): "Microsoft.ManagedIdentity/userAssignedIdentities/write",
        ("network", "DNSCNAMERecord"): "Microsoft.Network/dnsZones/CNAME/write",
        ("network", "DNSTXTRecord"): "Microsoft.Network/dnsZones/TXT/write",
        ("network", "DNSZone"): "Microsoft.Network/dnsZones/write",
        ("network", "NATGateway"): "Microsoft.Network/natGateways/write",
        (
            "network",
            "NATGatewayPublicIPAssociation",
        ): "Microsoft.Network/publicIPAddresses/join/action",
        ("network", "PrivateDNSZone"): "Microsoft.Network/privateDnsZones/write",
        (
            "network",
            "PrivateDNSZoneVirtualNetworkLink",
        ): "Microsoft.Network/privateDnsZones/virtualNetworkLinks/write",
        ("network", "PublicIP"): "Microsoft.Network/publicIPAddresses/write",
        ("network", "SecurityGroup"): "Microsoft.Network/networkSecurityGroups/write",
        ("network", "SecurityRule"): "Microsoft.Network/networkSecurityGroups/securityRules/write",
        ("network", "Subnet"): "Microsoft.Network/virtualNetworks/subnets/write",
        ("network", "SubnetNATGatewayAssociation"): "Microsoft.Network/natGateways/join/action",
        (
            "network",
            "SubnetNetworkSecurityGroupAssociation",
        ): "Microsoft.Network/networkSecurityGroups/join/action",
        (
            "network",
            "TrafficManagerExternalEndpoint",
        ): "Microsoft.Network/trafficManagerProfiles/externalEndpoints/write",
        ("network", "TrafficManagerProfile"): "Microsoft.Network/trafficManagerProfiles/write",
        ("network", "VirtualNetwork"): "Microsoft.Network/virtualNetworks/write",
        ("storage", "Account"): "Microsoft.Storage/storageAccounts/write",
        ("storage", "Container"): "Microsoft.Storage/storageAccounts/blobServices/containers/write",
        (
            "storage",
            "ContainerImmutabilityPolicy",
        ): "Microsoft.Storage/storageAccounts/blobServices/containers/immutabilityPolicies/write",
    },
}

#: GCP and Azure name their permissions by service, not by the upjet group: the prefix each
#: group's permissions carry. (AWS: the group's first label is the IAM service prefix.)
SERVICE_PREFIXES: dict[str, dict[str, tuple[str, ...]]] = {
    "gcp": {
        "cloudplatform": ("iam.", "resourcemanager."),
        "compute": ("compute.",),
        "container": ("container.",),
        "dns": ("dns.",),
        "kms": ("cloudkms.",),
        "sql": ("cloudsql.",),
        "storage": ("storage.",),
    },
    "azure": {
        "authorization": ("Microsoft.Authorization/",),
        "azure": ("Microsoft.Resources/",),
        "cdn": ("Microsoft.Cdn/",),
        "containerservice": ("Microsoft.ContainerService/",),
        "dbforpostgresql": ("Microsoft.DBforPostgreSQL/",),
        "insights": ("Microsoft.Insights/",),
        "keyvault": ("Microsoft.KeyVault/",),
        "managedidentity": ("Microsoft.ManagedIdentity/",),
        "network": ("Microsoft.Network/",),
        "operationalinsights": ("Microsoft.OperationalInsights/",),
        "storage": ("Microsoft.Storage/",),
    },
}

#: AWS actions that support no resource-level permission (the Service Authorization Reference
#: lists no resource type for them): the only writes allowed on ``Resource: "*"``.
NO_RESOURCE_LEVEL = {
    "kms:CreateKey",
    "route53:CreateHostedZone",
    "route53:CreateHealthCheck",
    "acm:RequestCertificate",
}
#: Read verbs: the only actions a wildcard may stand for.
READ_VERBS = ("Describe", "Get", "List")
#: The placeholders a policy may carry (README.md in the folder: `envsubst` fills them in).
PLACEHOLDERS = {"AWS_ACCOUNT_ID", "BUCKET_PREFIX", "AZURE_SUBSCRIPTION_ID"}
#: Clouds' managed-resource groups: <service>.<cloud>.upbound.io, or the family's own group
#: (azure.upbound.io: ResourceGroup), each with a namespaced twin (.m.).
#: libyaml's loader where PyYAML has it: the goldens are large.
LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
GROUP = re.compile(r"(?:(?P<service>[a-z0-9]+)\.)?(?P<cloud>aws|gcp|azure)(?:\.m)?\.upbound\.io")


def _composed() -> dict[str, dict[str, dict[tuple[str, str], list[dict[str, Any]]]]]:
    """module -> cloud -> (service, kind) -> the composed bodies, from every golden."""
    out: dict[str, dict[str, dict[tuple[str, str], list[dict[str, Any]]]]] = defaultdict(
        lambda: defaultdict(lambda: defaultdict(list))
    )
    for path in sorted(GOLDEN.rglob("*.yaml")):
        module = path.relative_to(GOLDEN).parts[0]
        for doc in yaml.load_all(path.read_text(), Loader=LOADER):
            match = GROUP.fullmatch(str((doc or {}).get("apiVersion", "")).split("/")[0])
            if match:
                service = match["service"] or match["cloud"]
                out[module][match["cloud"]][(service, doc["kind"])].append(doc)
    return out


COMPOSED = _composed()
MODULE_CLOUDS = sorted((m, c) for m, clouds in COMPOSED.items() for c in clouds)


AWS_MODULES = sorted(p.parent.name for p in PERMISSIONS.glob("*/aws-policy.json"))


def _aws_statements(module: str) -> list[dict[str, Any]]:
    policy = json.loads((PERMISSIONS / module / FILES["aws"]).read_text())
    assert policy["Version"] == "2012-10-17"
    return policy["Statement"]


def _as_list(value: str | list[str]) -> list[str]:
    return [value] if isinstance(value, str) else value


def _granted(module: str, cloud: str) -> list[str]:
    """Every action or permission the module's policy for the cloud allows."""
    path = PERMISSIONS / module / FILES[cloud]
    if cloud == "aws":
        return [
            a
            for s in _aws_statements(module)
            if s["Effect"] == "Allow"
            for a in _as_list(s["Action"])
        ]
    if cloud == "gcp":
        return list(yaml.safe_load(path.read_text())["includedPermissions"])
    role = json.loads(path.read_text())
    return [*role["Actions"], *role["DataActions"]]


def _allows(granted: list[str], action: str) -> bool:
    """AWS and Azure match actions case-insensitively, ``*`` a wildcard; GCP exactly."""
    return any(fnmatch.fnmatchcase(action.lower(), g.lower()) for g in granted)


def test_the_goldens_compose_cloud_kinds_for_the_modules_with_permissions():
    assert {m for m, _ in MODULE_CLOUDS} == {
        "async-actor",
        "cluster",
        "contact-center",
        "environment",
    }
    assert sorted(p.name for p in PERMISSIONS.iterdir() if p.is_dir()) == sorted(
        {m for m, _ in MODULE_CLOUDS}
    )


@pytest.mark.parametrize(("module", "cloud"), MODULE_CLOUDS)
def test_every_composed_kind_is_known(module, cloud):
    unknown = sorted(k for k in COMPOSED[module][cloud] if k not in CREATES[cloud])
    assert unknown == [], f"add to CREATES[{cloud!r}] the permission that creates each of these"


@pytest.mark.parametrize(("module", "cloud"), MODULE_CLOUDS)
def test_the_policy_covers_every_service_and_kind_the_module_composes(module, cloud):
    """Derived from the goldens: each service has permissions, each kind its create permission."""
    assert (PERMISSIONS / module / FILES[cloud]).is_file(), f"{module} composes on {cloud}"
    granted = _granted(module, cloud)
    missing = []
    for service, kind in sorted(COMPOSED[module][cloud]):
        prefixes = (f"{service}:",) if cloud == "aws" else SERVICE_PREFIXES[cloud][service]
        if not any(g.startswith(prefixes) for g in granted):
            missing.append(f"{service}.{cloud}.upbound.io {kind}: no {'/'.join(prefixes)} at all")
            continue
        needed = CREATES[cloud].get((service, kind))
        if needed and not _allows(granted, needed):
            missing.append(f"{service}.{cloud}.upbound.io {kind}: needs {needed}")
    assert missing == []


POLICY_FILES = sorted(p for name in FILES.values() for p in PERMISSIONS.glob(f"*/{name}"))


@pytest.mark.parametrize("path", POLICY_FILES, ids=lambda p: str(p.relative_to(PERMISSIONS)))
def test_no_policy_allows_every_action(path: Path):
    """No ``*``, no ``service:*`` (or ``Microsoft.X/*``), wildcards on read verbs only."""
    cloud = next(c for c, name in FILES.items() if path.name == name)
    granted = _granted(path.parent.name, cloud)
    assert granted and len(granted) == len(set(granted)), "duplicates"
    for action in granted:
        if cloud == "gcp":
            assert re.fullmatch(r"[a-z]+\.[a-zA-Z]+\.[a-zA-Z]+", action), action
            continue
        assert action != "*", action
        if cloud == "aws":
            service, _, verb = action.partition(":")
            assert re.fullmatch(r"[a-z0-9-]+", service) and verb, action
            assert "*" not in verb or (
                verb.endswith("*") and verb.startswith(READ_VERBS) and verb.count("*") == 1
            ), action
        else:
            provider, _, rest = action.partition("/")
            assert provider.startswith("Microsoft.") and rest and "*" not in action, action
    placeholders = set(re.findall(r"\$\{([A-Z_]+)\}", path.read_text()))
    assert placeholders <= PLACEHOLDERS, placeholders - PLACEHOLDERS


@pytest.mark.parametrize("module", AWS_MODULES)
def test_aws_writes_are_scoped_to_the_account_and_never_to_every_resource(module):
    for statement in _aws_statements(module):
        assert statement["Effect"] == "Allow" and "NotAction" not in statement
        assert "NotResource" not in statement
        actions = _as_list(statement["Action"])
        resources = _as_list(statement["Resource"])
        writes = [a for a in actions if not a.split(":")[1].startswith(READ_VERBS)]
        if "*" in resources:
            assert resources == ["*"]
            assert set(writes) <= NO_RESOURCE_LEVEL, (statement["Sid"], writes)
            continue
        for arn in resources:
            # S3 bucket and Route 53 ARNs carry no account; everything else names it
            assert re.match(r"arn:aws:(s3|route53):::", arn) or "${AWS_ACCOUNT_ID}" in arn, arn


def _name(body: dict[str, Any]) -> str:
    """The cloud name a composed resource gets: ``forProvider.name`` where the kind has one,
    else the external name, else metadata.name (upjet's default external name)."""
    meta = body["metadata"]
    return str(
        body["spec"].get("forProvider", {}).get("name")
        or (meta.get("annotations") or {}).get("crossplane.io/external-name")
        or meta["name"]
    )


#: The ARN each kind with a predictable name gets, from its composed body.
ARNS = {
    ("sqs", "Queue"): "arn:aws:sqs:{region}:${{AWS_ACCOUNT_ID}}:{name}",
    ("s3", "Bucket"): "arn:aws:s3:::{name}",
    ("iam", "Role"): "arn:aws:iam::${{AWS_ACCOUNT_ID}}:role/{name}",
    ("iam", "Policy"): "arn:aws:iam::${{AWS_ACCOUNT_ID}}:policy/{name}",
    ("rds", "Instance"): "arn:aws:rds:{region}:${{AWS_ACCOUNT_ID}}:db:{name}",
    ("rds", "ParameterGroup"): "arn:aws:rds:{region}:${{AWS_ACCOUNT_ID}}:pg:{name}",
    ("rds", "SubnetGroup"): "arn:aws:rds:{region}:${{AWS_ACCOUNT_ID}}:subgrp:{name}",
}


@pytest.mark.parametrize("module", AWS_MODULES)
def test_aws_resources_are_scoped_by_the_modules_naming(module):
    """Each named resource the module composes (queues ``asya-<namespace>-<actor>``, buckets,
    roles, databases) falls under the resource pattern of the statement that creates it, with
    the placeholders standing for anything: the patterns are neither too narrow for the names
    the module gives nor wider than ``*`` in the account."""
    statements = _aws_statements(module)
    outside = []
    for (service, kind), bodies in COMPOSED[module]["aws"].items():
        template = ARNS.get((service, kind))
        if template is None:
            continue
        action = CREATES["aws"][(service, kind)]
        patterns = [
            re.sub(r"\$\{[A-Z_]+\}", "*", r) if "BUCKET_PREFIX" in r else r
            for s in statements
            if _allows(_as_list(s["Action"]), action)
            for r in _as_list(s["Resource"])
        ]
        assert "*" not in patterns, f"{action} on every resource"
        for body in bodies:
            region = body["spec"].get("forProvider", {}).get("region", "us-east-1")
            arn = template.format(region=region, name=_name(body))
            if not any(fnmatch.fnmatchcase(arn, p) for p in patterns):
                outside.append(f"{kind} {arn} (patterns {patterns})")
    assert outside == []


def test_actor_queues_are_the_only_thing_async_actor_may_touch():
    (statement,) = _aws_statements("async-actor")
    assert statement["Resource"] == "arn:aws:sqs:*:${AWS_ACCOUNT_ID}:asya-*"
    assert all(a.startswith("sqs:") for a in statement["Action"])


@pytest.mark.parametrize(
    "path", sorted(PERMISSIONS.glob("*/azure-role.json")), ids=lambda p: p.parent.name
)
def test_azure_role_definitions_are_custom_and_assignable_to_a_subscription(path: Path):
    role = json.loads(path.read_text())
    assert role["IsCustom"] is True and role["Name"] and role["Description"]
    assert role["NotActions"] == [] and role["NotDataActions"] == []
    assert role["AssignableScopes"] == ["/subscriptions/${AZURE_SUBSCRIPTION_ID}"]


@pytest.mark.parametrize(
    "path", sorted(PERMISSIONS.glob("*/gcp-role.json")), ids=lambda p: p.parent.name
)
def test_gcp_custom_roles_are_what_gcloud_takes(path: Path):
    role = yaml.safe_load(path.read_text())
    assert set(role) == {"title", "description", "stage", "includedPermissions"}
    assert role["stage"] == "GA" and len(role["title"]) <= 100
