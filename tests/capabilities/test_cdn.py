"""add_cdn on every cloud: a CDN in front of a private bucket, reading it as a named reader.

The composer asks as the environment module does: the bucket's readers include the CDN once
the cloud knows who it reads as (``cdn_bucket_reader``), the CDN names the bucket by its cloud
name (``bucket_address``).
"""

from __future__ import annotations

import dataclasses

import providersim
import pytest
from fnplatform.clouds.aws.cdn import certificate_name as acm_certificate
from fnplatform.clouds.gcp.cdn import certificate_name
from fnplatform.composition import Composition
from fnplatform.library.bucket import BucketSpec, add_bucket, bucket_address, bucket_name_from
from fnplatform.library.cdn import (
    CdnPath,
    CdnSpec,
    add_cdn,
    cdn_bucket_reader,
    cdn_custom_domains,
    cdn_domain,
)
from fnplatform.merge import deep_merge

from tests.capabilities.harness import (
    SETTINGS,
    Body,
    Case,
    Outcome,
    check_converges,
    compose_once,
    converge,
    observe,
    table,
)


def site(comp: Composition) -> None:
    reader = cdn_bucket_reader(comp, "cdn")
    wanted = bucket_name_from(comp, "acme-capability-test")
    add_bucket(comp, "site", BucketSpec(bucket_name=wanted, readers=(reader,) if reader else ()))
    paths = tuple(CdnPath(name, f"/{name}") for name in comp.spec.get("paths", ["shop"]))
    cdn = CdnSpec(
        bucket="site",
        bucket_name=bucket_address(comp, "site", wanted)["name"],
        paths=paths,
        hostname="shop.apps.acme.example",
    )
    add_cdn(comp, "cdn", cdn)
    comp.set_status("domain", cdn_domain(comp, "cdn", cdn))


KINDS = {
    "aws": frozenset(
        {"cloudfront/Distribution", "cloudfront/OriginAccessControl", "s3/BucketPolicy"}
    ),
    "gcp": frozenset(
        {
            "compute/BackendBucket",
            "compute/URLMap",
            "compute/TargetHTTPSProxy",
            "compute/ManagedSSLCertificate",
            "compute/GlobalForwardingRule",
            "storage/BucketIAMMember",
        }
    ),
    "azure": frozenset(
        {
            "cdn/FrontdoorProfile",
            "cdn/FrontdoorEndpoint",
            "cdn/FrontdoorOriginGroup",
            "cdn/FrontdoorOrigin",
            "cdn/FrontdoorRoute",
        }
    ),
}
CASES = [
    Case("one-path", site, kinds=KINDS),
    Case("two-paths", site, kinds=KINDS, spec={"paths": ["shop", "wallet"]}),
]


@pytest.mark.parametrize(("case", "cloud"), table(add_cdn, CASES))
def test_composes_schema_valid_bodies_that_converge(case: Case, cloud: str) -> None:
    done = check_converges(case, cloud)
    assert {"site", "cdn"} <= set(done.desired)
    for name in case.spec.get("paths", ["shop"]):
        assert f"/{name}" in str(done.desired), name


def test_the_cdn_is_a_named_reader_of_the_private_bucket_on_aws() -> None:
    done = check_converges(CASES[0], "aws")
    arn = done.reported("cdn")["arn"]
    policy = done.for_provider("site-policy")["policy"]
    assert '"Service":"cloudfront.amazonaws.com"' in policy
    assert f'"AWS:SourceArn":"{arn}"' in policy
    assert '"Principal":"*","Action":"s3:GetObject"' not in policy  # never public
    assert done.status["domain"] == done.reported("cdn")["domainName"]


def test_gcp_cdn_reads_the_bucket_through_the_cloud_cdn_service_agent() -> None:
    done = check_converges(CASES[0], "gcp")
    members = [
        body["spec"]["forProvider"]
        for body in done.desired.values()
        if body["kind"] == "BucketIAMMember"
    ]
    number = SETTINGS["gcp"]["projectNumber"]
    assert {
        "role": "roles/storage.objectViewer",
        "member": f"serviceAccount:service-{number}@cloud-cdn-fill.iam.gserviceaccount.com",
    }.items() <= members[0].items()
    assert not any(m["member"] in ("allUsers", "allAuthenticatedUsers") for m in members)


# -- custom domains ------------------------------------------------------------------------

