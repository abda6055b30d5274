"""The cluster module on Azure, end to end over gRPC: AKS, its network, pools, DNS and identity.

Every pass is checked against the real provider CRDs (``catalog``). The fixtures are inline:
an ``XCluster`` composite labelled for azure with two pools, and an EnvironmentConfig fetched
through the step input's ``environment`` (as Crossplane would, via required resources).
"""

from __future__ import annotations

import base64
import copy
from typing import Any

import providersim
import pytest

from tests.support.deletion import deletion_order, deletion_rounds
from tests.support.harness import observed_ready, request, step_input

RESOURCE_GROUP = "rg-platform-team-a"
LOCATION = "westeurope"
DOMAIN = "team-a.example.com"
#: An issuer an earlier reconcile remembered in the composite's status.
OIDC_ISSUER = "https://westeurope.oic.prod-aks.azure.com/tenant-id/issuer-id/"
#: The API server the cluster's kubeconfig (its connection detail) names.
FQDN = "team-a-cluster-abc123.hcp.westeurope.azmk8s.io"
CA_DATA = base64.b64encode(
    b"-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"
).decode()
KUBECONFIG = f"""apiVersion: v1
clusters:
- cluster:
    certificate-authority-data: {CA_DATA}
    server: https://{FQDN}:443
  name: team-a-cluster
contexts:
- context:
    cluster: team-a-cluster
    user: clusterUser_rg_team-a-cluster
  name: team-a-cluster
current-context: team-a-cluster
kind: Config
users:
- name: clusterUser_rg_team-a-cluster
  user:
    client-certificate-data: Y2VydA==
    client-key-data: a2V5
"""

ENVIRONMENT_CONFIG: dict[str, Any] = {
    "apiVersion": "apiextensions.crossplane.io/v1beta1",
    "kind": "EnvironmentConfig",
    "metadata": {"name": "azure-defaults", "labels": {"cloud": "azure"}},
    "data": {
        "defaultMachineType": "Standard_D4ds_v5",
        "network": {
            "subnetCidr": "10.40.0.0/20",
            "podsCidr": "10.244.0.0/16",
            "servicesCidr": "10.96.0.0/16",
        },
        "tags": {"cost-center": "cc-42"},
        "monitoring": {"enabled": True, "retention": "7d"},
        "azure": {
            "apiServerAuthorizedIpRanges": ["203.0.113.0/24"],
            "clusterIdentity": {
                "secretRef": {"name": "crossplane-aks-identity"},
                "principalId": "p-crossplane",
            },
        },
    },
}
STEP_INPUT = step_input(
    "cluster",
    environment=[{"matchLabels": {"cloud": {"fromFieldPath": "metadata.labels.cloud"}}}],
)

#: The NAT gateway, its association and the control-plane identity a new private cluster
#: waits for.
NAT_READY = (
    "network",
    "network-nodes",
    "network-nat",
    "network-nodes-nat",
    "network-nat-ip",
    "network-nat-ip-association",
    "cluster-control-plane",
    "cluster-control-plane-network-contributor",
)


def at(observed: dict[str, Any], name: str) -> dict[str, Any]:
    """What the simulated provider reported for ``name`` (platform/providersim/simulation.py)."""
    return dict(observed[name]["status"]["atProvider"])


HELD_UNTIL_CLUSTER = (
    "pool-general",
    "pool-gpu",
    "providers-helm",
    "providers-kubernetes",
    "release-cert-manager",
    "release-ingress-nginx",
    "release-kube-prometheus-stack",
)


def composite(**parameters: Any) -> dict[str, Any]:
    """An azure XCluster with two pools; ``parameters`` override ``spec.parameters``."""
    return {
        "apiVersion": "myplatform.io/v1alpha1",
        "kind": "XCluster",
        "metadata": {
            "name": "team-a",
            "labels": {
                "cloud": "azure",
                "planeId": RESOURCE_GROUP,
                "planeType": "aks",
                "crossplane.io/claim-namespace": "team-a",
                "crossplane.io/claim-name": "main",
            },
        },
        "spec": {
            "forProvider": {"location": LOCATION},
            "parameters": {"domain": DOMAIN, "kubernetesVersion": "1.33", **parameters},
            "pools": {
                "general": {"autoscaling": {"minNodeCount": 2, "maxNodeCount": 6}},
                "gpu": {
                    "autoscaling": {"minNodeCount": 0, "maxNodeCount": 2},
                    "nodeConfig": {"machineType": "Standard_NC4as_T4_v3"},
                },
            },
        },
    }


def run(
    client: Any, xr: dict[str, Any], observed: dict[str, Any] | None = None, **kwargs: Any
) -> Any:
    """One pass with the azure EnvironmentConfig fetched."""
    rsp = client.run(
        request(
            xr,
            STEP_INPUT,
            observed=observed,
            required={"environment-0": [ENVIRONMENT_CONFIG]},
            **kwargs,
        )
    )
    assert rsp.fatal == [], rsp.fatal
    return rsp


