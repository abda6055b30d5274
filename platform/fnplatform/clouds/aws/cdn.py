"""AWS CDN: a CloudFront distribution reading a private S3 bucket through origin access control.

Composed as ``name`` (``cloudfront.aws.upbound.io/v1beta2 Distribution``) and ``name-oac``
(``OriginAccessControl``, SigV4-signing every origin request). The bucket stays private: its
one bucket policy (assembled by the bucket capability) names CloudFront's service principal
as a reader, narrowed by ``AWS:SourceArn`` to this distribution's ARN, which is what AWS
documents for origin access control. The ARN is only known once the distribution exists, so
:func:`cdn_bucket_reader` returns no reader until then (CloudFront answers 403 meanwhile,
never serves anything public).

One ordered cache behaviour per micro-frontend path (``/checkout/*``), all on the bucket
origin, with the AWS managed ``CachingOptimized`` cache policy; viewers are redirected to
HTTPS on CloudFront's default certificate. With ``spec.api_origin`` the backend is a second,
custom origin (HTTPS only, TLS 1.2) behind ``/api/*``: uncached, every method, every viewer
header but ``Host`` forwarded (AWS managed policies).

Custom domains (``spec.custom_domains``): CloudFront takes ACM certificates from us-east-1
only, whatever the bucket's region, and refuses an alternate domain name (``aliases``) without
a valid certificate covering it. So ``name-certificate-<8 hex of the hosts>`` (``acm
Certificate``, DNS validation, us-east-1) is composed, unless the platform names an issued one
(``aws.cdnDomains.certificateArn``), and the distribution gets ``aliases`` and the certificate
(SNI, TLS 1.2 2021 policy) only once ACM reports it ``ISSUED``. ACM's names force a new
certificate, which ACM won't delete while CloudFront serves it: a new host list is a new
certificate beside the old one, and the distribution keeps what it served (the old
certificate kept too) until the new one is issued. With
``aws.cdnDomains.hostedZoneId`` the validation records ACM asks for (observed
``domainValidationOptions``), a ``CertificateValidation`` and, once the certificate serves,
A/AAAA aliases of each host to the distribution are composed into that zone; without it the
claim lists the records the platform must create (:func:`cdn_custom_domains`).
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass
from typing import Any

from fnplatform.clouds.aws.kinds import (
    ACM_CERTIFICATE,
    ACM_CERTIFICATE_VALIDATION,
    DISTRIBUTION,
    ORIGIN_ACCESS_CONTROL,
    RECORD,
)
from fnplatform.clouds.aws.settings import aws_environment
from fnplatform.composition import Composition
from fnplatform.holds import Wait
from fnplatform.library.bucket import BucketReader
from fnplatform.library.cdn import (
    CdnCustomDomain,
    CdnSpec,
    DnsRecord,
    add_cdn,
    cdn_bucket_reader,
    cdn_custom_domains,
    cdn_domain,
)

ORIGIN_ID = "assets"
#: AWS managed cache policy "Managed-CachingOptimized" (the same id in every account).
CACHING_OPTIMIZED = "658327ea-f89d-4fab-a63d-7e88639e58f6"
CLOUDFRONT_PRINCIPAL = "cloudfront.amazonaws.com"
API_ORIGIN_ID = "api"
#: AWS managed policies for a dynamic origin: "Managed-CachingDisabled" and
#: "Managed-AllViewerExceptHostHeader" (the origin sees its own host name, which its ingress
#: routes on, and every viewer header, cookie and query string).
CACHING_DISABLED = "4135ea2d-6df8-44a3-9df3-4b5a84be39ad"
ALL_VIEWER_EXCEPT_HOST_HEADER = "b689b0a8-53d0-40ab-baf2-68738e2966ac"
#: CloudFront reads viewer certificates from ACM in this region only.
CERTIFICATE_REGION = "us-east-1"
#: The hosted zone id of every CloudFront distribution, for Route 53 alias records.
CLOUDFRONT_HOSTED_ZONE = "Z2FDTNDATAQYW2"
ISSUED = "ISSUED"
RECORD_TTL = 300
#: The security policy for viewers on a custom domain (TLS 1.2, current ciphers).
MINIMUM_PROTOCOL = "TLSv1.2_2021"
DEFAULT_CERTIFICATE: dict[str, Any] = {"cloudfrontDefaultCertificate": True}


def _api(spec: CdnSpec, host: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """The backend's custom origin (HTTPS only, TLS 1.2) and its uncached behaviour."""
    origin = {
        "originId": API_ORIGIN_ID,
        "domainName": host,
        "customOriginConfig": {
            "httpPort": 80,
            "httpsPort": 443,
            "originProtocolPolicy": "https-only",
            "originSslProtocols": ["TLSv1.2"],
        },
    }
    behaviour = {
        "pathPattern": f"{spec.api_path.rstrip('/')}/*",
        "targetOriginId": API_ORIGIN_ID,
        "viewerProtocolPolicy": "https-only",  # a redirected POST would arrive as a GET
        "allowedMethods": ["DELETE", "GET", "HEAD", "OPTIONS", "PATCH", "POST", "PUT"],
        "cachedMethods": ["GET", "HEAD"],
        "cachePolicyId": CACHING_DISABLED,
        "originRequestPolicyId": ALL_VIEWER_EXCEPT_HOST_HEADER,
        "compress": True,
    }
    return origin, behaviour


