"""The cluster module on GCP, over gRPC: VPC, GKE, pools, Cloud DNS, workload identity, add-ons.

Fixtures are inline: an XCluster for cloud gcp with two pools and a domain, and an
EnvironmentConfig fetched through the step input's ``environment``.
"""

from __future__ import annotations

import copy
from typing import Any

import providersim
import pytest
from crossplane.function.proto.v1 import run_function_pb2 as fnv1

from tests.support.controls import READY_FALSE, SYNCED_FALSE, broken
from tests.support.harness import request, step_input
from tests.support.table import case

PROJECT = "acme-prod-1234"
REGION = "europe-west3"
XR_NAME = "shop-prod"
DOMAIN = "shop.example.com"
#: The identity's account id: ``<xr>-cert-manager-identity`` is over GCP's 30 characters,
#: so it is cut and suffixed with a hash of the full name.
ACCOUNT_ID = "shop-prod-cert-manage-860530f6"
EMAIL = f"{ACCOUNT_ID}@{PROJECT}.iam.gserviceaccount.com"

GCP_KINDS = {
    "network": "Network",
    "network-subnet": "Subnetwork",
    "network-router": "Router",
    "network-nat": "RouterNAT",
    "cluster": "Cluster",
    "cluster-webhooks": "Firewall",
    "dns-public": "ManagedZone",
    "dns-private": "ManagedZone",
}

#: What the provider reports once the cluster is up (the fields the gcp module reads).


def composite(**parameters: Any) -> dict[str, Any]:
    """An XCluster for GCP: two pools, a domain, private by default."""
    return {
        "apiVersion": "myplatform.io/v1alpha1",
        "kind": "XCluster",
        "metadata": {
            "name": XR_NAME,
            "labels": {
                "cloud": "gcp",
                "planeId": PROJECT,
                "planeType": "prod",
                "crossplane.io/claim-namespace": "team-shop",
                "crossplane.io/claim-name": "prod",
            },
        },
        "spec": {
            "forProvider": {"location": REGION},
            "parameters": {
                "domain": DOMAIN,
                "kubernetesVersion": "1.33",
                "tags": {"CostCenter": "Shop.EU"},
                **parameters,
            },
            "pools": {
                "general": {
                    "autoscaling": {"minNodeCount": 2, "maxNodeCount": 6},
                    "nodeConfig": {"machineType": "e2-standard-8"},
                },
                "batch": {"autoscaling": {"minNodeCount": 0, "maxNodeCount": 4}},
            },
        },
    }


ENVIRONMENT = {
    "apiVersion": "apiextensions.crossplane.io/v1beta1",
    "kind": "EnvironmentConfig",
    "metadata": {"name": "gcp-prod"},
    "data": {
        "defaultMachineType": "e2-standard-4",
        "network": {
            "subnetCidr": "10.10.0.0/20",
            "podsCidr": "10.64.0.0/14",
            "servicesCidr": "10.68.0.0/20",
        },
        "monitoring": {"enabled": True, "retention": "30d"},
        "tags": {"team": "platform"},
        # Required: GKE's API endpoint is public (see test_api_server_needs_an_allowlist).
        "gcp": {
            "masterAuthorizedNetworks": [
                {"cidrBlock": "203.0.113.0/24", "displayName": "management cluster"}
            ]
        },
    },
}


def run(client, xr: dict[str, Any], observed: dict[str, dict[str, Any]] | None = None, **env):
    """One pass of the cluster module with the GCP EnvironmentConfig (plus ``env`` overrides)."""
    environment = copy.deepcopy(ENVIRONMENT)
    if "gcp" in env:
        env["gcp"] = {**environment["data"]["gcp"], **env["gcp"]}
    environment["data"].update(env)
    req = request(
        xr,
        step_input("cluster", environment=[{"name": "gcp-prod"}]),
        observed=observed or {},
        required={"environment-0": [environment]},
    )
    rendered = client.run(req)
    assert rendered.fatal == [], rendered.fatal
    return rendered


def observe_all(rendered, *names: str) -> dict[str, dict[str, Any]]:
    """The desired bodies of ``names`` (all when none given) as observed Ready, as the
    simulated providers report them."""
    return {
        name: providersim.ready(rendered.resource(name))
        for name in names or tuple(rendered.resources)
    }


