"""The cluster module on every cloud: what a real cloud needs beyond a schema-valid body.

Issue 9: Helm releases wait for a Ready node pool and are retried, the kubeconfig writer
outlives everything that reads it, ingress-nginx goes before the network, API servers are not
open to the internet by default. Each test runs the function over gRPC from the shared module
cases (``tests/support/cases.py``), converged as Crossplane would converge them.
"""

from __future__ import annotations

import copy
import dataclasses
from typing import Any

import pytest
from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from fnplatform.importing import IDENTITY_FIELDS
from fnplatform.merge import get_path

from tests.support.cases import cluster_case, converge
from tests.support.deletion import deletion_order, deletion_rounds, usage_edges
from tests.support.harness import Rendered
from tests.support.table import case

CLOUDS = ("aws", "gcp", "azure")
RELEASES = ("release-cert-manager", "release-ingress-nginx", "release-kube-prometheus-stack")
KUBECONFIG_WRITER = {"aws": "cluster-auth", "gcp": "cluster", "azure": "cluster"}


@pytest.fixture(scope="module")
def converged(client) -> dict[str, tuple[Rendered, dict[str, Any]]]:
    return {cloud: converge(client.run, cluster_case(cloud)) for cloud in CLOUDS}


def _releases(rendered: Rendered) -> dict[str, dict[str, Any]]:
    return {n: b for n, b in rendered.resources.items() if b["kind"] == "Release"}


def _not_ready(body: dict[str, Any]) -> dict[str, Any]:
    body = copy.deepcopy(body)
    body["status"]["conditions"] = [{"type": "Ready", "status": "False", "reason": "Creating"}]
    return body


# -- 1. releases wait for a Ready node pool, and are waited on and retried ------------------


@pytest.mark.parametrize("cloud", CLOUDS)
def test_releases_wait_for_a_ready_node_pool_not_just_an_existing_one(client, converged, cloud):
    case = cluster_case(cloud)
    _, observed = converged[cloud]
    creating = {n: b for n, b in observed.items() if b["kind"] != "Release"}
    creating["pool-pool0"] = _not_ready(creating["pool-pool0"])
    rendered = client.run(case.request(observed=creating))
    assert not rendered.fatal, rendered.fatal
    assert _releases(rendered) == {}
    message = rendered.condition("Composed").message
    for release in RELEASES:
        assert f"{release} (waits for pool-pool0 Ready)" in message


@pytest.mark.parametrize("cloud", CLOUDS)
def test_existing_releases_stay_while_their_pool_is_not_ready(client, converged, cloud):
    case = cluster_case(cloud)
    _, observed = converged[cloud]
    degraded = dict(observed, **{"pool-pool0": _not_ready(observed["pool-pool0"])})
    rendered = client.run(case.request(observed=degraded))
    assert set(_releases(rendered)) == {n for n, b in observed.items() if b["kind"] == "Release"}


@pytest.mark.parametrize("cloud", CLOUDS)
def test_every_release_waits_with_a_timeout_and_is_retried(converged, catalog, cloud):
    rendered, _ = converged[cloud]
    releases = _releases(rendered)
    assert set(RELEASES) <= set(releases)
    for name, body in releases.items():
        assert catalog.validate(body) == [], name
        assert body["spec"]["forProvider"]["wait"] is True, name
        assert body["spec"]["forProvider"]["waitTimeout"] == "15m", name
        assert body["spec"]["rollbackLimit"] >= 1, name


@pytest.mark.parametrize("cloud", CLOUDS)
def test_releases_are_deleted_before_the_node_pool_their_hooks_run_on(converged, cloud):
    rendered, _ = converged[cloud]
    edges = deletion_order(rendered.resources)
    for release in _releases(rendered):
        assert ("pool-pool0", release) in edges, release


# -- 2. the kubeconfig writer outlives its readers -------------------------------------------


@pytest.mark.parametrize("cloud", CLOUDS)
def test_kubeconfig_writer_is_kept_until_every_reader_is_gone(converged, cloud):
    rendered, _ = converged[cloud]
    resources = rendered.resources
    writer = KUBECONFIG_WRITER[cloud]
    secret = resources["providers-helm"]["spec"]["credentials"]["secretRef"]["name"]
    assert resources[writer]["spec"]["writeConnectionSecretToRef"]["name"] == secret
    readers = [n for n, b in resources.items() if b["kind"] in ("Release", "ProviderConfig")]
    edges = deletion_order(resources)
    rounds = deletion_rounds(resources)
    for reader in readers:
        assert (writer, reader) in edges, reader
        assert rounds[writer] > rounds[reader], reader


@pytest.mark.parametrize("cloud", CLOUDS)
def test_only_the_usages_deletion_order_needs_are_emitted(converged, cloud):
    """Every release uses the cluster, and so does the Helm ProviderConfig it uses: the
    cluster outlives the release through the ProviderConfig's Usage, so "cluster by release"
    isn't emitted (each Usage costs the control plane a GET and an UPDATE per poll), and
    deletion still goes release, ProviderConfig, cluster."""
    rendered, _ = converged[cloud]
    resources = rendered.resources
    edges = usage_edges(resources)
    assert len(edges) == len(set(edges))
    for of, by in edges:  # none is implied by the others
        rest = deletion_order({n: b for n, b in resources.items() if n != f"usage-{of}-by-{by}"})
        assert (of, by) not in rest, f"usage-{of}-by-{by} is implied by the other Usages"
    rounds = deletion_rounds(resources)
    for release in _releases(rendered):
        assert f"usage-cluster-by-{release}" not in resources, release
        assert rounds[release] < rounds["providers-helm"] < rounds["cluster"], release