def _behaviour(path_pattern: str | None) -> dict[str, Any]:
    behaviour: dict[str, Any] = {
        "targetOriginId": ORIGIN_ID,
        "viewerProtocolPolicy": "redirect-to-https",
        "allowedMethods": ["GET", "HEAD", "OPTIONS"],
        "cachedMethods": ["GET", "HEAD"],
        "cachePolicyId": CACHING_OPTIMIZED,
        "compress": True,
    }
    if path_pattern is not None:
        behaviour["pathPattern"] = path_pattern
    return behaviour


@add_cdn.on("aws")
def cdn(comp: Composition, name: str, spec: CdnSpec) -> None:
    """A CloudFront distribution in front of ``spec.bucket`` with one behaviour per path."""
    comp.emit(
        f"{name}-oac",
        ORIGIN_ACCESS_CONTROL.new(
            {
                "name": comp.resource_name(f"{name}-oac"),
                "description": f"{comp.name}: CloudFront reads {spec.bucket_name}",
                "originAccessControlOriginType": "s3",
                "signingBehavior": "always",
                "signingProtocol": "sigv4",
            }
        ),
    )
    origins: list[dict[str, Any]] = [
        {
            "originId": ORIGIN_ID,
            "domainName": f"{spec.bucket_name}.s3.{comp.region}.amazonaws.com",
            "originAccessControlIdRef": comp.ref(f"{name}-oac"),
        }
    ]
    behaviours = [_behaviour(f"{path.path.rstrip('/')}/*") for path in spec.paths]
    if spec.api_origin:
        api_origin, api_behaviour = _api(spec, spec.api_origin)
        origins.append(api_origin)
        behaviours.insert(0, api_behaviour)
    zone = aws_environment(comp).cdnDomains.hostedZoneId
    serving, composed = _certificate(comp, name, spec, zone)
    comp.emit(
        name,
        DISTRIBUTION.new(
            {
                "enabled": True,
                "comment": f"{comp.name} micro-frontends",
                "defaultRootObject": spec.root_object,
                "isIpv6Enabled": True,
                "httpVersion": "http2and3",
                "priceClass": "PriceClass_100",
                "origin": origins,
                "defaultCacheBehavior": _behaviour(None),
                "orderedCacheBehavior": behaviours,
                "restrictions": {"geoRestriction": {"restrictionType": "none"}},
                **_viewer(serving),
            }
        ),
        uses=[f"{name}-oac", spec.bucket, *composed],
    )
    if spec.custom_domains and zone:
        _aliases(comp, name, spec, zone, serving)


def _slug(host: str) -> str:
    """A host as part of a composition name: ``shop.example.com`` -> ``shop-example-com``."""
    return host.replace(".", "-")


@dataclass(frozen=True)
class Serving:
    """What the distribution serves as its alternate domain names, on which certificate."""

    aliases: tuple[str, ...]
    arn: str


def certificate_name(name: str, hosts: tuple[str, ...]) -> str:
    """The composition name of the certificate for ``hosts``: a hash of them, because ACM's
    ``domainName`` and ``subjectAlternativeNames`` force a new certificate, which ACM would
    refuse to delete while the distribution serves it; a new list is a new one beside it."""
    return f"{name}-certificate-{hashlib.sha256(','.join(hosts).encode()).hexdigest()[:8]}"


