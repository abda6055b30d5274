"""Azure CDN: Front Door (Premium) reaching a private storage account over Private Link.

Composed as ``name`` (``cdn.azure.upbound.io/v1beta1 FrontdoorEndpoint``) with
``name-profile`` (``FrontdoorProfile``, ``Premium_AzureFrontDoor``: Private Link origins need
the Premium tier), ``name-origin-group``, ``name-origin`` (``FrontdoorOrigin`` whose
``privateLink`` targets the storage account's ``blob`` sub-resource) and one
``FrontdoorRoute`` per cache path: ``name-route`` for ``/*`` and ``name-route-<mfe>`` for each
micro-frontend (``/checkout/*``), all serving ``/<container>`` of the account.

The storage account stays private (no public blob access): Front Door reaches it through a
managed private endpoint. Azure creates that private endpoint connection *pending* on the
storage account and someone with rights on the account must approve it; no kind in the pinned
provider approves a private endpoint connection, so the claim gets a ``CapabilityGap``
condition saying so (Front Door answers errors until it is approved, never anything public).
"""

from __future__ import annotations

from typing import Any

from fnplatform.clouds.azure.bucket import CONTAINER
from fnplatform.clouds.azure.common import (
    resource_group,
)
from fnplatform.clouds.azure.kinds import (
    FRONTDOOR_ENDPOINT,
    FRONTDOOR_ORIGIN,
    FRONTDOOR_ORIGIN_GROUP,
    FRONTDOOR_PROFILE,
    FRONTDOOR_ROUTE,
)
from fnplatform.composition import Composition
from fnplatform.library import values
from fnplatform.library.calls import add_cdn
from fnplatform.library.specs import BucketReader, CdnSpec

COMPRESSED_TYPES = [
    "application/javascript",
    "application/json",
    "image/svg+xml",
    "text/css",
    "text/html",
    "text/javascript",
]


def _route(comp: Composition, name: str, pattern: str, origin_path: str) -> dict[str, Any]:
    return FRONTDOOR_ROUTE.new(
        {
            "cdnFrontdoorEndpointIdRef": comp.ref(name),
            "cdnFrontdoorOriginGroupIdRef": comp.ref(f"{name}-origin-group"),
            "cdnFrontdoorOriginIdsRefs": [comp.ref(f"{name}-origin")],
            "cdnFrontdoorOriginPath": origin_path,
            "patternsToMatch": [pattern],
            "supportedProtocols": ["Http", "Https"],
            "httpsRedirectEnabled": True,
            "forwardingProtocol": "HttpsOnly",
            "linkToDefaultDomain": True,
            "cache": {
                "queryStringCachingBehavior": "IgnoreQueryString",
                "compressionEnabled": True,
                "contentTypesToCompress": COMPRESSED_TYPES,
            },
        }
    )


@add_cdn.on("azure")
def cdn(comp: Composition, name: str, spec: CdnSpec) -> None:
    """A Front Door endpoint with one route per cache path over a Private Link origin."""
    comp.emit(
        f"{name}-profile",
        FRONTDOOR_PROFILE.new(
            {"resourceGroupName": resource_group(comp), "skuName": "Premium_AzureFrontDoor"}
        ),
    )
    profile = comp.ref(f"{name}-profile")
    comp.emit(
        name,
        FRONTDOOR_ENDPOINT.new({"cdnFrontdoorProfileIdRef": profile, "enabled": True}),
        uses=[f"{name}-profile"],
    )
    _origin_group(comp, name, f"{name}-origin-group")
    account = comp.ref(spec.bucket)
    comp.emit(
        f"{name}-origin",
        FRONTDOOR_ORIGIN.new(
            {
                "cdnFrontdoorOriginGroupIdRef": comp.ref(f"{name}-origin-group"),
                "enabled": True,
                "certificateNameCheckEnabled": True,
                "hostNameRef": account,
                "originHostHeaderRef": account,
                "httpsPort": 443,
                "priority": 1,
                "weight": 1000,
                "privateLink": {
                    "privateLinkTargetIdRef": account,
                    "targetType": "blob",
                    "location": comp.region,
                    "requestMessage": f"Front Door of {comp.name} reads its assets",
                },
            }
        ),
        uses=[f"{name}-origin-group", spec.bucket],
    )
    origin_path = f"/{CONTAINER}"
    routes = [(f"{name}-route", "/*")] + [
        (f"{name}-route-{path.name}", f"{path.path.rstrip('/')}/*") for path in spec.paths
    ]
    for route, pattern in routes:
        comp.emit(
            route,
            _route(comp, name, pattern, origin_path),
            uses=[name, f"{name}-origin"],
        )
    if spec.api_origin:
        _api(comp, name, spec, spec.api_origin)
    comp.gap(
        "cdn-private-link-approval",
        "Front Door reaches the storage account through Private Link: approve its pending "
        "private endpoint connection on the storage account (no provider kind can)",
    )


def _origin_group(comp: Composition, name: str, group: str) -> None:
    """Origin group ``group`` of the Front Door profile of CDN ``name`` (health sampling as
    Front Door's defaults, no session affinity)."""
    comp.emit(
        group,
        FRONTDOOR_ORIGIN_GROUP.new(
            {
                "cdnFrontdoorProfileIdRef": comp.ref(f"{name}-profile"),
                "loadBalancing": {"sampleSize": 4, "successfulSamplesRequired": 3},
                "sessionAffinityEnabled": False,
            }
        ),
        uses=[f"{name}-profile"],
    )


def _api(comp: Composition, name: str, spec: CdnSpec, host: str) -> None:
    """The backend behind ``/api/*``: its own origin group and origin (the platform's ingress
    by host name, HTTPS with the certificate's name checked) and an uncached HTTPS-only route."""
    _origin_group(comp, name, f"{name}-api-origin-group")
    comp.emit(
        f"{name}-api-origin",
        FRONTDOOR_ORIGIN.new(
            {
                "cdnFrontdoorOriginGroupIdRef": comp.ref(f"{name}-api-origin-group"),
                "enabled": True,
                "certificateNameCheckEnabled": True,
                "hostName": host,
                "originHostHeader": host,
                "httpPort": 80,
                "httpsPort": 443,
                "priority": 1,
                "weight": 1000,
            }
        ),
        uses=[f"{name}-api-origin-group"],
    )
    comp.emit(
        f"{name}-route-api",
        FRONTDOOR_ROUTE.new(
            {
                "cdnFrontdoorEndpointIdRef": comp.ref(name),
                "cdnFrontdoorOriginGroupIdRef": comp.ref(f"{name}-api-origin-group"),
                "cdnFrontdoorOriginIdsRefs": [comp.ref(f"{name}-api-origin")],
                "patternsToMatch": [f"{spec.api_path.rstrip('/')}/*"],
                "supportedProtocols": ["Https"],  # a redirected POST would arrive as a GET
                "httpsRedirectEnabled": False,
                "forwardingProtocol": "HttpsOnly",
                "linkToDefaultDomain": True,
            }
        ),
        uses=[name, f"{name}-api-origin"],
    )


@values.cdn_bucket_reader.on("azure")
def cdn_bucket_reader(comp: Composition, cdn_name: str) -> BucketReader | None:
    """None: Front Door reads over Private Link, not as an RBAC principal of the account."""
    return None


@values.cdn_domain.on("azure")
def cdn_domain(comp: Composition, cdn_name: str) -> str | None:
    """The endpoint's ``*.azurefd.net`` host name, once observed."""
    value = comp.observed_value(cdn_name, "status.atProvider.hostName")
    return str(value) if value else None