# -- 15. ingress-nginx goes before the network, waiting for its load balancer ---------------


@pytest.mark.parametrize("cloud", CLOUDS)
def test_ingress_release_waits_on_uninstall_and_goes_before_the_network(converged, cloud):
    rendered, _ = converged[cloud]
    assert ("network", "release-ingress-nginx") in deletion_order(rendered.resources)
    # provider-helm passes ``wait`` and ``waitTimeout`` to Helm's uninstall as well.
    assert rendered.resource("release-ingress-nginx")["spec"]["forProvider"]["wait"] is True


# -- 3. AKS: no late-initialisation fight over the system pool's node count -----------------


def test_aks_cluster_is_managed_without_late_initialize(converged, catalog):
    rendered, _ = converged["azure"]
    cluster = rendered.resource("cluster")
    assert catalog.validate(cluster) == []
    assert cluster["spec"]["managementPolicies"] == ["Observe", "Create", "Update", "Delete"]
    assert "nodeCount" not in cluster["spec"]["forProvider"]["defaultNodePool"]
    assert "nodeCount" not in cluster["spec"].get("initProvider", {}).get("defaultNodePool", {})


@pytest.mark.parametrize(
    ("mode", "policies"),
    [
        case(
            "a managed AKS import lists its policies without LateInitialize: "
            "late-initializing would copy every defaulted AKS field into spec and take "
            "over what the cluster's owner set",
            "manage",
            ["Observe", "Create", "Update", "Delete"],
        ),
        case(
            "an observe-only import only observes: nothing of the adopted cluster is written",
            "observe",
            ["Observe"],
        ),
    ],
)
def test_imported_aks_cluster_keeps_late_initialize_off_when_managed(
    client, converged, mode, policies
):
    case = cluster_case("azure")
    composite = copy.deepcopy(case.composite)
    composite["spec"]["parameters"]["import"] = {
        "enabled": True,
        "mode": mode,
        "resources": {"cluster": {"externalName": "legacy-aks"}},
    }
    rendered = client.run(case.request(composite=composite, observed=converged["azure"][1]))
    cluster = rendered.resource("cluster")
    assert cluster["spec"]["managementPolicies"] == policies
    assert cluster["spec"]["deletionPolicy"] == "Orphan"


# -- 9. API servers are not open to the internet by default ---------------------------------

ALLOWLIST_FIELD = {
    "aws": "environment.aws.endpointPublicAccessCidrs",
    "gcp": "environment.gcp.masterAuthorizedNetworks",
    "azure": "environment.azure.apiServerAuthorizedIpRanges",
}


def _without_allowlist(cloud: str, private: bool):
    case = cluster_case(cloud)
    composite = copy.deepcopy(case.composite)
    composite["spec"]["parameters"]["privateCluster"] = private
    environment = copy.deepcopy(case.environment[0])
    environment["data"][cloud].pop(ALLOWLIST_FIELD[cloud].rsplit(".", 1)[-1])
    return case, composite, {"environment-0": [environment]}


@pytest.mark.parametrize("cloud", ["aws", "azure"])
def test_a_public_api_endpoint_without_an_allowlist_is_refused_naming_the_field(client, cloud):
    case, composite, required = _without_allowlist(cloud, private=False)
    rendered = client.run(case.request(composite=composite, required=required))
    assert len(rendered.fatal) == 1, rendered.messages
    assert rendered.fatal[0].startswith(f"{ALLOWLIST_FIELD[cloud]}: required")


@pytest.mark.parametrize("private", [False, True])
def test_without_an_allowlist_gke_admits_only_the_clusters_own_subnet_and_says_so(
    client, converged, catalog, private
):
    """GKE's endpoint stays public for Crossplane's providers: with no
    ``gcp.masterAuthorizedNetworks`` (the multi-cloud design's configs have none) it admits
    the nodes' own subnet only, and ``ApiServerAccess`` names the field to set."""
    case, composite, required = _without_allowlist("gcp", private=private)
    rendered = client.run(
        case.request(composite=composite, required=required, observed=converged["gcp"][1])
    )
    assert rendered.fatal == [], rendered.messages
    cluster = rendered.resource("cluster")
    assert catalog.validate(cluster) == []
    subnet = rendered.resource("network-subnet")["spec"]["forProvider"]["ipCidrRange"]
    assert cluster["spec"]["forProvider"]["masterAuthorizedNetworksConfig"] == {
        "cidrBlocks": [{"cidrBlock": subnet, "displayName": "cluster nodes' subnet (default)"}]
    }
    access = rendered.condition("ApiServerAccess")
    assert access is not None and access.reason == "ClusterNetworkOnly"
    assert access.status == fnv1.STATUS_CONDITION_FALSE
    assert access.message.startswith(
        f"{ALLOWLIST_FIELD['gcp']} is not set, so the GKE API "
        f"server admits only the cluster's own subnet {subnet}"
    )