def converge(client, xr: dict[str, Any], passes: int = 4, **env):
    """Run passes, observing everything desired as Ready each time; the last rendering."""
    observed: dict[str, dict[str, Any]] = {}
    rendered = run(client, xr, observed, **env)
    for _ in range(passes):
        observed = {**observed, **observe_all(rendered)}
        rendered = run(client, xr, observed, **env)
    return rendered, observed


def errors_of(catalog, rendered) -> dict[str, list[str]]:
    """Schema errors per desired resource (empty when everything validates)."""
    found = {name: catalog.validate(body) for name, body in sorted(rendered.resources.items())}
    return {name: errs for name, errs in found.items() if errs}


# -- 1. first pass ------------------------------------------------------------------------


def test_first_pass_creates_network_and_zones_and_holds_the_rest(client, catalog):
    first = run(client, composite())
    kinds = first.kinds
    assert kinds["network"] == "Network"
    assert kinds["network-subnet"] == "Subnetwork"
    assert kinds["network-router"] == "Router"
    assert kinds["network-nat"] == "RouterNAT"
    assert kinds["dns-public"] == "ManagedZone"
    assert kinds["cluster-nodes"] == "ServiceAccount"
    # Waiting: cluster (network), pools, ProviderConfigs, releases, identity.
    for held in (
        "cluster",
        "pool-general",
        "pool-batch",
        "providers-helm",
        "providers-kubernetes",
        "release-cert-manager",
        "release-ingress-nginx",
        "release-kube-prometheus-stack",
        "cert-manager-identity",
    ):
        assert held not in kinds, held
    composed = first.condition("Composed")
    assert composed is not None
    assert composed.reason == "WaitingForDependencies"
    assert "cluster (waits for network" in composed.message
    assert "pool-general (waits for cluster, cluster-nodes)" in composed.message
    assert errors_of(catalog, first) == {}
    assert not any(first.ready(name) for name in first.resources)


def test_cluster_is_emitted_once_network_is_observed_and_pools_wait_for_it(client, catalog):
    first = run(client, composite())
    second = run(client, composite(), observe_all(first))
    assert second.kinds["cluster"] == "Cluster"
    assert second.kinds["cluster-webhooks"] == "Firewall"
    assert "pool-general" not in second.resources
    assert "providers-helm" not in second.resources
    assert "release-cert-manager" not in second.resources
    assert second.kinds["dns-private"] == "ManagedZone"
    assert errors_of(catalog, second) == {}


# -- 2. converged ---------------------------------------------------------------------------


def test_converged_pass_emits_everything_valid_and_ready(client, catalog):
    rendered, observed = converge(client, composite())
    kinds = rendered.kinds
    for name, kind in GCP_KINDS.items():
        assert kinds[name] == kind, name
    assert kinds["pool-general"] == "NodePool"
    assert kinds["pool-batch"] == "NodePool"
    assert kinds["providers-helm"] == "ProviderConfig"
    assert kinds["providers-kubernetes"] == "ProviderConfig"
    for chart in ("cert-manager", "ingress-nginx", "kube-prometheus-stack"):
        assert kinds[f"release-{chart}"] == "Release"
    assert kinds["cert-manager-identity"] == "ServiceAccount"
    assert kinds["cert-manager-identity-binding"] == "ServiceAccountIAMMember"
    assert kinds["cert-manager-identity-dns-admin"] == "ProjectIAMMember"
    usages = {n for n, k in kinds.items() if k == "ClusterUsage"}
    assert "usage-cluster-by-pool-general" in usages
    assert "usage-network-by-cluster" in usages
    assert "usage-network-subnet-by-cluster" in usages
    assert "usage-cert-manager-identity-by-cert-manager-identity-binding" in usages
    assert errors_of(catalog, rendered) == {}
    for name in observed:
        assert rendered.ready(name), name
    composed = rendered.condition("Composed")
    assert composed is not None
    assert composed.reason == "AllResourcesComposed"


def test_converged_pass_writes_cluster_status(client):
    rendered, observed = converge(client, composite())
    status = rendered.status
    cluster = observed["cluster"]["status"]["atProvider"]
    # GKE knows the cluster by its external name; its id ends with it
    name = observed["cluster"]["metadata"]["annotations"]["crossplane.io/external-name"]
    assert status["clusterEndpoint"] == f"https://{cluster['endpoint']}"
    assert status["clusterCA"] == cluster["masterAuth"]["clusterCaCertificate"]
    assert cluster["id"] == f"projects/{PROJECT}/locations/{REGION}/clusters/{name}"
    assert status["clusterName"] == name
    assert status["oidcIssuer"] == (
        f"https://container.googleapis.com/v1/projects/{PROJECT}/locations/{REGION}/clusters/{name}"
    )
    assert status["cloud"] == "gcp"


