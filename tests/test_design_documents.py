"""First contact (issue 32): a design document's own material, put together with what this
repository ships, composes over gRPC.

Each test takes a document's claim or configuration verbatim from
``tests/fixtures/design-documents/<document>/`` and combines it, unchanged, with the shipped
``examples/`` files and the shipped Composition's step input (read from ``apis/<module>/``), the
way a new user would: what Crossplane adds (the composite made from the claim, the
EnvironmentConfigs fetched for the function's requirements) is played by
:mod:`tests.support.documents`.
"""

from __future__ import annotations

from typing import Any

import pytest
from crossplane.function.proto.v1 import run_function_pb2 as fnv1

from tests.support.documents import (
    composite_of,
    document,
    play,
    served_versions,
    shipped,
    step_of,
)
from tests.support.harness import FunctionClient, Rendered, observed_ready
from tests.support.schemas import Catalog

ENVIRONMENT_DOCUMENT = "unified-environment"
CLUSTER_DOCUMENT = "multi-cloud-cluster-python"


def assert_schema_valid(rendered: Rendered, catalog: Catalog) -> None:
    problems = {name: catalog.validate(body) for name, body in rendered.resources.items()}
    assert {name: p for name, p in problems.items() if p} == {}


# -- unified-environment.txt: the claim with the shipped platform settings (item 1) -----------


def test_the_environment_documents_claim_is_what_its_xrd_requires_and_nothing_else() -> None:
    """The document shows no claim manifest, so its claim is the XRD's required fields (the
    fixture says where each value comes from): no cloud, no region."""
    (xrd,) = document(ENVIRONMENT_DOCUMENT, "xrd.yaml")
    (claim,) = document(ENVIRONMENT_DOCUMENT, "claim.yaml")
    schema = xrd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]["properties"]["spec"]
    assert claim["kind"] == xrd["spec"]["claimNames"]["kind"]
    assert claim["apiVersion"] == f"{xrd['spec']['group']}/{xrd['spec']['versions'][0]['name']}"
    assert sorted(claim["spec"]) == sorted(schema["required"])
    for part, value in claim["spec"].items():
        assert sorted(value) == sorted(schema["properties"][part]["required"]), part


def test_the_environment_documents_claim_composes_with_the_shipped_settings(
    client: FunctionClient, catalog: Catalog
) -> None:
    """Before: ``spec.region: required: the platform sets no environment.aws.defaultRegion``.
    The shipped settings name a default region, and the database joins that region's own
    private network (the per-region form), never another region's subnets."""
    (claim,) = document(ENVIRONMENT_DOCUMENT, "claim.yaml")
    settings = shipped("examples/environment/platform/environment.yaml")
    aws = settings[0]["data"]["aws"]
    region = aws["defaultRegion"]
    network = aws["privateNetworks"][region]
    composite = composite_of(claim, "UnifiedEnvironment")
    rendered = play(client, composite, step_of("apis/environment/composition.yaml"), settings)
    assert rendered.fatal == [], rendered.messages
    database = rendered.resource("database")["spec"]["forProvider"]
    assert database["region"] == region
    subnets = rendered.resource("database-subnet-group")["spec"]["forProvider"]
    assert (subnets["region"], subnets["subnetIds"]) == (region, network["subnetIds"])
    ingress = rendered.resource("database-ingress")["spec"]["forProvider"]
    assert ingress["cidrIpv4"] == network["cidr"]
    assert rendered.resource("assets")["spec"]["forProvider"]["region"] == region
    assert database["instanceClass"] == "db.t4g.micro"  # the document's size, small
    assert_schema_valid(rendered, catalog)


# -- multi-cloud-cluster-python.txt: its EnvironmentConfigs with the shipped selection (item 3)

CLUSTER_STEP = "apis/cluster/composition.yaml"
#: The subnet every cluster gets without ``network.subnetCidr`` (the document sets none).
DEFAULT_SUBNET = "10.0.0.0/20"


def _documents_configs() -> list[dict[str, Any]]:
    """The document's EnvironmentConfigs as Crossplane v2.4 stores them: the one change a user
    makes is the apiVersion, since the document's ``v1alpha1`` is no longer served."""
    configs = document(CLUSTER_DOCUMENT, "environment-configs.yaml")
    (served,) = served_versions("apiextensions.crossplane.io", "environmentconfigs")
    for config in configs:
        config["apiVersion"] = f"apiextensions.crossplane.io/{served}"
    return configs