def test_an_adopted_gke_cluster_keeps_its_own_authorized_networks_and_says_so(client, converged):
    """An imported cluster keeps its own list unless the import takes the field over: the
    condition never claims a list the cluster does not have."""
    case = cluster_case("gcp")
    composite = copy.deepcopy(case.composite)
    imported = {
        "enabled": True,
        "mode": "observe",
        "resources": {"cluster": {"externalName": "legacy-gke"}},
    }
    composite["spec"]["parameters"]["import"] = imported
    rendered = client.run(case.request(composite=composite, observed=converged["gcp"][1]))
    access = rendered.condition("ApiServerAccess")
    assert access is not None and access.status == fnv1.STATUS_CONDITION_UNKNOWN
    assert access.reason == "AdoptedClusterSettings"
    assert "spec.parameters.import.resources.cluster.manage" in access.message
    imported["mode"] = "manage"
    imported["resources"]["cluster"]["manage"] = ["masterAuthorizedNetworksConfig"]
    rendered = client.run(case.request(composite=composite, observed=converged["gcp"][1]))
    access = rendered.condition("ApiServerAccess")
    assert access is not None and access.reason == "AuthorizedNetworks", rendered.messages
    cluster = rendered.resource("cluster")["spec"]["forProvider"]
    assert cluster["masterAuthorizedNetworksConfig"]["cidrBlocks"][0]["cidrBlock"] == (
        "203.0.113.0/24"
    )


@pytest.mark.parametrize("cloud", ["aws", "azure"])
def test_private_clusters_need_no_allowlist_where_the_endpoint_is_private(client, converged, cloud):
    case, composite, required = _without_allowlist(cloud, private=True)
    rendered = client.run(
        case.request(composite=composite, required=required, observed=converged[cloud][1])
    )
    assert rendered.fatal == [], rendered.messages
    if cloud == "aws":
        vpc = rendered.resource("cluster")["spec"]["forProvider"]["vpcConfig"]
        assert vpc["endpointPublicAccess"] is False and "publicAccessCidrs" not in vpc
    if cloud == "azure":
        aks = rendered.resource("cluster")["spec"]["forProvider"]
        assert aks["privateClusterEnabled"] is True and "apiServerAccessProfile" not in aks


@pytest.mark.parametrize("cloud", CLOUDS)
def test_the_api_endpoint_answers_only_the_allowlist(client, converged, catalog, cloud):
    case = cluster_case(cloud)
    composite = copy.deepcopy(case.composite)
    composite["spec"]["parameters"]["privateCluster"] = False
    rendered = client.run(case.request(composite=composite, observed=converged[cloud][1]))
    cluster = rendered.resource("cluster")
    assert catalog.validate(cluster) == []
    spec = cluster["spec"]["forProvider"]
    if cloud == "aws":
        assert spec["vpcConfig"]["publicAccessCidrs"] == ["203.0.113.0/24"]
    elif cloud == "gcp":
        blocks = spec["masterAuthorizedNetworksConfig"]["cidrBlocks"]
        assert [b["cidrBlock"] for b in blocks] == ["203.0.113.0/24"]
        access = rendered.condition("ApiServerAccess")
        assert access is not None and access.status == fnv1.STATUS_CONDITION_TRUE
        assert access.message == (
            "the GKE API server admits environment.gcp."
            f"masterAuthorizedNetworks: 203.0.113.0/24 "
            f"({blocks[0]['displayName']})"
        )
    else:
        assert spec["apiServerAccessProfile"] == {"authorizedIpRanges": ["203.0.113.0/24"]}


# -- 12. chart values a managed cluster can live with ---------------------------------------


def _values(rendered: Rendered, release: str) -> dict[str, Any]:
    return rendered.resource(release)["spec"]["forProvider"]["values"]


@pytest.mark.parametrize("cloud", CLOUDS)
def test_no_grafana_with_a_default_password_and_no_dead_control_plane_alerts(converged, cloud):
    rendered, _ = converged[cloud]
    values = _values(rendered, "release-kube-prometheus-stack")
    assert values["grafana"] == {"enabled": False}
    for component in ("kubeEtcd", "kubeScheduler", "kubeControllerManager", "kubeProxy"):
        assert values[component] == {"enabled": False}, component
    rules = values["defaultRules"]["rules"]
    assert not any(rules[r] for r in ("etcd", "kubeSchedulerAlerting", "kubeControllerManager"))


def test_grafana_uses_the_platforms_admin_secret(client):
    case = cluster_case("gcp")
    environment = copy.deepcopy(case.environment[0])
    environment["data"]["monitoring"] = {"grafanaAdminSecret": "grafana-admin"}
    rendered, _ = converge(client.run, dataclasses.replace(case, environment=(environment,)))
    grafana = _values(rendered, "release-kube-prometheus-stack")["grafana"]
    assert grafana["enabled"] is True
    assert grafana["admin"]["existingSecret"] == "grafana-admin"
    assert "adminPassword" not in grafana


@pytest.mark.parametrize("cloud", CLOUDS)
def test_scraped_charts_get_service_monitors_and_wait_for_the_operator(converged, cloud):
    rendered, _ = converged[cloud]
    edges = deletion_order(rendered.resources)
    ingress = _values(rendered, "release-ingress-nginx")["controller"]["metrics"]
    assert ingress == {"enabled": True, "serviceMonitor": {"enabled": True}}
    assert _values(rendered, "release-cert-manager")["prometheus"]["servicemonitor"] == {
        "enabled": True
    }
    for release in ("release-ingress-nginx", "release-cert-manager"):
        assert ("release-kube-prometheus-stack", release) in edges


def test_without_monitoring_no_service_monitors_and_no_wait(client):
    case = cluster_case("aws")
    environment = copy.deepcopy(case.environment[0])
    environment["data"]["monitoring"] = {"enabled": False}
    rendered, _ = converge(client.run, dataclasses.replace(case, environment=(environment,)))
    assert "release-kube-prometheus-stack" not in rendered.resources
    ingress = _values(rendered, "release-ingress-nginx")["controller"]["metrics"]
    assert ingress == {"enabled": False, "serviceMonitor": {"enabled": False}}
    assert rendered.condition("Composed").status == 2  # STATUS_CONDITION_TRUE: nothing waits


# -- 4. import in observe mode writes nothing into the imported infrastructure --------------