def test_no_cluster_status_before_the_cluster_is_observed(client):
    first = run(client, composite())
    for key in ("clusterEndpoint", "clusterCA", "clusterName", "oidcIssuer"):
        assert key not in first.status


def test_releases_use_gke_identity_and_internal_load_balancer(client):
    rendered, _ = converge(client, composite())
    ingress = rendered.resource("release-ingress-nginx")["spec"]["forProvider"]["values"]
    assert ingress["controller"]["service"]["annotations"] == {
        "networking.gke.io/load-balancer-type": "Internal"
    }
    cert_manager = rendered.resource("release-cert-manager")["spec"]["forProvider"]["values"]
    assert cert_manager["serviceAccount"]["annotations"] == {
        "iam.gke.io/gcp-service-account": EMAIL
    }
    assert "podLabels" not in cert_manager
    helm_config = rendered.resource("providers-helm")
    for name in ("release-cert-manager", "release-ingress-nginx"):
        release = rendered.resource(name)
        assert release["spec"]["providerConfigRef"] == {"name": helm_config["metadata"]["name"]}


def test_provider_configs_read_the_kubeconfig_with_google_credentials(client):
    rendered, _ = converge(client, composite())
    for name in ("providers-helm", "providers-kubernetes"):
        spec = rendered.resource(name)["spec"]
        assert spec["credentials"]["secretRef"] == {
            "namespace": "crossplane-system",
            "name": f"{XR_NAME}-kubeconfig",
            "key": "kubeconfig",
        }
        assert spec["identity"] == {
            "type": "GoogleApplicationCredentials",
            "source": "InjectedIdentity",
        }


def test_cluster_identity_from_a_secret(client, catalog):
    gcp = {"clusterIdentity": {"source": "Secret", "secretRef": {"name": "gke-admin"}}}
    rendered, _ = converge(client, composite(), gcp=gcp)
    identity = rendered.resource("providers-helm")["spec"]["identity"]
    assert identity == {
        "type": "GoogleApplicationCredentials",
        "source": "Secret",
        "secretRef": {"name": "gke-admin", "namespace": "crossplane-system", "key": "credentials"},
    }
    assert catalog.validate(rendered.resource("providers-helm")) == []


def test_bad_gcp_environment_is_a_fatal_result_naming_the_field(client):
    req = request(
        composite(),
        step_input("cluster", settings={"gcp": {"releaseChannel": "NIGHTLY"}}),
    )
    rendered = client.run(req)
    assert len(rendered.fatal) == 1
    assert "environment.gcp.releaseChannel" in rendered.fatal[0]


def test_secret_identity_without_a_secret_is_rejected(client):
    req = request(
        composite(),
        step_input("cluster", settings={"gcp": {"clusterIdentity": {"source": "Secret"}}}),
    )
    rendered = client.run(req)
    assert len(rendered.fatal) == 1
    assert "environment.gcp.clusterIdentity" in rendered.fatal[0]


# -- 3. key fields ------------------------------------------------------------------------


def for_provider(rendered, name: str) -> dict[str, Any]:
    """``spec.forProvider`` of desired resource ``name``."""
    return rendered.resource(name)["spec"]["forProvider"]


def test_network_fields(client):
    first = run(client, composite())
    network = for_provider(first, "network")
    assert network["autoCreateSubnetworks"] is False
    assert network["project"] == PROJECT
    subnet = for_provider(first, "network-subnet")
    assert subnet["region"] == REGION
    assert subnet["ipCidrRange"] == "10.10.0.0/20"
    assert subnet["privateIpGoogleAccess"] is True
    assert subnet["networkRef"] == {"name": f"{XR_NAME}-network"}
    assert subnet["secondaryIpRange"] == [
        {"rangeName": "pods", "ipCidrRange": "10.64.0.0/14"},
        {"rangeName": "services", "ipCidrRange": "10.68.0.0/20"},
    ]
    router = for_provider(first, "network-router")
    assert router["networkRef"] == {"name": f"{XR_NAME}-network"}
    assert router["region"] == REGION
    nat = for_provider(first, "network-nat")
    assert nat["routerRef"] == {"name": f"{XR_NAME}-network-router"}
    assert nat["subnetwork"][0]["nameRef"] == {"name": f"{XR_NAME}-network-subnet"}
    assert nat["natIpAllocateOption"] == "AUTO_ONLY"