def observe(rendered: Any, observed: dict[str, Any] | None = None) -> dict[str, Any]:
    """Everything desired in ``rendered`` as observed Ready, as the providers report it."""
    result = dict(observed or {})
    for name, body in rendered.resources.items():
        if name not in result:
            result[name] = providersim.ready(body)
    return result


def converge(client: Any, xr: dict[str, Any], passes: int = 8) -> tuple[Any, dict[str, Any]]:
    """Pass after pass, observe every desired resource as Ready, until nothing new appears.

    The last pass returned saw all its desired resources observed (with the cluster's
    kubeconfig as connection detail, as Crossplane reads it from the connection secret).
    """
    observed: dict[str, Any] = {}
    for _ in range(passes):
        connection = (
            {"cluster": {"kubeconfig": KUBECONFIG.encode()}} if "cluster" in observed else None
        )
        rendered = run(client, xr, observed, observed_connection=connection)
        grown = observe(rendered, observed)
        if grown.keys() == observed.keys():
            return rendered, observed
        observed = grown
    raise AssertionError(f"not converged after {passes} passes: {rendered.messages}")


def nat_ready(client: Any) -> dict[str, Any]:
    """Observed: the network and what a new private cluster waits for, all Ready."""
    _, observed = converge(client, composite())
    return {name: observed[name] for name in NAT_READY}


def assert_all_valid(catalog: Any, rendered: Any) -> None:
    problems = {n: catalog.validate(b) for n, b in rendered.resources.items()}
    assert {n: p for n, p in problems.items() if p} == {}


def for_provider(rendered: Any, name: str) -> dict[str, Any]:
    return rendered.resource(name)["spec"]["forProvider"]


# -- 1. first pass ------------------------------------------------------------------------


@pytest.mark.parametrize("protocol", ["v1", "v1beta1"])
def test_first_pass_emits_network_and_zone_and_holds_what_needs_the_cluster(
    client: Any, catalog: Any, protocol: str
) -> None:
    rsp = client.run(
        request(composite(), STEP_INPUT, required={"environment-0": [ENVIRONMENT_CONFIG]}),
        protocol=protocol,
    )
    assert rsp.fatal == []
    assert rsp.kinds == {
        "network": "VirtualNetwork",
        "network-nodes": "Subnet",
        "network-nat": "NATGateway",
        "network-nat-ip": "PublicIP",
        "cluster-control-plane": "UserAssignedIdentity",
        "dns-public": "DNSZone",
    }
    assert_all_valid(catalog, rsp)
    composed = rsp.condition("Composed")
    assert composed is not None and composed.reason == "WaitingForDependencies"
    assert (
        "cluster (waits for cluster-control-plane status.atProvider.id, "
        "cluster-control-plane-network-contributor Ready, network-nodes-nat Ready, "
        "network-nat-ip-association Ready)"
    ) in composed.message
    for association in ("network-nat-ip-association", "network-nodes-nat"):
        assert f"{association} (waits for network-nat" in composed.message
    for name in HELD_UNTIL_CLUSTER:
        assert name not in rsp.resources
        assert f"{name} (waits for" in composed.message
    assert "cert-manager-identity-federation (waits for cluster" in composed.message
    assert not any(rsp.ready(name) for name in rsp.resources)


def test_cluster_follows_the_network_and_references_its_subnet(client: Any, catalog: Any) -> None:
    first = run(client, composite())
    second = run(client, composite(), observe(first))
    assert "cluster" not in second.resources  # the NAT association and the grant come first
    third = run(client, composite(), observe(second, observe(first)))
    assert third.kinds["cluster"] == "KubernetesCluster"
    assert third.kinds["dns-private"] == "PrivateDNSZone"
    assert_all_valid(catalog, third)
    pool = for_provider(third, "cluster")["defaultNodePool"]
    assert pool["vnetSubnetIdRef"] == {"name": "team-a-network-nodes"}
    for name in (*HELD_UNTIL_CLUSTER, "cert-manager-identity"):
        assert name not in third.resources


# -- 2. converged passes ------------------------------------------------------------------


def test_observed_cluster_releases_pools_addons_identity_and_usages(
    client: Any, catalog: Any
) -> None:
    rendered, observed = converge(client, composite())
    kinds = rendered.kinds
    assert kinds["pool-general"] == "KubernetesClusterNodePool"
    assert kinds["pool-gpu"] == "KubernetesClusterNodePool"
    assert kinds["providers-helm"] == "ProviderConfig"
    assert kinds["providers-kubernetes"] == "ProviderConfig"
    assert kinds["cert-manager-identity-federation"] == "FederatedIdentityCredential"
    assert kinds["dns-private-link"] == "PrivateDNSZoneVirtualNetworkLink"
    for chart in ("cert-manager", "ingress-nginx", "kube-prometheus-stack"):
        assert kinds[f"release-{chart}"] == "Release"
    assert {
        ("network", "cluster"),
        ("cluster", "pool-general"),
        ("cluster", "providers-helm"),
        ("dns-private", "dns-private-link"),
    } <= deletion_order(rendered.resources)  # directly or through other Usages
    assert_all_valid(catalog, rendered)
    composed = rendered.condition("Composed")
    assert composed is not None and composed.reason == "AllResourcesComposed"
    for name in observed:
        assert rendered.ready(name), name


