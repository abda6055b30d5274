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

Custom domains (``spec.custom_domains``): one ``FrontdoorCustomDomain`` per host
(``name-domain-<host>``, Front Door's managed certificate, TLS 1.2 minimum), associated with
every route through the route's ``cdnFrontdoorCustomDomainIds`` (the derived schemas hold no
association kind, and a route and an association resource both setting one list would fight).
Front Door issues the certificate once the domain is validated by a TXT record
``_dnsauth.<host>`` holding its generated ``validationToken``. With ``azure.cdnDomains.
dnsZoneId`` that record and the host's CNAME to the endpoint are composed into the zone
(once the token and the endpoint's host name are observed); without it the claim lists the
records the platform must create.
"""

from __future__ import annotations

import re
from typing import Any

from fnplatform.clouds.azure.bucket import CONTAINER
from fnplatform.clouds.azure.common import (
    resource_group,
)
from fnplatform.clouds.azure.kinds import (
    DNS_CNAME_RECORD,
    DNS_TXT_RECORD,
    FRONTDOOR_CUSTOM_DOMAIN,
    FRONTDOOR_ENDPOINT,
    FRONTDOOR_ORIGIN,
    FRONTDOOR_ORIGIN_GROUP,
    FRONTDOOR_PROFILE,
    FRONTDOOR_ROUTE,
)
from fnplatform.clouds.azure.settings import DNS_ZONE_ID, azure_environment
from fnplatform.composition import Composition
from fnplatform.errors import SpecError
from fnplatform.gaps import Gap
from fnplatform.kinds import Kind
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

COMPRESSED_TYPES = [
    "application/javascript",
    "application/json",
    "image/svg+xml",
    "text/css",
    "text/html",
    "text/javascript",
]
RECORD_TTL = 3600
VALIDATION_PREFIX = "_dnsauth"


def _domain(name: str, host: str) -> str:
    """The composition name of ``host``'s custom domain."""
    return f"{name}-domain-{host.replace('.', '-')}"


def _associate(comp: Composition, name: str, spec: CdnSpec, route: dict[str, Any]) -> list[str]:
    """Put the custom domains on a route body; the names the route uses for them."""
    domains = [_domain(name, host) for host in spec.custom_domains]
    if domains:
        route["spec"]["forProvider"]["cdnFrontdoorCustomDomainIdsRefs"] = [
            comp.ref(d) for d in domains
        ]
    return domains


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
    _custom_domains(comp, name, spec)
    for route, pattern in routes:
        body = _route(comp, name, pattern, origin_path)
        comp.emit(route, body, uses=[name, f"{name}-origin", *_associate(comp, name, spec, body)])
    if spec.api_origin:
        _api(comp, name, spec, spec.api_origin)
    comp.gap(
        Gap.CDN_PRIVATE_LINK_APPROVAL,
        "Front Door reaches the storage account through Private Link: approve its pending "
        "private endpoint connection on the storage account (no provider kind can)",
    )


def _zone(comp: Composition) -> tuple[str, str] | None:
    """The platform's DNS zone for custom domains: its resource group and name."""
    zone_id = azure_environment(comp).cdnDomains.dnsZoneId
    match = re.match(DNS_ZONE_ID, zone_id) if zone_id else None
    return (match.group(1), match.group(2)) if match else None


def _relative(host: str, zone: str) -> str:
    """``host``'s record name in ``zone``; a host outside it, or its apex (no CNAME there),
    can't be served through the zone."""
    if not host.endswith(f".{zone}"):
        raise SpecError(
            "custom_domains",
            f"{host} is not under the platform's DNS zone "
            f"{zone} (a zone apex can't hold the CNAME Front Door needs)",
        )
    return host.removesuffix(f".{zone}")


def _custom_domains(comp: Composition, name: str, spec: CdnSpec) -> None:
    """One Front Door custom domain per host, with the managed certificate; with the
    platform's DNS zone, its validation TXT record and its CNAME to the endpoint."""
    zone = _zone(comp)
    zone_id = azure_environment(comp).cdnDomains.dnsZoneId
    for host in spec.custom_domains:
        domain = _domain(name, host)
        relative = _relative(host, zone[1]) if zone else None
        body: dict[str, Any] = {
            "cdnFrontdoorProfileIdRef": comp.ref(f"{name}-profile"),
            "hostName": host,
            "tls": {"certificateType": "ManagedCertificate", "minimumTlsVersion": "TLS12"},
        }
        if zone_id:
            body["dnsZoneId"] = zone_id
        comp.emit(domain, FRONTDOOR_CUSTOM_DOMAIN.new(body), uses=[f"{name}-profile"])
        if zone is None or relative is None:
            continue
        txt, cname = f"{domain}-txt", f"{domain}-cname"
        token = comp.needs(domain, "status.atProvider.validationToken", by=txt)
        if token is not None:
            validation = f"{VALIDATION_PREFIX}.{relative}"
            record = [{"value": str(token)}]
            _zone_record(
                comp, txt, DNS_TXT_RECORD, record, zone=zone, named=validation, domain=domain
            )
        target = comp.needs(name, "status.atProvider.hostName", by=cname)
        if target is not None:
            _zone_record(
                comp, cname, DNS_CNAME_RECORD, str(target), zone=zone, named=relative, domain=domain
            )


def _zone_record(
    comp: Composition,
    name: str,
    kind: Kind,
    record: Any,
    *,
    zone: tuple[str, str],
    named: str,
    domain: str,
) -> None:
    """Record ``name`` (``kind``: TXT or CNAME) of custom domain ``domain`` in the platform's
    DNS zone (``zone``: its resource group and name), named ``named`` in the zone."""
    group, zone_name = zone
    body = {"resourceGroupName": group, "zoneName": zone_name, "ttl": RECORD_TTL, "record": record}
    comp.emit(name, kind.new(body), external_name=named, uses=[domain])


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
    route = FRONTDOOR_ROUTE.new(
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
    )
    comp.emit(
        f"{name}-route-api",
        route,
        uses=[name, f"{name}-api-origin", *_associate(comp, name, spec, route)],
    )


@cdn_bucket_reader.on("azure")
def azure_cdn_bucket_reader(comp: Composition, cdn_name: str) -> BucketReader | None:
    """None: Front Door reads over Private Link, not as an RBAC principal of the account."""
    return None


@cdn_domain.on("azure")
def azure_cdn_domain(comp: Composition, cdn_name: str, spec: CdnSpec) -> str | None:
    """The endpoint's ``*.azurefd.net`` host name, once observed."""
    return comp.observed_string(cdn_name, "status.atProvider.hostName")


@cdn_custom_domains.on("azure")
def azure_cdn_custom_domains(
    comp: Composition, cdn_name: str, spec: CdnSpec
) -> tuple[CdnCustomDomain, ...]:
    """A host is served once its custom domain is Ready (and, with a DNS zone, its TXT and
    CNAME records are). Without a zone: the ``_dnsauth`` TXT record with Front Door's token
    and a CNAME to the endpoint, for the platform to create."""
    zone = _zone(comp)
    target = comp.observed_value(cdn_name, "status.atProvider.hostName")
    domains = []
    for host in spec.custom_domains:
        domain = _domain(cdn_name, host)
        ready = comp.is_ready(domain)
        if zone:
            ready = ready and comp.is_ready(f"{domain}-txt") and comp.is_ready(f"{domain}-cname")
            domains.append(CdnCustomDomain(host, ready))
            continue
        token = comp.observed_value(domain, "status.atProvider.validationToken")
        records = tuple(
            [DnsRecord(f"{VALIDATION_PREFIX}.{host}", "TXT", str(token))] if token else []
        ) + ((DnsRecord(host, "CNAME", str(target)),) if target else ())
        domains.append(CdnCustomDomain(host, ready, records))
    return tuple(domains)