DOMAINS = ("shop.example.com", "www.shop.example.com")
AZURE_ZONE = (
    "/subscriptions/00000000-0000-0000-0000-000000000000/resourceGroups/acme-dns/"
    "providers/Microsoft.Network/dnsZones/example.com"
)
#: Each cloud's DNS zone for the custom domains, as the platform would name it.
ZONES: dict[str, Body] = {
    "aws": {"aws": {"cdnDomains": {"hostedZoneId": "Z0123456789ABCDEFGHIJ"}}},
    "gcp": {"gcp": {"cdnDomains": {"managedZone": "example-com"}}},
    "azure": {"azure": {"cdnDomains": {"dnsZoneId": AZURE_ZONE}}},
}
ACM_CERTIFICATE = acm_certificate("cdn", DOMAINS)
GCP_CERTIFICATE = certificate_name(
    "cdn",
    CdnSpec(
        bucket="site", bucket_name="-", hostname="shop.apps.acme.example", custom_domains=DOMAINS
    ),
)
#: A certificate the platform brings itself (environment.aws.cdnDomains.certificateArn).
PLATFORM_CERTIFICATE = (
    "arn:aws:acm:us-east-1:123456789012:certificate/99992d3c-4b5a-6978-8a9b-0c1d2e3f4a5b"
)
#: ACM before it issues: the validation records exist, the certificate is not usable yet.
PENDING = {"atProvider": {"status": "PENDING_VALIDATION"}}


def shop(comp: Composition) -> None:
    """The site with the composite's custom domains, reporting them as the environment does."""
    site_with = dict(comp.spec)
    reader = cdn_bucket_reader(comp, "cdn")
    wanted = bucket_name_from(comp, "acme-capability-test")
    add_bucket(comp, "site", BucketSpec(bucket_name=wanted, readers=(reader,) if reader else ()))
    hosts = tuple(site_with.get("domains", DOMAINS))
    cdn = CdnSpec(
        bucket="site",
        bucket_name=bucket_address(comp, "site", wanted)["name"],
        paths=(CdnPath("shop", "/shop"),),
        hostname="shop.apps.acme.example",
        custom_domains=hosts,
    )
    add_cdn(comp, "cdn", cdn, fields={"custom_domains": "spec.domains"})
    comp.set_status(
        "domains", [dataclasses.asdict(d) for d in cdn_custom_domains(comp, "cdn", cdn)]
    )


def with_domains(cloud: str, *, zone: bool) -> Outcome:
    settings = deep_merge(SETTINGS, ZONES[cloud]) if zone else SETTINGS
    return converge(cloud, shop, settings=settings)


def _of_kind(done: Outcome, kind: str) -> dict[str, Body]:
    return {name: body for name, body in done.desired.items() if body["kind"] == kind}


@pytest.mark.parametrize("zone", [True, False], ids=["zone", "no-zone"])
@pytest.mark.parametrize("cloud", add_cdn.clouds())
def test_custom_domains_converge_schema_valid_and_say_what_dns_they_need(
    cloud: str, zone: bool
) -> None:
    done = with_domains(cloud, zone=zone)
    domains = done.status["domains"]
    assert [d["host"] for d in domains] == list(DOMAINS)
    assert all(d["ready"] for d in domains), domains
    if zone:  # composed into the platform's zone: nothing left for the platform to do
        assert all(d["records"] == [] for d in domains), domains
    else:
        assert all(d["records"] for d in domains), domains
        assert not _of_kind(
            done, {"aws": "Record", "gcp": "RecordSet", "azure": "DNSTXTRecord"}[cloud]
        )


def test_cloudfront_serves_custom_domains_on_a_us_east_1_certificate() -> None:
    done = with_domains("aws", zone=True)
    issued = done.reported(ACM_CERTIFICATE)
    certificate = done.for_provider(ACM_CERTIFICATE)
    assert certificate["region"] == "us-east-1"  # CloudFront's only region, bucket in eu-west-1
    assert (certificate["domainName"], certificate["subjectAlternativeNames"]) == (
        DOMAINS[0],
        list(DOMAINS[1:]),
    )
    assert certificate["validationMethod"] == "DNS"
    distribution = done.for_provider("cdn")
    assert distribution["aliases"] == list(DOMAINS)
    assert distribution["viewerCertificate"] == {
        "acmCertificateArn": issued["arn"],
        "sslSupportMethod": "sni-only",
        "minimumProtocolVersion": "TLSv1.2_2021",
    }
    records = {
        body["spec"]["forProvider"]["name"]: body["spec"]["forProvider"]
        for body in _of_kind(done, "Record").values()
    }
    for option in issued["domainValidationOptions"]:
        record = records[option["resourceRecordName"].rstrip(".")]
        assert (record["type"], record["records"]) == ("CNAME", [option["resourceRecordValue"]])
    aliases = [
        b["spec"]["forProvider"]
        for b in _of_kind(done, "Record").values()
        if "alias" in b["spec"]["forProvider"]
    ]
    assert sorted((r["name"], r["type"]) for r in aliases) == sorted(
        (host, kind) for host in DOMAINS for kind in ("A", "AAAA")
    )
    assert all(
        r["alias"]
        == {
            "name": done.reported("cdn")["domainName"],
            "zoneId": "Z2FDTNDATAQYW2",
            "evaluateTargetHealth": False,
        }
        for r in aliases
    )
    validation = done.for_provider(f"{ACM_CERTIFICATE}-validation")
    assert validation["region"] == "us-east-1"
    assert validation["validationRecordFqdns"] == sorted(
        o["resourceRecordName"].rstrip(".") for o in issued["domainValidationOptions"]
    )


