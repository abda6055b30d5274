"""add_cdn on every cloud: a CDN in front of a private bucket, reading it as a named reader.

The composer asks as the environment module does: the bucket's readers include the CDN once
the cloud knows who it reads as (``cdn_bucket_reader``), the CDN names the bucket by its cloud
name (``bucket_address``).
"""

from __future__ import annotations

import pytest
from fnplatform.composition import Composition
from fnplatform.library import values
from fnplatform.library.calls import add_bucket, add_cdn
from fnplatform.library.specs import BucketSpec, CdnPath, CdnSpec

from tests.capabilities.harness import SETTINGS, Case, check_converges, table
from tests.support.cases import CDN_STATUS


def site(comp: Composition) -> None:
    reader = values.cdn_bucket_reader(comp, "cdn")
    add_bucket(comp, "site", BucketSpec(
        bucket_name=values.bucket_name_from(comp, "acme-capability-test"),
        readers=(reader,) if reader else ()))
    paths = tuple(CdnPath(name, f"/{name}") for name in comp.spec.get("paths", ["shop"]))
    add_cdn(comp, "cdn", CdnSpec(
        bucket="site", bucket_name=values.bucket_address(comp, "site")["name"], paths=paths,
        hostname="shop.apps.acme.example",
    ))
    comp.set_status("domain", values.cdn_domain(comp, "cdn"))


KINDS = {
    "aws": frozenset({"cloudfront/Distribution", "cloudfront/OriginAccessControl",
                      "s3/BucketPolicy"}),
    "gcp": frozenset({"compute/BackendBucket", "compute/URLMap", "compute/TargetHTTPSProxy",
                      "compute/ManagedSSLCertificate", "compute/GlobalForwardingRule",
                      "storage/BucketIAMMember"}),
    "azure": frozenset({"cdn/FrontdoorProfile", "cdn/FrontdoorEndpoint",
                        "cdn/FrontdoorOriginGroup", "cdn/FrontdoorOrigin", "cdn/FrontdoorRoute"}),
}
STATUS = {cloud: {"cdn": status} for cloud, status in CDN_STATUS.items()}
CASES = [
    Case("one-path", site, kinds=KINDS, status=STATUS),
    Case("two-paths", site, kinds=KINDS, status=STATUS, spec={"paths": ["shop", "wallet"]}),
]


@pytest.mark.parametrize(("case", "cloud"), table(add_cdn, CASES))
def test_composes_schema_valid_bodies_that_converge(case: Case, cloud: str) -> None:
    done = check_converges(case, cloud)
    assert {"site", "cdn"} <= set(done.desired)
    for name in case.spec.get("paths", ["shop"]):
        assert f"/{name}" in str(done.desired), name


def test_the_cdn_is_a_named_reader_of_the_private_bucket_on_aws() -> None:
    arn = CDN_STATUS["aws"]["atProvider"]["arn"]
    done = check_converges(CASES[0], "aws")
    policy = done.for_provider("site-policy")["policy"]
    assert '"Service":"cloudfront.amazonaws.com"' in policy
    assert f'"AWS:SourceArn":"{arn}"' in policy
    assert '"Principal":"*","Action":"s3:GetObject"' not in policy  # never public
    assert done.status["domain"] == CDN_STATUS["aws"]["atProvider"]["domainName"]


def test_gcp_cdn_reads_the_bucket_through_the_cloud_cdn_service_agent() -> None:
    done = check_converges(CASES[0], "gcp")
    members = [body["spec"]["forProvider"] for body in done.desired.values()
               if body["kind"] == "BucketIAMMember"]
    number = SETTINGS["gcp"]["projectNumber"]
    assert {"role": "roles/storage.objectViewer",
            "member": f"serviceAccount:service-{number}@cloud-cdn-fill.iam.gserviceaccount.com"
            }.items() <= members[0].items()
    assert not any(m["member"] in ("allUsers", "allAuthenticatedUsers") for m in members)