def _imported(cloud: str, mode: str = "observe", include: tuple[str, ...] = ()):
    case = cluster_case(cloud)
    composite = copy.deepcopy(case.composite)
    composite["spec"]["parameters"]["createDnsZones"] = False
    composite["spec"]["parameters"]["import"] = {
        "enabled": True,
        "mode": mode,
        "include": list(include),
        "resources": {
            "network": {"externalName": "legacy-net"},
            "cluster": {"externalName": "legacy-cluster"},
        },
    }
    return dataclasses.replace(case, composite=composite)


@pytest.mark.parametrize("cloud", CLOUDS)
def test_observed_import_composes_nothing_inside_the_imported_network_and_cluster(client, cloud):
    rendered, _ = converge(client.run, _imported(cloud))
    assert not rendered.fatal, rendered.fatal
    managed = {n: b for n, b in rendered.resources.items() if b["kind"] != "ClusterUsage"}
    for name in ("network", "cluster"):
        assert managed[name]["spec"]["managementPolicies"] == ["Observe"]
    inside = [
        n
        for n, b in managed.items()
        if n not in ("network", "cluster")
        and (
            n.startswith(("network-", "pool-", "release-", "providers-"))
            or b["kind"]
            in (
                "Release",
                "ProviderConfig",
                "NodePool",
                "NodeGroup",
                "Subnet",
                "Subnetwork",
                "Router",
                "RouterNAT",
                "Firewall",
                "Route",
                "KubernetesClusterNodePool",
                "ClusterAuth",
                "Addon",
            )
        )
    ]
    assert inside == []
    assert rendered.condition("Composed").status == 2, rendered.condition("Composed").message
    assert any("spec.parameters.import.include" in r.message for r in rendered.results)


def _cluster_only(cloud: str, mode: str, include: tuple[str, ...] = ()):
    case = _imported(cloud, mode, include)
    del case.composite["spec"]["parameters"]["import"]["resources"]["network"]
    return case


@pytest.mark.parametrize("mode", ["observe", "manage"])
@pytest.mark.parametrize("cloud", CLOUDS)
def test_importing_only_the_cluster_composes_no_network_for_it(client, catalog, cloud, mode):
    """Issue 22 §13: the adopted cluster has its network; a new VPC, router and NAT would be
    billed and never used. Nothing refers to the network that is not composed."""
    rendered, _ = converge(client.run, _cluster_only(cloud, mode))
    assert not rendered.fatal, rendered.fatal
    assert not [n for n in rendered.resources if n == "network" or n.startswith("network-")]
    assert not [n for n in rendered.resources if "network" in n and n.startswith("usage-")]
    body = rendered.resource("cluster")
    assert catalog.validate(body) == []
    refs = [
        path
        for path in _paths(body["spec"])
        if path.endswith(("Ref", "Refs", "Selector"))
        and "network" in str(get_path(body["spec"], path))
    ]
    assert refs == []
    assert rendered.condition("Composed").status == 2, rendered.condition("Composed").message
    left_out = [r.message for r in rendered.results if "Not composed" in r.message]
    assert left_out and "network" in left_out[0]


def test_an_included_network_is_composed_for_an_imported_cluster(client):
    rendered, _ = converge(client.run, _cluster_only("gcp", "observe", include=("network*",)))
    assert rendered.resource("network")["kind"] == "Network"
    assert rendered.resource("cluster")["spec"]["forProvider"]["networkRef"]


def _paths(node: Any, prefix: str = "") -> list[str]:
    """Every dotted key path in ``node`` (lists by index)."""
    found: list[str] = []
    items = (
        node.items()
        if isinstance(node, dict)
        else (enumerate(node) if isinstance(node, list) else ())
    )
    for key, value in items:
        path = (
            f"{prefix}.{key}"
            if prefix and isinstance(key, str)
            else (f"{prefix}[{key}]" if prefix else str(key))
        )
        found.append(path)
        found.extend(_paths(value, path))
    return found


def test_import_include_takes_patterns_and_warns_of_names_matching_nothing(client, catalog):
    rendered, _ = converge(client.run, _imported("gcp", include=("pool-*", "pool-pol0")))
    assert not rendered.fatal, rendered.fatal
    for pool in ("pool-pool0", "pool-pool1"):
        assert catalog.validate(rendered.resource(pool)) == []
    assert "release-ingress-nginx" not in rendered.resources
    unmatched = [w for w in rendered.warnings if "spec.parameters.import.include[1]" in w]
    assert len(unmatched) == 1 and "'pool-pol0'" in unmatched[0]
    assert "did you mean pool-pool0?" in unmatched[0]
    assert not [w for w in rendered.warnings if "include[0]" in w]


def test_observed_import_composes_an_opted_in_child(client):
    rendered, _ = converge(client.run, _imported("gcp", include=("pool-pool0",)))
    assert rendered.resource("pool-pool0")["kind"] == "NodePool"
    assert "pool-pool1" not in rendered.resources
    assert "release-ingress-nginx" not in rendered.resources


# -- 4. import in manage mode takes over only what the user names --------------------------

#: A cluster setting per cloud the user takes over, and one it leaves as the cluster has it.
TAKEN_OVER = {
    "aws": ("version", "vpcConfig"),
    "gcp": ("releaseChannel", "datapathProvider"),
    "azure": ("defaultNodePool.maxCount", "networkProfile"),
}


#: What the adopted clusters really run, unlike what the module would compose.
ADOPTED_VERSION, ADOPTED_MASTER_RANGE = "1.32", "172.16.9.0/28"