def test_the_cluster_documents_environment_configs_need_the_served_api_version() -> None:
    """Crossplane v2.4 serves EnvironmentConfig as v1beta1 only (its CRD in
    schemas/crds/crossplane): the API server refuses the document's v1alpha1 at apply time, and
    docs/cluster.md tells a user to change exactly that line."""
    configs = document(CLUSTER_DOCUMENT, "environment-configs.yaml")
    assert {c["apiVersion"] for c in configs} == {"apiextensions.crossplane.io/v1alpha1"}
    assert served_versions("apiextensions.crossplane.io", "environmentconfigs") == ["v1beta1"]
    assert [c["metadata"]["labels"] for c in configs] == [
        {"baseline": "default"},
        {"cloud": "gcp"},
        {"planeType": "production"},
    ]


def test_the_shipped_selection_is_the_documents_and_both_forms_share_it() -> None:
    """The baseline is every config labelled baseline=default, as the document selects it
    (before: a required config *named* baseline, which the document has none of)."""
    sources = step_of(CLUSTER_STEP)["environment"]
    assert sources[0] == {"matchLabels": {"baseline": {"value": "default"}}}
    assert not any("name" in source for source in sources)
    assert step_of("apis/cluster/namespaced/composition.yaml")["environment"] == sources


@pytest.mark.parametrize("claim_file", ["claim-gcp.yaml", "claim.yaml"])
def test_the_cluster_documents_gcp_claim_composes_with_its_environment_configs(
    client: FunctionClient, catalog: Catalog, claim_file: str
) -> None:
    """Before: ``input.environment[0]: no EnvironmentConfig named 'baseline' exists``. Now the
    document's three configs merge (baseline, cloud, plane type), and the API server, with no
    ``gcp.masterAuthorizedNetworks`` in them, admits only the cluster's own subnet, which the
    ``ApiServerAccess`` condition reports instead of refusing the configuration."""
    (claim,) = document(CLUSTER_DOCUMENT, claim_file)
    composite = composite_of(claim, "XCluster")
    rendered = play(client, composite, step_of(CLUSTER_STEP), _documents_configs())
    assert rendered.fatal == [], rendered.messages
    cluster = rendered.resource("cluster")["spec"]["forProvider"]
    assert (cluster["project"], cluster["location"]) == (
        claim["metadata"]["labels"]["planeId"],
        "us-central1",
    )
    assert cluster["masterAuthorizedNetworksConfig"]["cidrBlocks"] == [
        {"cidrBlock": DEFAULT_SUBNET, "displayName": "cluster nodes' subnet (default)"}
    ]
    access = rendered.condition("ApiServerAccess")
    assert access is not None and (access.status, access.reason) == (
        fnv1.STATUS_CONDITION_FALSE,
        "ClusterNetworkOnly",
    ), access
    assert "environment.gcp.masterAuthorizedNetworks" in access.message
    assert DEFAULT_SUBNET in access.message
    pool = rendered.resource("pool-default")["spec"]["forProvider"]
    assert pool["nodeConfig"]["machineType"] == "e2-standard-4"
    assert pool["autoscaling"]["totalMinNodeCount"] == 3
    releases = {
        name: body["spec"]["forProvider"]
        for name, body in rendered.resources.items()
        if name.startswith("release-")
    }
    # defaults (baseline=default), then planetype.production on top
    assert releases["release-cert-manager"]["chart"]["version"] == "v1.14.0"
    assert releases["release-ingress-nginx"]["chart"]["version"] == "4.9.0"
    assert releases["release-ingress-nginx"]["values"]["controller"]["replicaCount"] == 3
    prometheus = releases["release-kube-prometheus-stack"]["values"]["prometheus"]
    assert prometheus["prometheusSpec"]["retention"] == "90d"
    assert_schema_valid(rendered, catalog)


def test_the_cluster_documents_claim_composes_with_the_shipped_examples(
    client: FunctionClient, catalog: Catalog
) -> None:
    """The document's GCP claim applied where the shipped examples are installed: the
    baseline and org configs (both labelled baseline=default) merge by name, and the shipped
    GCP config's allowlist applies (the condition says so)."""
    (claim,) = document(CLUSTER_DOCUMENT, "claim-gcp.yaml")
    composite = composite_of(claim, "XCluster")
    store = shipped("examples/cluster/platform")
    rendered = play(client, composite, step_of(CLUSTER_STEP), store)
    assert rendered.fatal == [], rendered.messages
    cluster = rendered.resource("cluster")["spec"]["forProvider"]
    (gcp,) = [
        c
        for c in store
        if c["kind"] == "EnvironmentConfig"
        and (c["metadata"].get("labels") or {}).get("cloud") == "gcp"
    ]
    assert (
        cluster["masterAuthorizedNetworksConfig"]["cidrBlocks"]
        == (gcp["data"]["gcp"]["masterAuthorizedNetworks"])
    )
    access = rendered.condition("ApiServerAccess")
    assert access is not None and (access.status, access.reason) == (
        fnv1.STATUS_CONDITION_TRUE,
        "AuthorizedNetworks",
    ), access
    labels = cluster["resourceLabels"]
    assert labels["managed-by"] == "crossplane"  # baseline
    assert labels["cost-center"] == "platform-1234"  # org-defaults, merged after it
    assert labels["plane-type"] == "production"  # plane-production
    assert_schema_valid(rendered, catalog)


