"""The cluster module on every cloud: what a real cloud needs beyond a schema-valid body.

Issue 9: Helm releases wait for a Ready node pool and are retried, the kubeconfig writer
outlives everything that reads it, ingress-nginx goes before the network, API servers are not
open to the internet by default. Each test runs the function over gRPC from the shared module
cases (``tests/support/cases.py``), converged as Crossplane would converge them.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from tests.support.cases import cluster_case, converge
from tests.support.deletion import deletion_rounds, usage_edges
from tests.support.harness import Rendered

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
    edges = set(usage_edges(rendered.resources))
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
    readers = [n for n, b in resources.items()
               if b["kind"] in ("Release", "ProviderConfig")]
    edges = set(usage_edges(resources))
    rounds = deletion_rounds(resources)
    for reader in readers:
        assert (writer, reader) in edges, reader
        assert rounds[writer] > rounds[reader], reader


# -- 15. ingress-nginx goes before the network, waiting for its load balancer ---------------


@pytest.mark.parametrize("cloud", CLOUDS)
def test_ingress_release_waits_on_uninstall_and_goes_before_the_network(converged, cloud):
    rendered, _ = converged[cloud]
    assert ("network", "release-ingress-nginx") in set(usage_edges(rendered.resources))
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


@pytest.mark.parametrize(("mode", "policies"), [
    ("manage", ["Observe", "Create", "Update", "Delete"]), ("observe", ["Observe"])])
def test_imported_aks_cluster_keeps_late_initialize_off_when_managed(
        client, converged, mode, policies):
    case = cluster_case("azure")
    composite = copy.deepcopy(case.composite)
    composite["spec"]["parameters"]["import"] = {
        "enabled": True, "mode": mode, "resources": {"cluster": {"externalName": "legacy-aks"}}}
    rendered = client.run(case.request(composite=composite, observed=converged["azure"][1]))
    cluster = rendered.resource("cluster")
    assert cluster["spec"]["managementPolicies"] == policies
    assert cluster["spec"]["deletionPolicy"] == "Orphan"