def _managed_import(
    cloud: str,
    manage: list[str],
    *,
    private: bool = False,
    network: bool = True,
    include: tuple[str, ...] = (),
):
    case = _imported(cloud, mode="manage", include=include)
    composite = copy.deepcopy(case.composite)
    resources = composite["spec"]["parameters"]["import"]["resources"]
    resources["cluster"]["manage"] = manage
    if not network:
        del resources["network"]
    composite["spec"]["parameters"]["privateCluster"] = private
    # the adopted cluster reports what it really runs, unlike what the module would compose
    status = {
        **case.observed_status,
        "cluster": {
            "atProvider": {
                "kubernetesVersion": ADOPTED_VERSION,
                "privateClusterConfig": {"masterIpv4CidrBlock": ADOPTED_MASTER_RANGE},
            }
        },
    }
    return dataclasses.replace(case, composite=composite, observed_status=status)


@pytest.mark.parametrize("cloud", CLOUDS)
def test_managed_import_applies_only_identity_and_the_named_fields(client, catalog, cloud):
    managed, left = TAKEN_OVER[cloud]
    rendered, _ = converge(client.run, _managed_import(cloud, [managed]))
    assert not rendered.fatal, rendered.fatal
    cluster = rendered.resource("cluster")
    assert catalog.validate(cluster) == []
    for_provider, init = cluster["spec"]["forProvider"], cluster["spec"]["initProvider"]
    root = managed.split(".")[0]
    assert set(for_provider) - IDENTITY_FIELDS - {root} == set(), sorted(for_provider)
    assert left in init and left not in for_provider
    # The named field, and nothing beside it in its map, is taken over.
    assert get_path(for_provider, managed) is not None
    if "." in managed:
        assert list(for_provider[root]) == [managed.split(".")[1]]
        assert "vmSize" in init[root]
    # Placed where it is, by the identity fields upjet builds its ID from.
    assert {"region", "location"} & set(for_provider)
    assert cluster["spec"]["deletionPolicy"] == "Orphan"
    # The imported network is adopted the same way: its ranges stay as they are.
    network = rendered.resource("network")["spec"]
    assert set(network["forProvider"]) <= IDENTITY_FIELDS
    assert catalog.validate(rendered.resource("network")) == []
    # Nothing is created inside what is adopted unless asked for.
    assert not [n for n in rendered.resources if n.startswith(("pool-", "network-"))]
    assert any("spec.parameters.import.include" in r.message for r in rendered.results)


def test_managed_import_creates_an_opted_in_child(client, catalog):
    rendered, _ = converge(client.run, _managed_import("gcp", [], include=("pool-pool0",)))
    assert catalog.validate(rendered.resource("pool-pool0")) == []
    assert "pool-pool1" not in rendered.resources


def test_managed_import_without_names_changes_no_setting_of_the_cluster(client):
    rendered, _ = converge(client.run, _managed_import("gcp", []))
    cluster = rendered.resource("cluster")["spec"]
    assert set(cluster["forProvider"]) == {"location", "project"}
    # Creation-only settings the builder keeps in initProvider are still there.
    assert cluster["initProvider"]["removeDefaultNodePool"] is True
    assert cluster["initProvider"]["releaseChannel"] == {"channel": "REGULAR"}


@pytest.mark.parametrize(
    ("path", "hint"),
    [
        case(
            "a misspelt field to take over is refused with the closest composed field, so "
            "a typo does not leave the field unmanaged",
            "releaseChanel",
            "did you mean releaseChannel?",
        ),
        case(
            "a path through a value that is not a map is refused naming the part that is no map",
            "releaseChannel.channel.name",
            "'releaseChannel.channel' is not a map",
        ),
        case(
            "a bracketed misspelt key gets the closest field in dotted form",
            "releaseChannel[chanel]",
            "did you mean releaseChannel.channel?",
        ),
        case(
            "bracketed keys through a value that is no map are refused as the dotted form is",
            "releaseChannel[channel][name]",
            "'releaseChannel.channel' is not a map",
        ),
        case(
            "a field the composition does not compose is refused, listing the fields composed here",
            "zzz",
            "composed here: ",
        ),
    ],
)
def test_managed_import_of_a_field_not_composed_is_refused_naming_it(client, path, hint):
    rendered = client.run(_managed_import("gcp", ["releaseChannel", path]).request())
    assert len(rendered.fatal) == 1
    message = rendered.fatal[0]
    assert "spec.parameters.import.resources.cluster.manage[1]" in message
    assert hint in message


def test_managed_import_paths_are_crossplane_field_paths(client):
    """``defaultNodePool[maxCount]`` takes over what ``defaultNodePool.maxCount`` does."""
    dotted, _ = converge(client.run, _managed_import("azure", ["defaultNodePool.maxCount"]))
    bracketed, _ = converge(client.run, _managed_import("azure", ["defaultNodePool[maxCount]"]))
    assert not bracketed.fatal, bracketed.fatal
    assert bracketed.resource("cluster") == dotted.resource("cluster")
    assert list(bracketed.resource("cluster")["spec"]["forProvider"]["defaultNodePool"]) == [
        "maxCount"
    ]


@pytest.mark.parametrize(
    ("path", "says"),
    [
        case(
            "an array index cannot be taken over alone (managed fields go through maps "
            "only): the message says to take the whole field over",
            "releaseChannel[0]",
            "an index can't be taken over alone (paths go through maps only): "
            "take 'releaseChannel' over whole",
        ),
        case(
            "an unterminated bracket is a parse error naming the path and the position, "
            "not a traceback",
            "releaseChannel[channel",
            "cannot parse \"releaseChannel[channel\": unterminated '[' at position 14",
        ),
    ],
)
def test_a_managed_import_path_that_is_no_map_key_is_refused_naming_it(client, path, says):
    rendered = client.run(_managed_import("gcp", ["releaseChannel", path]).request())
    assert rendered.fatal == [f"spec.parameters.import.resources.cluster.manage[1]: {says}"]