def test_nat_serves_the_node_and_pod_ranges_only(client, catalog):
    """Nodes and pods egress through Cloud NAT; the services range never leaves a node."""
    first = run(client, composite())
    nat = for_provider(first, "network-nat")
    assert nat["sourceSubnetworkIpRangesToNat"] == "LIST_OF_SUBNETWORKS"
    assert nat["subnetwork"] == [
        {
            "nameRef": {"name": f"{XR_NAME}-network-subnet"},
            "sourceIpRangesToNat": ["PRIMARY_IP_RANGE", "LIST_OF_SECONDARY_IP_RANGES"],
            "secondaryIpRangeNames": ["pods"],
        }
    ]
    assert catalog.validate(first.resource("network-nat")) == []


def test_cluster_fields(client):
    rendered, _ = converge(client, composite())
    body = rendered.resource("cluster")
    assert body["apiVersion"] == "container.gcp.upbound.io/v1beta2"
    spec = body["spec"]
    cluster = spec["forProvider"]
    assert cluster["location"] == REGION
    assert cluster["project"] == PROJECT
    assert cluster["networkRef"] == {"name": f"{XR_NAME}-network"}
    assert cluster["subnetworkRef"] == {"name": f"{XR_NAME}-network-subnet"}
    assert cluster["networkingMode"] == "VPC_NATIVE"
    assert cluster["ipAllocationPolicy"] == {
        "clusterSecondaryRangeName": "pods",
        "servicesSecondaryRangeName": "services",
    }
    assert cluster["privateClusterConfig"] == {
        "enablePrivateNodes": True,
        "enablePrivateEndpoint": False,
        "masterIpv4CidrBlock": "172.16.0.0/28",
        "masterGlobalAccessConfig": {"enabled": True},
    }
    assert cluster["workloadIdentityConfig"] == {"workloadPool": f"{PROJECT}.svc.id.goog"}
    assert cluster["releaseChannel"] == {"channel": "REGULAR"}
    assert cluster["minMasterVersion"] == "1.33"
    assert cluster["deletionProtection"] is False
    assert spec["writeConnectionSecretToRef"] == {
        "name": f"{XR_NAME}-kubeconfig",
        "namespace": "crossplane-system",
    }
    assert spec["providerConfigRef"] == {"name": "default"}
    firewall = for_provider(rendered, "cluster-webhooks")
    assert firewall["sourceRanges"] == ["172.16.0.0/28"]
    assert firewall["allow"] == [{"protocol": "tcp", "ports": ["8443"]}]


CREATION_ONLY_CLUSTER_FIELDS = {
    "removeDefaultNodePool": True,
    "initialNodeCount": 1,
    "masterAuth": {"clientCertificateConfig": {"issueClientCertificate": False}},
}


def test_creation_only_cluster_fields_are_init_provider(client, catalog):
    """Only applied when creating: an adopted cluster keeps its default pool and isn't replaced."""
    rendered, _ = converge(client, composite())
    spec = rendered.resource("cluster")["spec"]
    assert spec["initProvider"] == CREATION_ONLY_CLUSTER_FIELDS
    for field in CREATION_ONLY_CLUSTER_FIELDS:
        assert field not in spec["forProvider"], field
    assert catalog.validate(rendered.resource("cluster")) == []


def test_adopted_cluster_under_management_never_removes_its_default_pool(client, catalog):
    imported = {"enabled": True, "mode": "manage", "resources": {"cluster": {"externalName": "x"}}}
    rendered, _ = converge(client, composite(**{"import": imported}))
    spec = rendered.resource("cluster")["spec"]
    assert spec["managementPolicies"] == ["*"]
    assert "removeDefaultNodePool" not in spec["forProvider"]
    assert "initialNodeCount" not in spec["forProvider"]