def test_cloudfront_takes_the_domains_only_once_the_certificate_is_issued() -> None:
    settings = deep_merge(SETTINGS, ZONES["aws"])
    first = compose_once("aws", shop, settings=settings)
    observed = observe(first.desired, {ACM_CERTIFICATE: PENDING})
    pending = compose_once("aws", shop, settings=settings, observed=observed)
    distribution = pending.for_provider("cdn")
    assert "aliases" not in distribution
    assert distribution["viewerCertificate"] == {"cloudfrontDefaultCertificate": True}
    assert sorted(n for n in pending.desired if n.startswith("cdn-validation-")) == [
        "cdn-validation-shop-example-com",  # validation is under way
        "cdn-validation-www-shop-example-com",
    ]
    assert not [n for n in pending.desired if n.startswith("cdn-alias-")]
    composed = pending.conditions["Composed"]
    assert f"cdn-alias-shop-example-com (waits for {ACM_CERTIFICATE} " in composed.message
    assert not any(d["ready"] for d in pending.status["domains"])


def test_cloudfront_may_serve_the_platforms_own_certificate() -> None:
    given = PLATFORM_CERTIFICATE
    settings = deep_merge(SETTINGS, {"aws": {"cdnDomains": {"certificateArn": given}}})
    done = converge("aws", shop, settings=settings)
    assert "Certificate" not in done.kinds
    assert done.for_provider("cdn")["viewerCertificate"]["acmCertificateArn"] == given
    # no zone: the platform points the hosts at the distribution itself
    assert done.status["domains"][0]["records"] == [
        {"name": DOMAINS[0], "type": "CNAME", "value": done.reported("cdn")["domainName"]}
    ]


def test_a_certificate_outside_us_east_1_is_refused_naming_the_setting() -> None:
    settings = deep_merge(
        SETTINGS,
        {
            "aws": {
                "cdnDomains": {
                    "certificateArn": PLATFORM_CERTIFICATE.replace("us-east-1", "eu-west-1")
                }
            }
        },
    )
    outcome = compose_once("aws", shop, settings=settings)
    assert outcome.fatal and outcome.fatal[0].startswith(
        "environment.aws.cdnDomains.certificateArn:"
    ), outcome.fatal


def test_cloud_cdn_certificate_covers_every_host_and_dns_points_at_the_address() -> None:
    done = with_domains("gcp", zone=True)
    hosts = ["shop.apps.acme.example", *DOMAINS]
    assert done.for_provider(GCP_CERTIFICATE)["managed"]["domains"] == hosts
    assert done.for_provider("cdn")["hostRule"][0]["hosts"] == hosts
    proxy = done.for_provider("cdn-https-proxy")
    assert proxy["sslCertificatesRefs"] == [{"name": f"probe-{GCP_CERTIFICATE}"}]
    records = sorted(
        (r["name"], r["type"], r["rrdatas"][0], r["managedZone"])
        for r in (b["spec"]["forProvider"] for b in _of_kind(done, "RecordSet").values())
    )
    address = done.reported("cdn-address")["address"]
    assert records == [(f"{host}.", "A", address, "example-com") for host in sorted(DOMAINS)]


def test_a_new_domain_list_is_a_new_certificate_beside_the_old_one_until_issued() -> None:
    """A managed certificate's domains are ForceNew while the proxy refers to it: the new one
    is composed beside the old, both served, and the old goes once the new one is issued."""
    old = converge("gcp", shop, spec={"domains": [DOMAINS[0]]})
    old_name = next(n for n in old.desired if n.startswith("cdn-certificate-"))
    observed = observe(old.desired)
    changed = compose_once("gcp", shop, observed=observed)
    assert changed.for_provider("cdn-https-proxy")["sslCertificatesRefs"] == [
        {"name": f"probe-{GCP_CERTIFICATE}"},
        {"name": f"probe-{old_name}"},
    ]
    assert changed.for_provider(old_name) == old.for_provider(old_name)
    observed[GCP_CERTIFICATE] = providersim.ready(changed.body(GCP_CERTIFICATE))
    issued = compose_once("gcp", shop, observed=observed)
    assert issued.for_provider("cdn-https-proxy")["sslCertificatesRefs"] == [
        {"name": f"probe-{GCP_CERTIFICATE}"}
    ]
    assert old_name not in issued.desired