def test_aks_pools_in_an_adopted_cluster_follow_the_version_it_runs(client, catalog):
    pools = ("pool-pool0", "pool-pool1")
    case = _managed_import("azure", [], network=False, include=pools)
    first = client.run(case.request())
    assert "pool-pool0 (waits for cluster status.atProvider.kubernetesVersion)" in (
        first.condition("Composed").message
    )
    rendered, _ = converge(client.run, case)
    assert rendered.resource("cluster")["spec"]["initProvider"]["kubernetesVersion"] == "1.33"
    pool = rendered.resource("pool-pool0")
    assert pool["spec"]["forProvider"]["orchestratorVersion"] == ADOPTED_VERSION
    assert catalog.validate(pool) == []
    # Taking the version over makes the pools follow the one composed.
    rendered, _ = converge(
        client.run, _managed_import("azure", ["kubernetesVersion"], network=False, include=pools)
    )
    assert rendered.resource("pool-pool0")["spec"]["forProvider"]["orchestratorVersion"] == "1.33"


@pytest.mark.parametrize("mode", ["manage", "observe"])
def test_gke_webhook_firewall_opens_the_adopted_control_planes_range(client, catalog, mode):
    case = _managed_import("gcp", [], private=True, include=("cluster-webhooks",))
    parameters = case.composite["spec"]["parameters"]
    parameters["import"]["mode"] = mode
    del parameters["import"]["resources"]["network"]  # the firewall is in our network
    first = client.run(case.request())
    assert "cluster-webhooks" not in first.resources
    rendered, _ = converge(client.run, case)
    firewall = rendered.resource("cluster-webhooks")
    assert firewall["spec"]["forProvider"]["sourceRanges"] == [ADOPTED_MASTER_RANGE]
    assert catalog.validate(firewall) == []


def test_gke_webhook_firewall_of_a_composed_cluster_uses_the_environments_range(client):
    case = cluster_case("gcp")
    composite = copy.deepcopy(case.composite)
    composite["spec"]["parameters"]["privateCluster"] = True
    rendered, _ = converge(client.run, dataclasses.replace(case, composite=composite))
    ranges = rendered.resource("cluster-webhooks")["spec"]["forProvider"]["sourceRanges"]
    master = rendered.resource("cluster")["spec"]["forProvider"]["privateClusterConfig"]
    assert ranges == [master["masterIpv4CidrBlock"]] != [ADOPTED_MASTER_RANGE]


# -- 6. IRSA on an EKS cluster from this module: the IAM OIDC provider ----------------------


def test_eks_cluster_gets_an_iam_oidc_provider_for_its_issuer(client, converged, catalog):
    rendered, observed = converged["aws"]
    provider = rendered.resource("cluster-oidc")
    assert catalog.validate(provider) == []
    issuer = observed["cluster"]["status"]["atProvider"]["identity"][0]["oidc"][0]["issuer"]
    assert provider["spec"]["forProvider"]["url"] == issuer
    assert provider["spec"]["forProvider"]["clientIdList"] == ["sts.amazonaws.com"]
    assert ("cluster", "cluster-oidc") in deletion_order(rendered.resources)
    arn = "arn:aws:iam::123456789012:oidc-provider/oidc.eks.eu-west-1.amazonaws.com/id/ABCDEF"
    seen = dict(observed)
    seen["cluster-oidc"] = copy.deepcopy(observed["cluster-oidc"])
    seen["cluster-oidc"]["status"]["atProvider"] = {"arn": arn}
    assert client.run(cluster_case("aws").request(observed=seen)).status["oidcProviderArn"] == arn


def test_the_oidc_provider_waits_for_the_observed_issuer(client):
    case = cluster_case("aws")
    first = client.run(case.request())
    assert "cluster-oidc" not in first.resources
    assert "cluster-oidc (waits for cluster status.atProvider.identity[0].oidc[0].issuer)" in (
        first.condition("Composed").message
    )


# -- 7. Azure: the role assignments DNS01 and private ingress need --------------------------


def test_cert_manager_identity_may_write_the_public_zone(converged, catalog):
    rendered, observed = converged["azure"]
    grant = rendered.resource("cert-manager-identity-dns-dns-public")
    assert catalog.validate(grant) == []
    spec = grant["spec"]["forProvider"]
    assert spec["roleDefinitionName"] == "DNS Zone Contributor"
    assert spec["scope"] == observed["dns-public"]["status"]["atProvider"]["id"]
    principal = observed["cert-manager-identity"]["status"]["atProvider"]["principalId"]
    assert spec["principalId"] == principal
    assert spec["principalType"] == "ServicePrincipal"
    assert not [n for n in rendered.resources if n.startswith("cert-manager-identity-dns-dns-priv")]


def test_private_aks_control_plane_identity_is_network_contributor_on_the_node_subnet(
    converged, catalog
):
    """A private cluster's user-assigned identity holds the grant before the cluster exists
    (``userAssignedNATGateway`` in a VNet we bring): the system identity's isn't composed."""
    rendered, observed = converged["azure"]
    grant = rendered.resource("cluster-control-plane-network-contributor")
    assert catalog.validate(grant) == []
    spec = grant["spec"]["forProvider"]
    assert spec["roleDefinitionName"] == "Network Contributor"
    assert spec["scope"] == observed["network-nodes"]["status"]["atProvider"]["id"]
    assert (
        spec["principalId"]
        == (observed["cluster-control-plane"]["status"]["atProvider"]["principalId"])
    )
    assert "cluster-network-contributor" not in rendered.resources
    edges = deletion_order(rendered.resources)
    assert {
        ("cluster-control-plane", "cluster-control-plane-network-contributor"),
        ("network-nodes", "cluster-control-plane-network-contributor"),
        ("cluster-control-plane-network-contributor", "cluster"),
    } <= edges


