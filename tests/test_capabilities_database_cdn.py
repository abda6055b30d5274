"""The database and CDN capabilities on their own: a tests-only composer asks for one
database and one CDN (in front of one private bucket) on each cloud, the way any module would,
and every body it gets validates against the pinned provider CRDs.

This is the capability-level proof of issue 8 for the two capabilities the environment module
brought; the module's own tests (``test_environment_module.py``) cover the domain.
"""

from __future__ import annotations

from typing import Any

import pytest
from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from fnplatform.composition import Composition
from fnplatform.input import Input
from fnplatform.library import add_bucket, add_cdn, add_database, values
from fnplatform.library.specs import BucketSpec, CdnPath, CdnSpec, DatabaseSpec
from fnplatform.runner import compose
from fnplatform.structs import struct_to_dict

from tests.support.cases import DATABASE_STATUS, ENVIRONMENT_SETTINGS
from tests.support.harness import observed_ready, request, step_input
from tests.support.schemas import Catalog

CLOUDS = ("aws", "gcp", "azure")
REGION = {"aws": "eu-west-1", "gcp": "europe-west1", "azure": "westeurope"}
SCOPE = {"aws": "123456789012", "gcp": "acme-apps-prod", "azure": "acme-apps-westeurope"}


def database_and_cdn(comp: Composition) -> None:
    """A test module: one database, one private bucket and a CDN in front of it."""
    cloud = str(comp.composite["spec"]["cloud"])
    comp.place(cloud, cloud_field="spec.cloud", region=REGION[cloud], scope=SCOPE[cloud])
    add_database(comp, "db", DatabaseSpec(
        size="small", engine_version="16", database_name="app",
        connection_secret="db-conn", connection_namespace="crossplane-system",
    ))
    reader = values.cdn_bucket_reader(comp, "cdn")
    add_bucket(comp, "site", BucketSpec(bucket_name=values.bucket_name_from(
        comp, "acme-capability-test"),
        readers=(reader,) if reader else ()))
    add_cdn(comp, "cdn", CdnSpec(
        bucket="site",
        bucket_name=values.bucket_address(comp, "site")["name"],
        paths=(CdnPath("shop", "/shop"),),
        hostname="shop.apps.acme.example",
    ))


def run(cloud: str, observed: dict[str, dict[str, Any]] | None = None) -> dict[str, Any]:
    composite = {"apiVersion": "test.acme.com/v1", "kind": "XCapabilities",
                 "metadata": {"name": "capabilities"}, "spec": {"cloud": cloud}}
    req = request(composite, step_input("environment"), observed=observed)
    # The platform settings come as step settings: no EnvironmentConfig round trip.
    step = Input.model_validate({**struct_to_dict(req.input), "settings": ENVIRONMENT_SETTINGS})
    rsp = compose(req, step, database_and_cdn)
    fatal = [r.message for r in rsp.results if r.severity == fnv1.SEVERITY_FATAL]
    assert fatal == []
    return {name: struct_to_dict(r.resource) for name, r in rsp.desired.resources.items()}


@pytest.mark.parametrize("cloud", CLOUDS)
def test_one_database_and_one_cdn_validate_on_every_cloud(catalog: Catalog, cloud: str) -> None:
    desired = run(cloud)
    for _ in range(5):  # pass after pass, everything Ready, until nothing new appears
        observed = {name: observed_ready(body, **(DATABASE_STATUS[cloud] if name == "db"
                                                  else {}))
                    for name, body in desired.items()}
        if cloud == "aws" and "cdn" in observed:
            observed["cdn"] = observed_ready(desired["cdn"], atProvider={
                "arn": "arn:aws:cloudfront::123456789012:distribution/E2EXAMPLE",
                "domainName": "d111111abcdef8.cloudfront.net"})
        again = run(cloud, observed)
        if set(again) == set(desired):
            desired = again
            break
        desired = again
    kinds = {(body["apiVersion"].split("/")[0].split(".")[0], body["kind"])
             for body in desired.values()}
    assert {"db", "site", "cdn"} <= set(desired)
    problems = {name: catalog.validate(body) for name, body in desired.items()}
    assert {name: p for name, p in problems.items() if p} == {}
    expected = {
        "aws": {("rds", "Instance"), ("cloudfront", "Distribution"),
                ("cloudfront", "OriginAccessControl"), ("s3", "BucketPolicy")},
        "gcp": {("sql", "DatabaseInstance"), ("compute", "BackendBucket"), ("compute", "URLMap"),
                ("compute", "TargetHTTPSProxy"), ("compute", "ManagedSSLCertificate"),
                ("compute", "GlobalForwardingRule"), ("storage", "BucketIAMMember")},
        "azure": {("dbforpostgresql", "FlexibleServer"), ("cdn", "FrontdoorProfile"),
                  ("cdn", "FrontdoorEndpoint"), ("cdn", "FrontdoorOriginGroup"),
                  ("cdn", "FrontdoorOrigin"), ("cdn", "FrontdoorRoute"),
                  ("network", "PrivateDNSZone")},
    }[cloud]
    assert expected <= kinds


def test_the_cdn_is_a_named_reader_of_the_private_bucket_on_aws() -> None:
    arn = "arn:aws:cloudfront::123456789012:distribution/E2EXAMPLE"
    desired = run("aws")
    for _ in range(4):
        observed = {name: observed_ready(body) for name, body in desired.items()}
        if "cdn" in observed:
            observed["cdn"] = observed_ready(desired["cdn"], atProvider={"arn": arn})
        desired = run("aws", observed)
    policy = desired["site-policy"]["spec"]["forProvider"]["policy"]
    assert '"Service":"cloudfront.amazonaws.com"' in policy
    assert f'"AWS:SourceArn":"{arn}"' in policy
    assert '"Principal":"*","Action":"s3:GetObject"' not in policy  # never public


def test_gcp_cdn_reads_the_bucket_through_the_cloud_cdn_service_agent() -> None:
    desired = run("gcp")
    desired = run("gcp", {name: observed_ready(body) for name, body in desired.items()})
    members = [body["spec"]["forProvider"] for body in desired.values()
               if body["kind"] == "BucketIAMMember"]
    assert {"role": "roles/storage.objectViewer",
            "member": "serviceAccount:service-412345678901@cloud-cdn-fill.iam.gserviceaccount.com"
            }.items() <= members[0].items()
    assert not any(m["member"] in ("allUsers", "allAuthenticatedUsers") for m in members)