def test_front_door_custom_domains_are_on_every_route_and_validated_in_the_zone() -> None:
    done = with_domains("azure", zone=True)
    domains = _of_kind(done, "FrontdoorCustomDomain")
    assert sorted(d["spec"]["forProvider"]["hostName"] for d in domains.values()) == sorted(DOMAINS)
    for body in domains.values():
        assert body["spec"]["forProvider"]["tls"] == {
            "certificateType": "ManagedCertificate",
            "minimumTlsVersion": "TLS12",
        }
        assert body["spec"]["forProvider"]["dnsZoneId"] == AZURE_ZONE
    refs = sorted(d["metadata"]["name"] for d in domains.values())
    for route in _of_kind(done, "FrontdoorRoute").values():
        assert (
            sorted(
                r["name"] for r in route["spec"]["forProvider"]["cdnFrontdoorCustomDomainIdsRefs"]
            )
            == refs
        )
    txt = {
        b["metadata"]["annotations"]["crossplane.io/external-name"]: b["spec"]["forProvider"]
        for b in _of_kind(done, "DNSTXTRecord").values()
    }
    tokens = {
        host: done.reported(f"cdn-domain-{host.replace('.', '-')}")["validationToken"]
        for host in DOMAINS
    }
    assert {name: r["record"] for name, r in txt.items()} == {
        "_dnsauth.shop": [{"value": tokens[DOMAINS[0]]}],
        "_dnsauth.www.shop": [{"value": tokens[DOMAINS[1]]}],
    }
    assert {r["zoneName"] for r in txt.values()} == {"example.com"}
    assert {r["resourceGroupName"] for r in txt.values()} == {"acme-dns"}
    cname = {
        b["metadata"]["annotations"]["crossplane.io/external-name"]: b["spec"]["forProvider"]
        for b in _of_kind(done, "DNSCNAMERecord").values()
    }
    assert {name: r["record"] for name, r in cname.items()} == dict.fromkeys(
        ("shop", "www.shop"), done.reported("cdn")["hostName"]
    )


def test_front_door_refuses_a_host_outside_the_platforms_zone() -> None:
    settings = deep_merge(SETTINGS, ZONES["azure"])
    outcome = compose_once("azure", shop, settings=settings, spec={"domains": ["shop.example.org"]})
    assert outcome.fatal == [
        "spec.domains: shop.example.org is not under the platform's DNS zone example.com "
        "(a zone apex can't hold the CNAME Front Door needs)"
    ]


def test_front_door_without_a_zone_names_the_validation_and_cname_records() -> None:
    done = with_domains("azure", zone=False)
    token = done.reported(f"cdn-domain-{DOMAINS[0].replace('.', '-')}")["validationToken"]
    assert done.status["domains"][0]["records"] == [
        {"name": "_dnsauth.shop.example.com", "type": "TXT", "value": token},
        {"name": "shop.example.com", "type": "CNAME", "value": done.reported("cdn")["hostName"]},
    ]


def test_cloudfront_keeps_serving_the_old_domains_until_the_new_certificate_is_issued() -> None:
    """ACM's names force a new certificate, which ACM would refuse to delete while CloudFront
    serves it: a new list is a new certificate, the distribution keeps what it served (and
    that certificate stays) until the new one is issued."""
    settings = deep_merge(SETTINGS, ZONES["aws"])
    old_hosts = (DOMAINS[0],)
    old_name = acm_certificate("cdn", old_hosts)
    # the simulation gives every ACM certificate one ARN: the old one needs its own here
    old_arn = PLATFORM_CERTIFICATE.replace("9999", "0001")
    status = {old_name: {"atProvider": {"arn": old_arn}}}
    before = converge(
        "aws", shop, spec={"domains": list(old_hosts)}, status=status, settings=settings
    )
    observed = observe(before.desired, status)
    changed = compose_once("aws", shop, settings=settings, observed=observed)
    distribution = changed.for_provider("cdn")
    assert distribution["aliases"] == list(old_hosts)
    assert distribution["viewerCertificate"]["acmCertificateArn"] == old_arn
    assert changed.for_provider(old_name) == before.for_provider(old_name)
    assert "cdn-alias-shop-example-com" in changed.desired  # still served
    assert "cdn-alias-www-shop-example-com" not in changed.desired
    observed[ACM_CERTIFICATE] = providersim.ready(changed.body(ACM_CERTIFICATE))
    issued = compose_once("aws", shop, settings=settings, observed=observed)
    assert issued.for_provider("cdn")["aliases"] == list(DOMAINS)
    assert (
        issued.for_provider("cdn")["viewerCertificate"]["acmCertificateArn"]
        == (issued.reported(ACM_CERTIFICATE)["arn"])
    )
    assert old_name not in issued.desired