def test_status_carries_endpoint_ca_name_and_issuer(client: Any) -> None:
    rendered, observed = converge(client, composite())
    status = rendered.status
    assert status["clusterEndpoint"] == f"https://{FQDN}:443"  # the kubeconfig's server
    assert status["clusterCA"] == CA_DATA
    assert status["clusterName"] == "main"  # the claim's name: the AKS cluster is named after it
    assert status["oidcIssuer"] == at(observed, "cluster")["oidcIssuerUrl"]
    assert status["cloud"] == "azure"


def test_status_endpoint_falls_back_to_fqdn_and_keeps_remembered_values(client: Any) -> None:
    _, observed = converge(client, composite())
    without_kubeconfig = run(client, composite(), observed)
    assert without_kubeconfig.status["clusterEndpoint"] == (
        f"https://{at(observed, 'cluster')['fqdn']}:443"
    )
    xr = composite()
    xr["status"] = {"clusterCA": CA_DATA, "oidcIssuer": OIDC_ISSUER}
    remembered = run(client, xr, observed)
    assert remembered.status["clusterCA"] == CA_DATA


def test_workload_identity_federates_cert_manager_with_the_aks_issuer(client: Any) -> None:
    rendered, observed = converge(client, composite())
    identity = for_provider(rendered, "cert-manager-identity")
    assert identity["name"] == "team-a-cert-manager-identity"
    assert identity["location"] == LOCATION
    assert identity["resourceGroupName"] == RESOURCE_GROUP
    federation = for_provider(rendered, "cert-manager-identity-federation")
    assert federation["issuer"] == at(observed, "cluster")["oidcIssuerUrl"]
    assert federation["subject"] == "system:serviceaccount:cert-manager:cert-manager"
    assert federation["audience"] == ["api://AzureADTokenExchange"]
    assert federation["parentIdRef"] == {"name": "team-a-cert-manager-identity"}
    values = for_provider(rendered, "release-cert-manager")["values"]
    assert values["serviceAccount"]["annotations"] == {
        "azure.workload.identity/client-id": at(observed, "cert-manager-identity")["clientId"]
    }
    assert values["podLabels"] == {"azure.workload.identity/use": "true"}


def test_provider_configs_use_the_kubeconfig_with_the_entra_identity(client: Any) -> None:
    rendered, observed = converge(client, composite())
    for name in ("providers-helm", "providers-kubernetes"):
        spec = rendered.resource(name)["spec"]
        assert spec["credentials"] == {
            "source": "Secret",
            "secretRef": {
                "namespace": "crossplane-system",
                "name": "team-a-kubeconfig",
                "key": "kubeconfig",
            },
        }
        # Local accounts are disabled: the kubeconfig's kubelogin exec is replaced with a
        # token for this identity.
        assert spec["identity"] == {
            "type": "AzureWorkloadIdentityCredentials",
            "source": "Secret",
            "secretRef": {
                "name": "crossplane-aks-identity",
                "namespace": "crossplane-system",
                "key": "credentials",
            },
        }
    aks = rendered.resource("cluster")["spec"]["forProvider"]
    assert aks["localAccountDisabled"] is True
    assert aks["azureActiveDirectoryRoleBasedAccessControl"] == {"azureRbacEnabled": True}
    grant = rendered.resource("cluster-crossplane-admin")["spec"]["forProvider"]
    assert grant["roleDefinitionName"] == "Azure Kubernetes Service RBAC Cluster Admin"
    assert grant["principalId"] == "p-crossplane"
    assert grant["scope"] == at(observed, "cluster")["id"]
    order = deletion_order(rendered.resources)
    for reader in ("providers-helm", "release-ingress-nginx"):
        assert ("cluster-crossplane-admin", reader) in order, reader


def test_missing_cluster_identity_is_a_fatal_result_naming_the_field(client: Any) -> None:
    environment = copy.deepcopy(ENVIRONMENT_CONFIG)
    del environment["data"]["azure"]["clusterIdentity"]
    rsp = client.run(
        request(
            composite(),
            STEP_INPUT,
            required={"environment-0": [environment]},
            observed={"network": observed_ready({"apiVersion": "x", "kind": "y"})},
        )
    )
    assert rsp.fatal and rsp.fatal[0].startswith("environment.azure.clusterIdentity: required")