def test_pool_initial_size_is_init_provider(client, catalog):
    """GKE moves a pool's initial count on resize; in forProvider that would force replacement."""
    rendered, _ = converge(client, composite())
    for pool in ("pool-general", "pool-batch"):
        spec = rendered.resource(pool)["spec"]
        assert spec["initProvider"] == {"initialNodeCount": 1}
        assert "initialNodeCount" not in spec["forProvider"]
        assert "nodeCount" not in spec["forProvider"]
        assert catalog.validate(rendered.resource(pool)) == []


def test_cluster_labels_are_gcp_labels(client):
    rendered, _ = converge(client, composite())
    labels = for_provider(rendered, "cluster")["resourceLabels"]
    assert labels == {
        "costcenter": "shop_eu",
        "crossplane-claim": "team-shop_prod",
        "crossplane-composite": XR_NAME,
        "platform-module": "cluster",
        "team": "platform",
    }
    zone_labels = for_provider(rendered, "dns-public")["labels"]
    assert zone_labels == labels
    pool_labels = for_provider(rendered, "pool-general")["nodeConfig"]["resourceLabels"]
    assert pool_labels == labels
    # Kinds without a labels field get none.
    assert "labels" not in for_provider(rendered, "network")
    assert "labels" not in for_provider(rendered, "network-subnet")


def test_nodes_run_as_a_least_privileged_service_account(client):
    rendered, _ = converge(client, composite())
    account = rendered.resource("cluster-nodes")
    assert account["kind"] == "ServiceAccount"
    account_id = account["metadata"]["annotations"]["crossplane.io/external-name"]
    assert account_id == f"{XR_NAME}-cluster-nodes"
    member = f"serviceAccount:{account_id}@{PROJECT}.iam.gserviceaccount.com"
    grants = {
        for_provider(rendered, name)["role"]: for_provider(rendered, name)["member"]
        for name, kind in rendered.kinds.items()
        if kind == "ProjectIAMMember" and name.startswith("cluster-nodes-")
    }
    assert grants == {
        "roles/artifactregistry.reader": member,
        "roles/container.defaultNodeServiceAccount": member,
    }
    for pool in ("pool-general", "pool-batch"):
        node_config = for_provider(rendered, pool)["nodeConfig"]
        assert node_config["serviceAccountRef"] == {"name": f"{XR_NAME}-cluster-nodes"}
        assert f"usage-cluster-nodes-by-{pool}" in rendered.resources


def test_master_authorized_networks_from_the_environment(client, catalog):
    networks = [{"cidrBlock": "203.0.113.0/24", "displayName": "crossplane"}]
    rendered, _ = converge(client, composite(), gcp={"masterAuthorizedNetworks": networks})
    cluster = for_provider(rendered, "cluster")
    assert cluster["masterAuthorizedNetworksConfig"] == {"cidrBlocks": networks}
    assert catalog.validate(rendered.resource("cluster")) == []


def test_pool_fields(client):
    rendered, _ = converge(client, composite())
    general = for_provider(rendered, "pool-general")
    assert general["clusterRef"] == {"name": f"{XR_NAME}-cluster"}
    assert general["location"] == REGION
    assert general["autoscaling"]["totalMinNodeCount"] == 2
    assert general["autoscaling"]["totalMaxNodeCount"] == 6
    assert general["nodeConfig"]["machineType"] == "e2-standard-8"
    assert general["nodeConfig"]["workloadMetadataConfig"] == {"mode": "GKE_METADATA"}
    assert general["nodeConfig"]["oauthScopes"] == [
        "https://www.googleapis.com/auth/cloud-platform"
    ]
    batch = for_provider(rendered, "pool-batch")
    assert batch["autoscaling"]["totalMinNodeCount"] == 0
    assert batch["autoscaling"]["totalMaxNodeCount"] == 4
    # No machine type on the pool: the environment's default.
    assert batch["nodeConfig"]["machineType"] == "e2-standard-4"


def test_dns_zones(client):
    rendered, _ = converge(client, composite())
    public = for_provider(rendered, "dns-public")
    assert public["dnsName"] == f"{DOMAIN}."
    assert public["visibility"] == "public"
    assert "privateVisibilityConfig" not in public
    private = for_provider(rendered, "dns-private")
    assert private["dnsName"] == f"{DOMAIN}."
    assert private["visibility"] == "private"
    assert private["privateVisibilityConfig"] == {
        "networks": [{"networkUrlRef": {"name": f"{XR_NAME}-network"}}]
    }
    assert rendered.resource("dns-public")["metadata"]["name"] == f"{XR_NAME}-dns-public"