# -- cobaltcore-openstack-operations.txt: finance-prod on the encrypted pool (issue 35 item 1)

OPENSTACK_DOCUMENT = "cobaltcore-openstack-operations"
OPENSTACK_STEP = "apis/openstack/xopenstackclusters/composition.yaml"


def _shipped_pools(*, ready: bool = True) -> list[dict[str, Any]]:
    """The pool composites Crossplane makes of every shipped pool claim of eu-de-1
    (examples/openstack/infrastructure/eu-de-1), Ready or still provisioning."""
    pools = []
    for claim in shipped(
        *(
            f"examples/openstack/infrastructure/eu-de-1/{part}"
            for part in ("control-plane.yaml", "hypervisor-pools", "storage-pools")
        )
    ):
        composite = composite_of(claim, "X" + claim["kind"])
        pools.append(observed_ready(composite) if ready else composite)
    return pools


def _openstack_store() -> list[dict[str, Any]]:
    return [
        *shipped("examples/openstack/apps/platform-config/environment-eu-de-1.yaml"),
        *_shipped_pools(),
    ]


def test_the_openstack_documents_finance_claim_is_the_shipped_example() -> None:
    """The shipped tenant (examples/openstack/tenants/finance) is the document's claim."""
    (claim,) = document(OPENSTACK_DOCUMENT, "claim-finance-prod.yaml")
    (example,) = shipped("examples/openstack/tenants/finance/prod.yaml")
    assert example == claim
    assert claim["spec"]["storageClusters"] == ["st-pool-encrypted"]


def test_the_openstack_documents_finance_claim_composes_on_the_shipped_encrypted_pool(
    client: FunctionClient, catalog: Catalog
) -> None:
    """The document's finance-prod names st-pool-encrypted: the shipped eu-de-1 has that pool,
    encrypted, so the claim composes to Ready: its Ceph pools on the encrypted pool, with the
    large preset's quotas, and its hypervisors on the dedicated compliance pool."""
    (claim,) = document(OPENSTACK_DOCUMENT, "claim-finance-prod.yaml")
    composite = composite_of(claim, "XOpenStackCluster")
    rendered = play(client, composite, step_of(OPENSTACK_STEP), _openstack_store())
    assert rendered.fatal == [], rendered.messages
    assert rendered.status["phase"] == "Ready", rendered.status
    (storage,) = rendered.status["consumedPools"]["storage"]
    assert (storage["name"], storage["status"], storage["encrypted"]) == (
        "st-pool-encrypted",
        "Ready",
        True,
    )
    volumes = rendered.resource("ceph-volumes")
    assert volumes["spec"]["providerConfigRef"]["name"] == "eu-de-1-st-pool-encrypted"
    manifest = volumes["spec"]["forProvider"]["manifest"]
    assert manifest["spec"]["quotas"] == {"maxSize": storage["quotas"]["volumes"]}
    (hypervisor,) = rendered.status["consumedPools"]["hypervisor"]
    assert hypervisor["name"] == "hv-pool-compliance"
    assert_schema_valid(rendered, catalog)


def test_the_openstack_documents_finance_claim_requiring_encryption_waits_on_a_plain_pool(
    client: FunctionClient,
) -> None:
    """The same claim requiring encryption (``encryptedStorage``) but naming the shipped,
    unencrypted st-pool-a is Pending, composing nothing, and says which pool and why."""
    (claim,) = document(OPENSTACK_DOCUMENT, "claim-finance-prod.yaml")
    claim["spec"] |= {"storageClusters": ["st-pool-a"], "encryptedStorage": True}
    composite = composite_of(claim, "XOpenStackCluster")
    rendered = play(client, composite, step_of(OPENSTACK_STEP), _openstack_store())
    assert rendered.fatal == [], rendered.messages
    assert rendered.resources == {}
    assert rendered.status["phase"] == "Pending"
    pools = rendered.condition("PoolsReady")
    assert pools is not None and pools.status == fnv1.STATUS_CONDITION_FALSE
    assert "storage pool st-pool-a: not encrypted" in pools.message, pools.message
    assert "spec.encryptedStorage" in pools.message