def test_private_ingress_gets_an_internal_azure_load_balancer(client: Any) -> None:
    rendered, _ = converge(client, composite())
    values = for_provider(rendered, "release-ingress-nginx")["values"]
    annotations = values["controller"]["service"]["annotations"]
    assert annotations == {"service.beta.kubernetes.io/azure-load-balancer-internal": "true"}


# -- 3. key fields ------------------------------------------------------------------------


def test_aks_key_fields(client: Any) -> None:
    rendered, observed = converge(client, composite())
    body = rendered.resource("cluster")
    aks = body["spec"]["forProvider"]
    assert aks["location"] == LOCATION
    assert aks["resourceGroupName"] == RESOURCE_GROUP
    assert aks["kubernetesVersion"] == "1.33"
    assert aks["privateClusterEnabled"] is True
    assert aks["oidcIssuerEnabled"] is True
    assert aks["workloadIdentityEnabled"] is True
    assert aks["identity"] == {
        "type": "UserAssigned",
        "identityIds": [at(observed, "cluster-control-plane")["id"]],
    }
    assert aks["dnsPrefix"] == "team-a-cluster"
    assert aks["networkProfile"] == {
        "networkPlugin": "azure",
        "networkPluginMode": "overlay",
        "networkDataPlane": "cilium",
        "networkPolicy": "cilium",
        "loadBalancerSku": "standard",
        "outboundType": "userAssignedNATGateway",
        "podCidr": "10.244.0.0/16",
        "serviceCidr": "10.96.0.0/16",
        "dnsServiceIp": "10.96.0.10",
    }
    system = aks["defaultNodePool"]
    assert system["name"] == "system"
    assert system["onlyCriticalAddonsEnabled"] is True
    assert system["vmSize"] == "Standard_D4ds_v5"
    assert (system["autoScalingEnabled"], system["minCount"], system["maxCount"]) == (True, 2, 3)
    assert body["spec"]["writeConnectionSecretToRef"] == {
        "name": "team-a-kubeconfig",
        "namespace": "crossplane-system",
    }
    assert body["spec"]["providerConfigRef"] == {"name": "default"}


def test_pools_autoscale_with_their_machine_type_in_the_node_subnet(client: Any) -> None:
    rendered, _ = converge(client, composite())
    general = rendered.resource("pool-general")
    gpu = for_provider(rendered, "pool-gpu")
    assert general["metadata"]["annotations"]["crossplane.io/external-name"] == "general"
    pool = general["spec"]["forProvider"]
    assert pool["kubernetesClusterIdRef"] == {"name": "team-a-cluster"}
    assert pool["vnetSubnetIdRef"] == {"name": "team-a-network-nodes"}
    assert (pool["autoScalingEnabled"], pool["minCount"], pool["maxCount"]) == (True, 2, 6)
    assert pool["vmSize"] == "Standard_D4ds_v5"
    assert pool["mode"] == "User"
    assert "nodeCount" not in pool
    assert (gpu["minCount"], gpu["maxCount"], gpu["vmSize"]) == (0, 2, "Standard_NC4as_T4_v3")


def test_pool_names_become_valid_aks_agent_pool_names(client: Any, catalog: Any) -> None:
    xr = composite()
    xr["spec"]["pools"] = {"gpu-workers-large": {}, "system": {}, "general": {}}
    rendered, _ = converge(client, xr)
    names = {
        n: b["metadata"]["annotations"]["crossplane.io/external-name"]
        for n, b in rendered.resources.items()
        if n.startswith("pool-")
    }
    assert names["pool-general"] == "general"
    for name in (names["pool-gpu-workers-large"], names["pool-system"]):
        assert name.isalnum() and name.islower() and len(name) <= 12 and name[0].isalpha()
    assert names["pool-system"] != "system"
    assert len(set(names.values())) == 3
    assert_all_valid(catalog, rendered)


def test_tags_are_azure_tags_with_platform_environment_and_user_values(client: Any) -> None:
    rendered, _ = converge(client, composite(tags={"owner": "team-a"}))
    expected = {
        "crossplane-claim": "team-a.main",
        "crossplane-composite": "team-a",
        "platform-module": "cluster",
        "cost-center": "cc-42",
        "owner": "team-a",
    }
    for name in ("network", "cluster", "pool-general", "dns-public", "cert-manager-identity"):
        assert for_provider(rendered, name)["tags"] == expected, name
    assert for_provider(rendered, "cluster")["defaultNodePool"]["tags"] == expected
    assert "tags" not in for_provider(rendered, "network-nodes")  # Azure subnets have no tags