def test_workload_identity(client):
    rendered, _ = converge(client, composite())
    account = rendered.resource("cert-manager-identity")
    assert account["apiVersion"] == "cloudplatform.gcp.upbound.io/v1beta1"
    assert account["metadata"]["annotations"]["crossplane.io/external-name"] == ACCOUNT_ID
    binding = for_provider(rendered, "cert-manager-identity-binding")
    assert binding == {
        "serviceAccountIdRef": {"name": f"{XR_NAME}-cert-manager-identity"},
        "role": "roles/iam.workloadIdentityUser",
        "member": f"serviceAccount:{PROJECT}.svc.id.goog[cert-manager/cert-manager]",
    }
    dns_admin = for_provider(rendered, "cert-manager-identity-dns-admin")
    assert dns_admin == {
        "project": PROJECT,
        "role": "roles/dns.admin",
        "member": f"serviceAccount:{EMAIL}",
    }


def test_observed_service_account_email_wins(client):
    _, observed = converge(client, composite())
    email = f"custom-id@{PROJECT}.iam.gserviceaccount.com"
    observed["cert-manager-identity"]["status"]["atProvider"]["email"] = email
    again = run(client, composite(), observed)
    assert for_provider(again, "cert-manager-identity-dns-admin")["member"] == (
        f"serviceAccount:{email}"
    )
    values = again.resource("release-cert-manager")["spec"]["forProvider"]["values"]
    assert values["serviceAccount"]["annotations"]["iam.gke.io/gcp-service-account"] == email


def test_long_composite_names_fit_gcp_limits(client, catalog):
    xr = composite()
    xr["metadata"]["name"] = "a-very-long-composite-name-for-the-checkout-team-x7k2p"
    rendered, _ = converge(client, xr)
    annotations = rendered.resource("cluster")["metadata"].get("annotations", {})
    cluster_name = annotations["crossplane.io/external-name"]
    assert len(cluster_name) <= 40
    assert cluster_name[0].isalpha()
    account = rendered.resource("cert-manager-identity")["metadata"]["annotations"]
    assert 6 <= len(account["crossplane.io/external-name"]) <= 30
    pool = rendered.resource("pool-general")["metadata"]["annotations"]
    assert len(pool["crossplane.io/external-name"]) <= 40
    assert errors_of(catalog, rendered) == {}


def test_same_input_gives_identical_output(client):
    first, observed = converge(client, composite())
    again = run(client, composite(), observed)
    assert first.response.desired.SerializeToString(deterministic=True) == (
        again.response.desired.SerializeToString(deterministic=True)
    )


# -- 4. public cluster, no domain ---------------------------------------------------------


def test_public_cluster_has_no_router_nat_or_private_zone(client, catalog):
    rendered, _ = converge(client, composite(privateCluster=False))
    kinds = rendered.kinds
    assert "network-router" not in kinds
    assert "network-nat" not in kinds
    assert "dns-private" not in kinds
    assert "cluster-webhooks" not in kinds
    assert "RouterNAT" not in kinds.values()
    assert "Router" not in kinds.values()
    assert "privateClusterConfig" not in for_provider(rendered, "cluster")
    assert kinds["dns-public"] == "ManagedZone"
    ingress = rendered.resource("release-ingress-nginx")["spec"]["forProvider"]["values"]
    assert "annotations" not in ingress["controller"]["service"]
    assert errors_of(catalog, rendered) == {}


def test_no_domain_means_no_zones_and_no_identity(client, catalog):
    xr = composite()
    del xr["spec"]["parameters"]["domain"]
    rendered, _ = converge(client, xr)
    kinds = rendered.kinds
    assert "ManagedZone" not in kinds.values()
    assert not [name for name in kinds if name.startswith("cert-manager-identity")]
    assert "ServiceAccountIAMMember" not in kinds.values()
    # The only Google service account is the nodes' one.
    assert [n for n, k in kinds.items() if k == "ServiceAccount"] == ["cluster-nodes"]
    values = rendered.resource("release-cert-manager")["spec"]["forProvider"]["values"]
    assert "annotations" not in values["serviceAccount"]
    assert errors_of(catalog, rendered) == {}