def test_public_aks_identity_is_network_contributor_on_the_node_subnet(client, catalog):
    case = cluster_case("azure")
    case = dataclasses.replace(case, composite=copy.deepcopy(case.composite))
    case.composite["spec"]["parameters"]["privateCluster"] = False
    rendered, observed = converge(client.run, case)
    grant = rendered.resource("cluster-network-contributor")
    assert catalog.validate(grant) == []
    spec = grant["spec"]["forProvider"]
    assert spec["roleDefinitionName"] == "Network Contributor"
    assert spec["scope"] == observed["network-nodes"]["status"]["atProvider"]["id"]
    assert (
        spec["principalId"]
        == (observed["cluster"]["status"]["atProvider"]["identity"]["principalId"])
    )
    assert "cluster-control-plane" not in rendered.resources
    edges = deletion_order(rendered.resources)
    assert {
        ("cluster", "cluster-network-contributor"),
        ("network-nodes", "cluster-network-contributor"),
    } <= edges


def test_role_assignments_wait_for_observed_principals_and_scopes(client):
    first = client.run(cluster_case("azure").request())
    message = first.condition("Composed").message
    assert "cluster-control-plane-network-contributor (waits for" in message
    assert "cert-manager-identity-dns-dns-public (waits for" in message


# -- 11. EKS nodes: IMDSv2 hop limit 1, vpc-cni under its own identity, pinned AMI release ---


def test_eks_nodes_use_imdsv2_with_one_hop(converged, catalog):
    rendered, _ = converged["aws"]
    template = rendered.resource("cluster-nodes")
    assert catalog.validate(template) == []
    assert template["spec"]["forProvider"]["metadataOptions"] == {
        "httpEndpoint": "enabled",
        "httpTokens": "required",
        "httpPutResponseHopLimit": 1,
    }
    for pool in ("pool-pool0", "pool-pool1"):
        launch = rendered.resource(pool)["spec"]["forProvider"]["launchTemplate"]
        assert launch == {"name": template["metadata"]["name"], "version": "1"}


def test_an_existing_node_group_without_a_template_is_not_replaced(client, converged):
    _, observed = converged["aws"]
    legacy = copy.deepcopy(observed)
    del legacy["pool-pool0"]["spec"]["forProvider"]["launchTemplate"]
    rendered = client.run(cluster_case("aws").request(observed=legacy))
    assert "launchTemplate" not in rendered.resource("pool-pool0")["spec"]["forProvider"]


def test_vpc_cni_runs_under_its_own_pod_identity_role(converged, catalog):
    rendered, observed = converged["aws"]
    addon = rendered.resource("cluster-addon-vpc-cni")
    assert catalog.validate(addon) == []
    assert addon["spec"]["forProvider"]["podIdentityAssociation"] == [
        {
            "roleArn": observed["cluster-vpc-cni"]["status"]["atProvider"]["arn"],
            "serviceAccount": "aws-node",
        }
    ]
    policy = rendered.resource("cluster-vpc-cni-cni")["spec"]["forProvider"]["policyArn"]
    assert policy.endswith(":policy/AmazonEKS_CNI_Policy")
    node_policies = [
        b["spec"]["forProvider"].get("policyArn", "")
        for n, b in rendered.resources.items()
        if n.startswith("cluster-node-role-")
    ]
    assert not any(p.endswith("AmazonEKS_CNI_Policy") for p in node_policies)


def test_node_ami_release_is_pinned_from_the_environment(client):
    case = cluster_case("aws")
    environment = copy.deepcopy(case.environment[0])
    environment["data"]["aws"]["nodeReleaseVersion"] = "1.33.4-20250904"
    rendered, _ = converge(client.run, dataclasses.replace(case, environment=(environment,)))
    assert rendered.resource("pool-pool0")["spec"]["forProvider"]["releaseVersion"] == (
        "1.33.4-20250904"
    )


# -- the kubeconfig reaches the claim owner (issue 22 item 9) --------------------------------


@pytest.mark.parametrize("cloud", ["aws", "gcp", "azure"])
def test_a_v1_claim_gets_the_kubeconfig_endpoint_and_ca_as_connection_details(client, cloud):
    from tests.support.cases import namespaced_twin

    # the cloud's provider writes the kubeconfig: ClusterAuth on EKS, the cluster on GKE/AKS
    case = dataclasses.replace(cluster_case(cloud), publishes=("cluster", "cluster-auth"))
    ready, _ = converge(client.run, case)
    details = dict(ready.response.desired.composite.connection_details)
    assert details["kubeconfig"] == case.secrets["kubeconfig"]  # as the provider wrote it
    assert details["endpoint"].decode() == ready.status["clusterEndpoint"]
    # the CA only where the provider reports it in status (the kubeconfig carries it anyway)
    assert details.get("clusterCA", b"").decode() == ready.status.get("clusterCA", "")
    assert "kubeconfigSecret" not in ready.status
    first = client.run(case.request())  # nothing observed yet: nothing to publish
    assert not first.response.desired.composite.connection_details

    twin = namespaced_twin(case)
    settled, _ = converge(client.run, twin)
    assert not settled.response.desired.composite.connection_details
    secret = settled.status["kubeconfigSecret"]
    writers = [
        body
        for body in settled.resources.values()
        if get_path(body, "spec.writeConnectionSecretToRef.name") == secret
    ]
    assert writers, secret  # the provider writes it, in the composite's namespace
    assert all("namespace" not in body["spec"]["writeConnectionSecretToRef"] for body in writers)