def test_network_and_dns_zone_names(client: Any) -> None:
    rendered, _ = converge(client, composite())
    vnet = for_provider(rendered, "network")
    assert vnet == {
        "location": LOCATION,
        "resourceGroupName": RESOURCE_GROUP,
        "addressSpace": ["10.40.0.0/20"],
        "tags": vnet["tags"],
    }
    subnet = for_provider(rendered, "network-nodes")
    assert subnet["addressPrefixes"] == ["10.40.0.0/20"]
    assert subnet["virtualNetworkNameRef"] == {"name": "team-a-network"}
    for zone in ("dns-public", "dns-private"):
        body = rendered.resource(zone)
        assert body["metadata"]["annotations"]["crossplane.io/external-name"] == DOMAIN
        assert body["spec"]["forProvider"]["resourceGroupName"] == RESOURCE_GROUP
    link = for_provider(rendered, "dns-private-link")
    assert link["privateDnsZoneNameRef"] == {"name": "team-a-dns-private"}
    assert link["virtualNetworkIdRef"] == {"name": "team-a-network"}
    assert link["registrationEnabled"] is False


def test_system_pool_is_tunable_from_the_environment(client: Any) -> None:
    settings = {
        "defaultMachineType": "Standard_D4ds_v5",
        "azure": {
            "systemPool": {"vmSize": "Standard_D2ds_v5", "minCount": 3, "maxCount": 5},
            "clusterIdentity": ENVIRONMENT_CONFIG["data"]["azure"]["clusterIdentity"],
        },
    }
    rsp = client.run(
        request(composite(), step_input("cluster", settings=settings), observed=nat_ready(client))
    )
    system = rsp.resource("cluster")["spec"]["forProvider"]["defaultNodePool"]
    assert (system["vmSize"], system["minCount"], system["maxCount"]) == ("Standard_D2ds_v5", 3, 5)


def test_every_pool_runs_the_cluster_minor_version(client: Any, catalog: Any) -> None:
    """``kubernetesVersion`` alone upgrades only the control plane; pools must follow it."""
    rendered, _ = converge(client, composite(kubernetesVersion="1.34"))
    aks = for_provider(rendered, "cluster")
    assert aks["kubernetesVersion"] == "1.34"
    assert aks["defaultNodePool"]["orchestratorVersion"] == "1.34"
    for pool in ("pool-general", "pool-gpu"):
        assert for_provider(rendered, pool)["orchestratorVersion"] == "1.34", pool
    assert_all_valid(catalog, rendered)


def test_without_a_version_no_pool_pins_one(client: Any, catalog: Any) -> None:
    xr = composite()
    del xr["spec"]["parameters"]["kubernetesVersion"]
    rendered, _ = converge(client, xr)
    aks = for_provider(rendered, "cluster")
    assert "kubernetesVersion" not in aks
    assert "orchestratorVersion" not in aks["defaultNodePool"]
    for pool in ("pool-general", "pool-gpu"):
        assert "orchestratorVersion" not in for_provider(rendered, pool), pool
    assert_all_valid(catalog, rendered)


def test_rotation_pool_names_are_valid_and_collide_with_no_pool(client: Any, catalog: Any) -> None:
    """Pools sharing a prefix, or named like another's ``<name>tmp``, still rotate apart."""
    xr = composite()
    xr["spec"]["pools"] = {"gpuworkers": {}, "gpuworkersx": {}, "general": {}, "generaltmp": {}}
    rendered, _ = converge(client, xr)
    pools = {n: for_provider(rendered, n) for n in rendered.resources if n.startswith("pool-")}
    agent_names = {
        rendered.resource(n)["metadata"]["annotations"]["crossplane.io/external-name"]
        for n in pools
    }
    rotation = [p["temporaryNameForRotation"] for p in pools.values()]
    system = for_provider(rendered, "cluster")["defaultNodePool"]
    rotation.append(system["temporaryNameForRotation"])
    assert len(set(rotation)) == len(rotation) == 5
    assert not set(rotation) & (agent_names | {system["name"]})
    for name in rotation:
        assert name.isalnum() and name.islower() and len(name) <= 12 and name[0].isalpha()
    assert_all_valid(catalog, rendered)


def test_pool_upgrade_and_channel_settings(client: Any) -> None:
    rendered, _ = converge(client, composite())
    aks = for_provider(rendered, "cluster")
    assert aks["skuTier"] == "Standard"
    assert aks["automaticUpgradeChannel"] == "patch"
    assert aks["nodeOsUpgradeChannel"] == "NodeImage"
    assert aks["defaultNodePool"]["upgradeSettings"] == {"maxSurge": "10%"}
    assert for_provider(rendered, "pool-general")["upgradeSettings"] == {"maxSurge": "10%"}


# -- 3b. private cluster egress: NAT gateway, control-plane identity ---------------------

NAT_KINDS = {
    "network-nat-ip": "PublicIP",
    "network-nat": "NATGateway",
    "network-nat-ip-association": "NATGatewayPublicIPAssociation",
    "network-nodes-nat": "SubnetNATGatewayAssociation",
    "cluster-control-plane": "UserAssignedIdentity",
    "cluster-control-plane-network-contributor": "RoleAssignment",
}
EXPECTED_TAGS = {
    "crossplane-claim": "team-a.main",
    "crossplane-composite": "team-a",
    "platform-module": "cluster",
    "cost-center": "cc-42",
}