def test_missing_plane_id_is_a_fatal_result(client):
    xr = composite()
    del xr["metadata"]["labels"]["planeId"]
    rendered = client.run(request(xr, step_input("cluster")))
    assert len(rendered.fatal) == 1
    assert "planeId" in rendered.fatal[0]


# -- 5. import ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("mode", "policies"),
    [
        case(
            "observe-only import: Crossplane reads the existing GKE cluster and never "
            "writes it, so a cluster adopted to look at cannot be changed or deleted",
            "observe",
            ["Observe"],
        ),
        case(
            "managed import: the adopted cluster gets every management policy, so the "
            "platform takes it over and reconciles it like one it created",
            "manage",
            ["*"],
        ),
    ],
)
def test_import_adopts_the_cluster(client, catalog, mode, policies):
    imported = {"enabled": True, "mode": mode, "resources": {"cluster": {"externalName": "x"}}}
    rendered, _ = converge(client, composite(**{"import": imported}))
    cluster = rendered.resource("cluster")
    assert cluster["spec"]["managementPolicies"] == policies
    assert cluster["spec"]["deletionPolicy"] == "Orphan"
    assert cluster["metadata"]["annotations"]["crossplane.io/external-name"] == "x"
    # Other resources are created as usual.
    assert "managementPolicies" not in rendered.resource("network")["spec"]
    assert catalog.validate(cluster) == []


# -- protocol and versions ----------------------------------------------------------------


def test_every_gcp_kind_is_emitted_at_its_storage_version(client, catalog):
    rendered, _ = converge(client, composite())
    gcp = {n: b for n, b in rendered.resources.items() if ".gcp.upbound.io/" in b["apiVersion"]}
    assert len(gcp) >= 15
    for name, body in sorted(gcp.items()):
        group, version = body["apiVersion"].split("/")
        storage = catalog.storage_version(group, body["kind"])
        assert storage is not None, name
        assert version == storage.version, f"{name}: {version} is not {storage.version}"


def test_v1beta1_protocol_gives_the_same_first_pass(client):
    environment = {"environment-0": [ENVIRONMENT]}
    req = request(
        composite(), step_input("cluster", environment=[{"name": "gcp-prod"}]), required=environment
    )
    v1 = client.run(req)
    beta = client.run(req, protocol="v1beta1")
    assert beta.fatal == []
    assert beta.resources == v1.resources


@pytest.mark.parametrize(
    "breakage",
    [
        case(
            "converged: the allowlist is on the cluster the provider applied, so "
            "ApiServerAccess vouches for it",
            None,
        ),
        case(
            "the provider cannot update the cluster (Synced=False): it may still admit an "
            "older list, so access is not vouched for",
            SYNCED_FALSE,
        ),
        case(
            "the cluster is not Ready: the allowlist is not verified yet, so access is "
            "not vouched for",
            READY_FALSE,
        ),
    ],
    ids=["converged", "Synced=False", "Ready=False"],
)
def test_api_server_access_vouches_for_the_allowlist_only_on_a_synced_ready_cluster(
    client, breakage
):
    networks = [{"cidrBlock": "203.0.113.0/24", "displayName": "crossplane"}]
    _, observed = converge(client, composite(), gcp={"masterAuthorizedNetworks": networks})
    if breakage is not None:
        observed = broken(observed, "cluster", breakage)
    rendered = run(client, composite(), observed, gcp={"masterAuthorizedNetworks": networks})
    access = rendered.condition("ApiServerAccess")
    assert access is not None
    if breakage is None:
        assert (access.status, access.reason) == (
            fnv1.STATUS_CONDITION_TRUE,
            "AuthorizedNetworks",
        ), access.message
        assert "203.0.113.0/24 (crossplane)" in access.message
        return
    assert (access.status, access.reason) == (fnv1.STATUS_CONDITION_FALSE, breakage.reason), (
        access.message
    )
    assert "the GKE API server admits only 203.0.113.0/24 (crossplane)" in access.message
    assert f"[cluster: {breakage.says}" in access.message, access.message


def test_api_server_access_is_not_vouched_before_the_cluster_exists(client):
    rendered = run(client, composite())
    access = rendered.condition("ApiServerAccess")
    assert access is not None
    assert (access.status, access.reason) == (fnv1.STATUS_CONDITION_FALSE, "ControlNotVerified")
    assert "[cluster: not created yet" in access.message, access.message