def _viewer(serving: Serving | None) -> dict[str, Any]:
    """The distribution's names and viewer certificate: the custom domains on an issued
    certificate (CloudFront refuses aliases without one), else the default."""
    if serving is None:
        return {"viewerCertificate": dict(DEFAULT_CERTIFICATE)}
    return {
        "aliases": list(serving.aliases),
        "viewerCertificate": {
            "acmCertificateArn": serving.arn,
            "sslSupportMethod": "sni-only",
            "minimumProtocolVersion": MINIMUM_PROTOCOL,
        },
    }


def _served(comp: Composition, name: str) -> Serving | None:
    """What the observed distribution serves its custom domains with (the desired state it
    was given), if anything."""
    arn = comp.observed_value(name, "spec.forProvider.viewerCertificate.acmCertificateArn")
    aliases = comp.observed_value(name, "spec.forProvider.aliases") or []
    return Serving(tuple(str(a) for a in aliases), str(arn)) if arn and aliases else None


def _certificate(
    comp: Composition, name: str, spec: CdnSpec, zone: str | None
) -> tuple[Serving | None, list[str]]:
    """What the distribution serves the custom domains with, and the composed certificates it
    uses (deleted after it). The new domains on their certificate once ACM has issued it; until
    then what it served before, on the certificate it served them with (kept meanwhile)."""
    if not spec.custom_domains:
        return None, []
    given = aws_environment(comp).cdnDomains.certificateArn
    if given:
        return Serving(spec.custom_domains, given), []
    current = certificate_name(name, spec.custom_domains)
    first, *others = spec.custom_domains
    body: dict[str, Any] = {
        "region": CERTIFICATE_REGION,
        "domainName": first,
        "validationMethod": "DNS",
    }
    if others:
        body["subjectAlternativeNames"] = others
    comp.emit(current, ACM_CERTIFICATE.new(body))
    if zone:
        _validation(comp, name, current, zone)
    arn = comp.observed_value(current, "status.atProvider.arn")
    if arn and comp.observed_value(current, "status.atProvider.status") == ISSUED:
        return Serving(spec.custom_domains, str(arn)), [current]
    served = _served(comp, name)
    if served is None:
        return None, [current]
    return served, [current, *_keep_previous(comp, name, current)]


def _keep_previous(comp: Composition, name: str, current: str) -> list[str]:
    """The certificates ``current`` replaces, re-emitted as observed until it is issued."""
    previous = re.compile(rf"^{re.escape(name)}-certificate-[0-9a-f]{{8}}$")
    kept = []
    for old in sorted(n for n in comp.observed if previous.match(n) and n != current):
        observed = comp.observed_value(old, "spec.forProvider") or {}
        body = {
            key: observed[key]
            for key in ("region", "domainName", "subjectAlternativeNames", "validationMethod")
            if key in observed
        }
        comp.emit(old, ACM_CERTIFICATE.new(body))
        kept.append(old)
    return kept


def _validation_options(comp: Composition, certificate: str) -> dict[str, dict[str, str]]:
    """ACM's observed DNS validation records by domain, one per record name (ACM asks for the
    same record for names sharing one, e.g. a domain and its wildcard)."""
    options = comp.observed_value(certificate, "status.atProvider.domainValidationOptions") or []
    by_record: dict[str, dict[str, str]] = {}
    for option in sorted(options, key=lambda o: str(o.get("domainName", ""))):
        record = str(option.get("resourceRecordName") or "")
        if record and option.get("resourceRecordValue") and record not in by_record:
            by_record[record] = {k: str(v) for k, v in option.items()}
    return {o["domainName"]: o for o in by_record.values()}


