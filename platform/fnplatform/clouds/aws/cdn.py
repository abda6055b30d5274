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
"""

from __future__ import annotations

from typing import Any

from fnplatform.clouds.aws.kinds import DISTRIBUTION, ORIGIN_ACCESS_CONTROL
from fnplatform.composition import Composition
from fnplatform.library import values
from fnplatform.library.calls import add_cdn
from fnplatform.library.specs import BucketReader, CdnSpec

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
    origins: list[dict[str, Any]] = [{
        "originId": ORIGIN_ID,
        "domainName": f"{spec.bucket_name}.s3.{comp.region}.amazonaws.com",
        "originAccessControlIdRef": comp.ref(f"{name}-oac"),
    }]
    behaviours = [_behaviour(f"{path.path.rstrip('/')}/*") for path in spec.paths]
    if spec.api_origin:
        api_origin, api_behaviour = _api(spec, spec.api_origin)
        origins.append(api_origin)
        behaviours.insert(0, api_behaviour)
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
                "viewerCertificate": {"cloudfrontDefaultCertificate": True},
            }
        ),
        uses=[f"{name}-oac", spec.bucket],
    )


@values.cdn_bucket_reader.on("aws")
def cdn_bucket_reader(comp: Composition, cdn_name: str) -> BucketReader | None:
    """CloudFront, narrowed to the distribution ``cdn_name``, once its ARN is known."""
    arn = comp.observed_value(cdn_name, "status.atProvider.arn")
    if not arn:
        return None
    return BucketReader(name="cdn", principal=CLOUDFRONT_PRINCIPAL, source=str(arn))


@values.cdn_domain.on("aws")
def cdn_domain(comp: Composition, cdn_name: str) -> str | None:
    """The distribution's ``*.cloudfront.net`` name, once observed."""
    value = comp.observed_value(cdn_name, "status.atProvider.domainName")
    return str(value) if value else None
