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

from tests.support.documents import (
    composite_of,
    document,
    play,
    shipped,
    step_of,
)
from tests.support.harness import FunctionClient, Rendered
from tests.support.schemas import Catalog

ENVIRONMENT_DOCUMENT = "unified-environment"


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
    settings = shipped("examples/environment/environment.yaml")
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