def test_private_cluster_subnet_egresses_through_a_standard_nat_gateway(
    client: Any, catalog: Any
) -> None:
    rendered, _ = converge(client, composite(privateCluster=True))
    assert {n: rendered.kinds[n] for n in NAT_KINDS} == NAT_KINDS
    assert for_provider(rendered, "network-nat-ip") == {
        "location": LOCATION,
        "resourceGroupName": RESOURCE_GROUP,
        "sku": "Standard",
        "allocationMethod": "Static",
        "tags": EXPECTED_TAGS,
    }
    assert for_provider(rendered, "network-nat") == {
        "location": LOCATION,
        "resourceGroupName": RESOURCE_GROUP,
        "skuName": "Standard",
        "idleTimeoutInMinutes": 4,
        "tags": EXPECTED_TAGS,
    }
    assert for_provider(rendered, "network-nat-ip-association") == {
        "natGatewayIdRef": {"name": "team-a-network-nat"},
        "publicIpAddressIdRef": {"name": "team-a-network-nat-ip"},
    }
    assert for_provider(rendered, "network-nodes-nat") == {
        "natGatewayIdRef": {"name": "team-a-network-nat"},
        "subnetIdRef": {"name": "team-a-network-nodes"},
    }
    for name in ("network-nat", "network-nat-ip"):  # no zones: see clouds/azure/network.py
        assert "zones" not in for_provider(rendered, name)
    assert for_provider(rendered, "network-nodes")["defaultOutboundAccessEnabled"] is False
    assert_all_valid(catalog, rendered)


def test_private_cluster_uses_its_user_assigned_identity_and_the_nat_gateway(
    client: Any, catalog: Any
) -> None:
    rendered, observed = converge(client, composite(privateCluster=True))
    control_plane = at(observed, "cluster-control-plane")
    aks = for_provider(rendered, "cluster")
    assert aks["identity"] == {"type": "UserAssigned", "identityIds": [control_plane["id"]]}
    assert aks["networkProfile"]["outboundType"] == "userAssignedNATGateway"
    assert "loadBalancerProfile" not in aks["networkProfile"]
    assert for_provider(rendered, "cluster-control-plane") == {
        "name": "team-a-cluster-control-plane",
        "location": LOCATION,
        "resourceGroupName": RESOURCE_GROUP,
        "tags": EXPECTED_TAGS,
    }
    grant = for_provider(rendered, "cluster-control-plane-network-contributor")
    assert grant == {
        "principalId": control_plane["principalId"],
        "principalType": "ServicePrincipal",
        "scope": at(observed, "network-nodes")["id"],
        "roleDefinitionName": "Network Contributor",
        "skipServicePrincipalAadCheck": True,
    }
    # The user-assigned identity holds the subnet grant: the system identity's isn't composed.
    assert "cluster-network-contributor" not in rendered.resources
    assert_all_valid(catalog, rendered)


def test_private_cluster_is_deleted_before_its_identity_grant_and_nat(client: Any) -> None:
    rendered, _ = converge(client, composite(privateCluster=True))
    edges = deletion_order(rendered.resources)
    assert {
        ("cluster-control-plane", "cluster"),
        ("cluster-control-plane-network-contributor", "cluster"),
        ("network-nodes-nat", "cluster"),
        ("network-nat-ip-association", "cluster"),
        ("network-nat", "cluster"),
        ("network-nat", "network-nodes-nat"),
        ("network-nodes", "network-nodes-nat"),
        ("network-nat", "network-nat-ip-association"),
        ("network-nat-ip", "network-nat-ip-association"),
        ("cluster-control-plane", "cluster-control-plane-network-contributor"),
        ("network-nodes", "cluster-control-plane-network-contributor"),
    } <= edges
    rounds = deletion_rounds(rendered.resources)
    for prerequisite in (
        "network-nodes-nat",
        "network-nat",
        "network-nat-ip",
        "network-nat-ip-association",
        "cluster-control-plane",
        "cluster-control-plane-network-contributor",
    ):
        assert rounds[prerequisite] > rounds["cluster"], prerequisite


def test_new_private_cluster_waits_until_identity_grant_and_association_are_ready(
    client: Any,
) -> None:
    """AKS checks the identity's subnet grant and the subnet's NAT gateway at creation."""
    ready = nat_ready(client)
    assert run(client, composite(), ready).kinds["cluster"] == "KubernetesCluster"
    for missing in (
        "cluster-control-plane-network-contributor",
        "network-nodes-nat",
        "network-nat-ip-association",
    ):
        observed = copy.deepcopy(ready)
        observed[missing]["status"]["conditions"][0]["status"] = "False"
        rendered = run(client, composite(), observed)
        assert "cluster" not in rendered.resources, missing
        composed = rendered.condition("Composed")
        assert composed is not None
        assert f"cluster (waits for {missing} Ready)" in composed.message
    observed = copy.deepcopy(ready)
    del observed["cluster-control-plane"]["status"]["atProvider"]["id"]
    rendered = run(client, composite(), observed)
    assert "cluster" not in rendered.resources
    assert "cluster (waits for cluster-control-plane status.atProvider.id)" in (
        rendered.condition("Composed").message
    )