def _validation(comp: Composition, name: str, certificate: str, zone: str) -> None:
    """ACM's validation records in the platform's hosted zone, then the
    ``CertificateValidation`` that waits for issuance; composed once ACM has said which
    records it wants (they hold generated tokens). A record is named by its domain, not its
    certificate: ACM asks every certificate of the account for the same record of a domain,
    so a replacing certificate takes the record over instead of deleting it."""
    validation = f"{certificate}-validation"
    if comp.needs(certificate, "status.atProvider.domainValidationOptions", by=validation) is None:
        return
    records = []
    for domain, option in sorted(_validation_options(comp, certificate).items()):
        record = f"{name}-validation-{_slug(domain)}"
        comp.emit(
            record,
            RECORD.new(
                {
                    "zoneId": zone,
                    "name": option["resourceRecordName"].rstrip("."),
                    "type": option.get("resourceRecordType") or "CNAME",
                    "ttl": RECORD_TTL,
                    "records": [option["resourceRecordValue"]],
                    "allowOverwrite": True,
                }
            ),
            uses=[certificate],
        )
        records.append((record, option["resourceRecordName"].rstrip(".")))
    comp.emit(
        validation,
        ACM_CERTIFICATE_VALIDATION.new(
            {
                "region": CERTIFICATE_REGION,
                "certificateArnRef": comp.ref(certificate),
                "validationRecordFqdns": sorted(fqdn for _, fqdn in records),
            }
        ),
        uses=[certificate, *(record for record, _ in records)],
    )


def _aliases(
    comp: Composition, name: str, spec: CdnSpec, zone: str, serving: Serving | None
) -> None:
    """Each host's A and AAAA alias to the distribution, once it serves the host (pointing
    a host at a distribution that doesn't accept it yet would only answer errors)."""
    for host in spec.custom_domains:
        names = (f"{name}-alias-{_slug(host)}", f"{name}-alias-{_slug(host)}-ipv6")
        if serving is None or host not in serving.aliases:
            waits = Wait(
                certificate_name(name, spec.custom_domains), f"status.atProvider.status {ISSUED}"
            )
            for record in names:
                comp.hold(record, waits)
            continue
        target = comp.needs(name, "status.atProvider.domainName", by=names[0])
        if target is None:
            comp.hold(names[1], Wait(name, "status.atProvider.domainName"))
            continue
        for record, kind in zip(names, ("A", "AAAA"), strict=True):
            comp.emit(
                record,
                RECORD.new(
                    {
                        "zoneId": zone,
                        "name": host,
                        "type": kind,
                        "alias": {
                            "name": str(target),
                            "zoneId": CLOUDFRONT_HOSTED_ZONE,
                            "evaluateTargetHealth": False,
                        },
                    }
                ),
                uses=[name],
            )


@cdn_bucket_reader.on("aws")
def aws_cdn_bucket_reader(comp: Composition, cdn_name: str) -> BucketReader | None:
    """CloudFront, narrowed to the distribution ``cdn_name``, once its ARN is known."""
    arn = comp.observed_value(cdn_name, "status.atProvider.arn")
    if not arn:
        return None
    return BucketReader(name="cdn", principal=CLOUDFRONT_PRINCIPAL, source=str(arn))


@cdn_domain.on("aws")
def aws_cdn_domain(comp: Composition, cdn_name: str, spec: CdnSpec) -> str | None:
    """The distribution's ``*.cloudfront.net`` name, once observed."""
    return comp.observed_string(cdn_name, "status.atProvider.domainName")


@cdn_custom_domains.on("aws")
def aws_cdn_custom_domains(
    comp: Composition, cdn_name: str, spec: CdnSpec
) -> tuple[CdnCustomDomain, ...]:
    """A host is served once the observed distribution carries it with its certificate (and,
    with a hosted zone, its alias record is Ready). Without a zone: ACM's validation records
    and a CNAME to the distribution, for the platform to create."""
    settings = aws_environment(comp).cdnDomains
    served = _served(comp, cdn_name) if comp.is_ready(cdn_name) else None
    target = comp.observed_value(cdn_name, "status.atProvider.domainName")
    options = (
        {}
        if settings.certificateArn
        else _validation_options(comp, certificate_name(cdn_name, spec.custom_domains))
    )
    domains = []
    for host in spec.custom_domains:
        records: tuple[DnsRecord, ...] = ()
        ready = served is not None and host in served.aliases
        if settings.hostedZoneId:
            ready = ready and comp.is_ready(f"{cdn_name}-alias-{_slug(host)}")
        else:
            option = options.get(host)
            validation = (
                (
                    DnsRecord(
                        option["resourceRecordName"].rstrip("."),
                        option.get("resourceRecordType") or "CNAME",
                        option["resourceRecordValue"],
                    ),
                )
                if option
                else ()
            )
            records = validation + ((DnsRecord(host, "CNAME", str(target)),) if target else ())
        domains.append(CdnCustomDomain(host=host, ready=ready, records=records))
    return tuple(domains)