def test_the_v1_xrd_declares_the_published_keys():
    from pathlib import Path

    import yaml

    apis = Path(__file__).resolve().parent.parent / "apis" / "cluster"
    definition = yaml.safe_load((apis / "definition.yaml").read_text())
    assert definition["spec"]["connectionSecretKeys"] == ["kubeconfig", "endpoint", "clusterCA"]
    namespaced = yaml.safe_load((apis / "namespaced" / "definition.yaml").read_text())
    assert "connectionSecretKeys" not in namespaced["spec"]


# -- cluster names: the design's clusterName label, else the claim's name -------------------


def _named(cloud: str, cluster_name: str | None = None, claim: str | None = "prod"):
    case = cluster_case(cloud)
    composite = copy.deepcopy(case.composite)
    labels = composite["metadata"]["labels"]
    if cluster_name is not None:
        labels["clusterName"] = cluster_name
    if claim is None:
        del labels["crossplane.io/claim-name"]
    return dataclasses.replace(case, composite=composite)


def _external_name(rendered: Rendered, name: str = "cluster") -> str | None:
    annotations = rendered.resource(name)["metadata"].get("annotations") or {}
    return annotations.get("crossplane.io/external-name")


@pytest.mark.parametrize("cloud", CLOUDS)
def test_the_cluster_is_named_by_the_label_else_the_claim(client, catalog, cloud):
    """Issue 22 §12: no random suffix in the cloud's name; the label wins over the claim."""
    labelled, _ = converge(client.run, _named(cloud, "payments-eu"))
    assert _external_name(labelled) == "payments-eu"
    assert catalog.validate(labelled.resource("cluster")) == []
    claimed, _ = converge(client.run, _named(cloud))
    assert _external_name(claimed) == "prod"
    unclaimed, _ = converge(client.run, _named(cloud, claim=None))
    assert _external_name(unclaimed) in (None, *([] if cloud != "gcp" else ["acme-prod-cluster"]))


@pytest.mark.parametrize(
    ("cloud", "name"),
    [
        case(
            "GKE cluster names are lowercase only: an upper-case name is refused on the "
            "clusterName label before GCP refuses it",
            "gcp",
            "Payments",
        ),
        case(
            "GKE cluster names are at most 40 characters: a longer one is refused on the label",
            "gcp",
            "a" * 41,
        ),
        case(
            "EKS cluster names start with a letter or digit: a leading dash is refused on "
            "the label",
            "aws",
            "-payments",
        ),
        case(
            "AKS cluster names end with a letter or digit: a trailing dash is refused on the label",
            "azure",
            "payments-",
        ),
    ],
)
def test_a_cluster_name_the_cloud_refuses_is_an_error_on_the_label(client, cloud, name):
    rendered = client.run(_named(cloud, name).request())
    assert len(rendered.fatal) == 1
    assert rendered.fatal[0].startswith("metadata.labels.clusterName: ")


@pytest.mark.parametrize("cloud", CLOUDS)
def test_the_cluster_name_is_fixed_once_the_cluster_exists(client, cloud):
    _, observed = converge(client.run, _named(cloud, "payments-eu"))
    renamed = _named(cloud, "payments-us")
    rendered = client.run(renamed.request(observed=observed, required=renamed.fetched()))
    assert rendered.fatal == [
        "metadata.labels.clusterName: immutable: the cluster exists as 'payments-eu'; "
        "renaming would replace it (set it back)"
    ]
    # Without the label the existing name is kept (the claim default never renames it).
    kept = _named(cloud)
    again = client.run(kept.request(observed=observed, required=kept.fetched()))
    assert not again.fatal and _external_name(again) == "payments-eu"


def test_chart_values_from_the_environment_merge_over_the_modules(client):
    """Issue 22 §11: per-chart Helm values, merged over what the module renders."""
    case = cluster_case("aws")
    environment = copy.deepcopy(case.environment[0])
    environment["data"]["charts"] = {
        "ingress-nginx": {
            "values": {"controller": {"replicaCount": 5, "config": {"use-gzip": "true"}}}
        },
        "cluster-autoscaler": {"values": {"extraArgs": {"scale-down-delay-after-add": "5m"}}},
    }
    rendered, _ = converge(client.run, dataclasses.replace(case, environment=(environment,)))
    ingress = _values(rendered, "release-ingress-nginx")["controller"]
    assert ingress["replicaCount"] == 5 and ingress["config"] == {"use-gzip": "true"}
    assert ingress["metrics"]  # the module's own values under the same map stay
    autoscaler = _values(rendered, "cluster-autoscaler-release")
    assert autoscaler["extraArgs"] == {"scale-down-delay-after-add": "5m"}
    assert autoscaler["fullnameOverride"] == "cluster-autoscaler"


def test_chart_values_must_be_a_map(client):
    case = cluster_case("gcp")
    environment = copy.deepcopy(case.environment[0])
    environment["data"]["charts"] = {"cert-manager": {"values": ["not", "a", "map"]}}
    rendered = client.run(
        dataclasses.replace(case, environment=(environment,)).request(
            required=dataclasses.replace(case, environment=(environment,)).fetched()
        )
    )
    assert len(rendered.fatal) == 1
    assert rendered.fatal[0].startswith("environment.charts.cert-manager.values")