def _legacy_private_cluster(client: Any) -> dict[str, Any]:
    """Observed state of a private cluster composed before the NAT gateway existed: a
    SystemAssigned identity, loadBalancer egress and the system identity's subnet grant."""
    _, observed = converge(client, composite(privateCluster=True))
    legacy = {n: b for n, b in observed.items() if n not in NAT_KINDS}
    cluster = copy.deepcopy(legacy["cluster"])
    cluster["spec"]["forProvider"]["identity"] = {"type": "SystemAssigned"}
    cluster["spec"]["forProvider"]["networkProfile"]["outboundType"] = "loadBalancer"
    legacy["cluster"] = cluster
    grant = copy.deepcopy(legacy["cluster-crossplane-admin"])
    grant["spec"]["forProvider"]["principalId"] = at(legacy, "cluster")["identity"]["principalId"]
    legacy["cluster-network-contributor"] = grant
    return legacy


def test_existing_private_cluster_keeps_load_balancer_until_nat_is_ready_then_moves(
    client: Any, catalog: Any
) -> None:
    """The upgrade: never dropped, never moved before AKS could accept the move."""
    observed = _legacy_private_cluster(client)
    passes = []
    for _ in range(6):
        rendered = run(
            client,
            composite(),
            observed,
            observed_connection={"cluster": {"kubeconfig": KUBECONFIG.encode()}},
        )
        passes.append(rendered)
        assert "cluster" in rendered.resources  # an existing cluster is never dropped
        assert_all_valid(catalog, rendered)
        grown = observe(rendered, observed)
        if grown.keys() == observed.keys():
            break
        observed = grown
    first = for_provider(passes[0], "cluster")
    assert first["identity"] == {"type": "SystemAssigned"}
    assert first["networkProfile"]["outboundType"] == "loadBalancer"
    assert "cluster-network-contributor" in passes[0].resources  # kept while it is needed
    assert "network-nat" in passes[0].resources  # the prerequisites appear beside it
    assert "usage-cluster-control-plane-by-cluster" not in passes[0].resources
    last = for_provider(passes[-1], "cluster")
    assert last["identity"] == {
        "type": "UserAssigned",
        "identityIds": [at(observed, "cluster-control-plane")["id"]],
    }
    assert last["networkProfile"]["outboundType"] == "userAssignedNATGateway"
    assert "cluster-network-contributor" not in passes[-1].resources
    # It moves only in the pass after the grant and both associations were observed Ready.
    moved_at = next(
        i
        for i, r in enumerate(passes)
        if for_provider(r, "cluster")["networkProfile"]["outboundType"] != "loadBalancer"
    )
    assert moved_at >= 2
    for earlier in passes[:moved_at]:
        assert for_provider(earlier, "cluster")["identity"] == {"type": "SystemAssigned"}
    assert {
        "network-nodes-nat",
        "network-nat-ip-association",
        "cluster-control-plane-network-contributor",
    } <= passes[moved_at - 1].resources.keys()


def test_a_moved_cluster_stays_on_the_nat_gateway_while_its_identity_is_unobserved(
    client: Any,
) -> None:
    _, observed = converge(client, composite(privateCluster=True))
    blind = copy.deepcopy(observed)
    del blind["cluster-control-plane"]["status"]["atProvider"]
    blind["cluster-control-plane-network-contributor"]["status"]["conditions"][0]["status"] = (
        "False"
    )
    del blind["network-nodes"]["status"]["atProvider"]
    rendered = run(client, composite(), blind)
    aks = for_provider(rendered, "cluster")
    control_plane = at(observed, "cluster-control-plane")
    assert aks["identity"] == {"type": "UserAssigned", "identityIds": [control_plane["id"]]}
    assert aks["networkProfile"]["outboundType"] == "userAssignedNATGateway"
    # Nor is its grant dropped (that would revoke the role): it keeps principal and scope.
    grant = for_provider(rendered, "cluster-control-plane-network-contributor")
    assert (grant["principalId"], grant["scope"]) == (
        control_plane["principalId"],
        at(observed, "network-nodes")["id"],
    )


def test_public_cluster_keeps_its_system_identity_and_load_balancer_egress(
    client: Any, catalog: Any
) -> None:
    rendered, observed = converge(client, composite(privateCluster=False))
    assert not set(NAT_KINDS) & set(rendered.resources)
    aks = for_provider(rendered, "cluster")
    assert aks["identity"] == {"type": "SystemAssigned"}
    assert aks["networkProfile"]["outboundType"] == "loadBalancer"
    grant = for_provider(rendered, "cluster-network-contributor")
    assert grant["principalId"] == at(observed, "cluster")["identity"]["principalId"]
    assert grant["scope"] == at(observed, "network-nodes")["id"]
    assert_all_valid(catalog, rendered)


# -- 4. public cluster, no domain ---------------------------------------------------------


def test_public_cluster_has_no_nat_and_no_private_zone(client: Any, catalog: Any) -> None:
    rendered, _ = converge(client, composite(privateCluster=False))
    kinds = set(rendered.kinds.values())
    assert not kinds & {
        "NATGateway",
        "PublicIP",
        "PrivateDNSZone",
        "PrivateDNSZoneVirtualNetworkLink",
    }
    assert rendered.kinds["dns-public"] == "DNSZone"
    aks = for_provider(rendered, "cluster")
    assert aks["privateClusterEnabled"] is False
    assert "privateClusterPublicFqdnEnabled" not in aks
    service = for_provider(rendered, "release-ingress-nginx")["values"]["controller"]["service"]
    assert "annotations" not in service
    assert_all_valid(catalog, rendered)


def test_no_domain_means_no_zones_and_no_identity(client: Any, catalog: Any) -> None:
    xr = composite()
    del xr["spec"]["parameters"]["domain"]
    rendered, _ = converge(client, xr)
    kinds = set(rendered.kinds.values())
    assert not kinds & {"DNSZone", "PrivateDNSZone", "FederatedIdentityCredential"}
    identities = {n for n, k in rendered.kinds.items() if k == "UserAssignedIdentity"}
    assert identities == {"cluster-control-plane"}  # the control plane's, not cert-manager's
    values = for_provider(rendered, "release-cert-manager")["values"]
    assert "annotations" not in values["serviceAccount"]
    assert "podLabels" not in values
    assert_all_valid(catalog, rendered)


# -- 5. import ----------------------------------------------------------------------------


def test_import_observes_an_existing_aks_cluster(client: Any, catalog: Any) -> None:
    xr = composite(
        **{
            "import": {
                "enabled": True,
                "mode": "observe",
                "resources": {"cluster": {"externalName": "legacy-aks"}},
            }
        }
    )
    rendered, _ = converge(client, xr)
    body = rendered.resource("cluster")
    assert body["spec"]["managementPolicies"] == ["Observe"]
    assert body["spec"]["deletionPolicy"] == "Orphan"
    assert body["metadata"]["annotations"]["crossplane.io/external-name"] == "legacy-aks"
    assert catalog.validate(body) == []
    assert "managementPolicies" not in rendered.resource("network")["spec"]


# -- input errors and determinism ---------------------------------------------------------


def test_missing_plane_id_is_a_fatal_result_naming_the_label(client: Any) -> None:
    xr = composite()
    del xr["metadata"]["labels"]["planeId"]
    rsp = client.run(request(xr, STEP_INPUT, required={"environment-0": [ENVIRONMENT_CONFIG]}))
    assert len(rsp.fatal) == 1
    assert "metadata.labels.planeId" in rsp.fatal[0]


def test_overlapping_ranges_are_a_fatal_result_naming_the_field(client: Any) -> None:
    env = copy.deepcopy(ENVIRONMENT_CONFIG)
    env["data"]["network"]["podsCidr"] = "10.40.8.0/21"
    rsp = client.run(request(composite(), STEP_INPUT, required={"environment-0": [env]}))
    assert len(rsp.fatal) == 1
    assert "environment.network.podsCidr" in rsp.fatal[0]
    assert "overlaps" in rsp.fatal[0]


def test_same_input_gives_byte_identical_output(client: Any) -> None:
    _, observed = converge(client, composite())
    runs = [
        run(client, composite(), observed).response.SerializeToString(deterministic=True)
        for _ in range(2)
    ]
    assert runs[0] == runs[1]


def test_bad_system_pool_settings_are_a_fatal_result_naming_the_field(client: Any) -> None:
    settings = {"defaultMachineType": "Standard_D4ds_v5", "azure": {"systemPool": {"minCount": 0}}}
    rsp = client.run(
        request(
            composite(),
            step_input("cluster", settings=settings),
            observed={"network": observed_ready({"apiVersion": "x", "kind": "y"})},
        )
    )
    assert len(rsp.fatal) == 1
    assert "environment.azure.systemPool.minCount" in rsp.fatal[0]


def test_federation_keeps_the_remembered_issuer_while_the_cluster_is_unobserved(
    client: Any,
) -> None:
    _, observed = converge(client, composite())
    blind = copy.deepcopy(observed)
    del blind["cluster"]["status"]["atProvider"]["oidcIssuerUrl"]
    xr = composite()
    xr["status"] = {"oidcIssuer": OIDC_ISSUER}
    rendered = run(client, xr, blind)
    assert for_provider(rendered, "cert-manager-identity-federation")["issuer"] == OIDC_ISSUER
    assert rendered.status["oidcIssuer"] == OIDC_ISSUER
