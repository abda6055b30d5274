"""GCP CDN: Cloud CDN on a global external Application Load Balancer over a private bucket.

Composed as ``name`` (``compute.gcp.upbound.io/v1beta2 URLMap``) with ``name-backend``
(``BackendBucket``, Cloud CDN enabled), ``name-certificate`` (``ManagedSSLCertificate`` for
``spec.hostname``), ``name-https-proxy`` (``TargetHTTPSProxy``), ``name-address``
(``GlobalAddress``: the stable IP the hostname's DNS record points to) and
``name-forwarding-rule`` (``GlobalForwardingRule`` on 443).

The bucket stays private (uniform bucket-level access, no ``allUsers``): Cloud CDN's
private bucket access lets only Cloud CDN's own service agent read it, named as a bucket
reader by :func:`cdn_bucket_reader` (``roles/storage.objectViewer`` for
``service-<project number>@cloud-cdn-fill.iam.gserviceaccount.com``). That principal needs the
project *number*, which only the environment can give (``gcp.projectNumber``); without it the
claim gets a ``CapabilityGap`` condition and the bucket is left private (the CDN answers 403),
never made public.

A managed certificate needs a hostname (``environment.frontend.domain``) or custom domains;
without either there is nothing to serve HTTPS on, so nothing is composed and a gap condition
says why. One path rule per micro-frontend (``/checkout/*``).

Custom domains (``spec.custom_domains``) join the hostname on the URL map and on one managed
certificate. A managed certificate's domain list can't change (the provider replaces it), and
the HTTPS proxy refers to it, so a certificate is named by a hash of its domains
(``name-certificate-<8 hex>``; without custom domains ``name-certificate`` as before): a new
list is a new certificate beside the old one, both on the proxy until the new one is issued
(Google provisions a managed certificate only while a proxy serves it), then the old one goes.
With ``gcp.cdnDomains.managedZone`` each custom host gets an A record to the global address in
that Cloud DNS zone; without it the claim lists the records the platform must create.
"""

from __future__ import annotations

import hashlib
from typing import Any

from fnplatform.clouds.gcp.common import project
from fnplatform.clouds.gcp.kinds import (
    BACKEND_BUCKET,
    GLOBAL_ADDRESS,
    GLOBAL_FORWARDING_RULE,
    MANAGED_SSL_CERTIFICATE,
    RECORD_SET,
    TARGET_HTTPS_PROXY,
    URL_MAP,
)
from fnplatform.clouds.gcp.settings import gcp_environment
from fnplatform.composition import Composition
from fnplatform.gaps import Gap
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

PATH_MATCHER = "micro-frontends"
RECORD_TTL = 300
#: Set on a managed certificate once Google has issued it (the pinned CRD has no status).
ISSUED_FIELD = "status.atProvider.expireTime"


def _hosts(spec: CdnSpec) -> list[str]:
    """Every host the CDN serves: the platform's hostname, then the custom domains."""
    return list(dict.fromkeys([*([spec.hostname] if spec.hostname else []), *spec.custom_domains]))


def certificate_name(name: str, spec: CdnSpec) -> str:
    """The composition name of the certificate for this domain list (see the module doc)."""
    if not spec.custom_domains:
        return f"{name}-certificate"
    digest = hashlib.sha256(",".join(_hosts(spec)).encode()).hexdigest()
    return f"{name}-certificate-{digest[:8]}"


def _certificates(comp: Composition, name: str, spec: CdnSpec) -> list[str]:
    """The certificates the proxy serves: the current one, and while it is not issued yet the
    ones it replaces (observed, re-emitted as they were), so the site never loses TLS."""
    gcp_project = project(comp)
    current = certificate_name(name, spec)
    comp.emit(
        current,
        MANAGED_SSL_CERTIFICATE.new(
            {"project": gcp_project, "type": "MANAGED", "managed": {"domains": _hosts(spec)}}
        ),
    )
    if comp.observed_value(current, ISSUED_FIELD):
        return [current]
    kept = [current]
    for old in sorted(comp.observed):
        if old == current or not (
            old == f"{name}-certificate" or old.startswith(f"{name}-certificate-")
        ):
            continue
        domains = comp.observed_value(old, "spec.forProvider.managed.domains")
        if not domains:
            continue
        comp.emit(
            old,
            MANAGED_SSL_CERTIFICATE.new(
                {"project": gcp_project, "type": "MANAGED", "managed": {"domains": list(domains)}}
            ),
        )
        kept.append(old)
    return kept


@add_cdn.on("gcp")
def cdn(comp: Composition, name: str, spec: CdnSpec) -> None:
    """A URL map with one path rule per micro-frontend, served over HTTPS from Cloud CDN."""
    if not spec.hostname and not spec.custom_domains:
        comp.gap(
            Gap.CDN,
            "Cloud CDN needs a hostname for its managed certificate: set "
            "environment frontend.domain or custom domains; no CDN is composed until then",
        )
        return
    gcp_project = project(comp)
    comp.emit(
        f"{name}-backend",
        BACKEND_BUCKET.new(
            {
                "project": gcp_project,
                "bucketName": spec.bucket_name,
                "description": f"{comp.name} micro-frontends",
                "enableCdn": True,
                "compressionMode": "AUTOMATIC",
                "cdnPolicy": {
                    "cacheMode": "CACHE_ALL_STATIC",
                    "defaultTtl": 3600,
                    "maxTtl": 86400,
                    "clientTtl": 3600,
                },
            }
        ),
        uses=[spec.bucket],
    )
    backend = comp.ref(f"{name}-backend")
    comp.emit(
        name,
        URL_MAP.new(
            {
                "project": gcp_project,
                "description": f"{comp.name} micro-frontends",
                "defaultServiceRef": backend,
                "hostRule": [{"hosts": _hosts(spec), "pathMatcher": PATH_MATCHER}],
                "pathMatcher": [
                    {
                        "name": PATH_MATCHER,
                        "defaultServiceRef": backend,
                        "pathRule": [
                            *_api_rule(comp, spec),
                            *(
                                {"paths": [f"{path.path.rstrip('/')}/*"], "serviceRef": backend}
                                for path in spec.paths
                            ),
                        ],
                    }
                ],
            }
        ),
        uses=[f"{name}-backend"],
    )
    certificates = _certificates(comp, name, spec)
    comp.emit(
        f"{name}-https-proxy",
        TARGET_HTTPS_PROXY.new(
            {
                "project": gcp_project,
                "urlMapRef": comp.ref(name),
                "sslCertificatesRefs": [comp.ref(c) for c in certificates],
            }
        ),
        uses=[name, certificates[0]],
    )
    comp.emit(
        f"{name}-address",
        GLOBAL_ADDRESS.new(
            {"project": gcp_project, "addressType": "EXTERNAL", "ipVersion": "IPV4"}
        ),
    )
    # The forwarding rule's targetRef resolves TargetSSLProxies only; the HTTPS proxy's
    # self link follows from the project and its name (its metadata.name).
    proxy = comp.ref(f"{name}-https-proxy")["name"]
    comp.emit(
        f"{name}-forwarding-rule",
        GLOBAL_FORWARDING_RULE.new(
            {
                "project": gcp_project,
                "loadBalancingScheme": "EXTERNAL_MANAGED",
                "ipProtocol": "TCP",
                "portRange": "443",
                "ipAddressRef": comp.ref(f"{name}-address"),
                "target": f"projects/{gcp_project}/global/targetHttpsProxies/{proxy}",
            }
        ),
        uses=[f"{name}-https-proxy", f"{name}-address"],
    )
    zone = gcp_environment(comp).cdnDomains.managedZone
    if zone:
        _records(comp, name, spec, zone)


def _records(comp: Composition, name: str, spec: CdnSpec, zone: str) -> None:
    """Each custom host's A record to the load balancer's address in the platform's Cloud DNS
    zone, once the address is known (Google allocates it)."""
    for host in spec.custom_domains:
        record = f"{name}-record-{host.replace('.', '-')}"
        address = comp.needs(f"{name}-address", "status.atProvider.address", by=record)
        if address is None:
            continue
        body: dict[str, Any] = {
            "project": project(comp),
            "managedZone": zone,
            "name": f"{host}.",
            "type": "A",
            "ttl": RECORD_TTL,
            "rrdatas": [str(address)],
        }
        comp.emit(record, RECORD_SET.new(body), uses=[f"{name}-address"])


def _api_rule(comp: Composition, spec: CdnSpec) -> list[dict[str, object]]:
    """``/api/*`` to the platform's backend service, the host rewritten to the environment's
    origin name (the ingress routes on it). A URL map routes to backend services only, and
    the pinned provider has no backend service or network endpoint group kind, so the
    platform names its own (``api.gcpBackendService``); without it a gap condition says so."""
    if not spec.api_origin:
        return []
    if not spec.api_backend:
        comp.gap(
            Gap.CDN_API,
            "Cloud CDN routes /api/* to a backend service: set environment "
            "api.gcpBackendService (an EXTERNAL_MANAGED backend service reaching the ingress)",
        )
        return []
    return [
        {
            "paths": [f"{spec.api_path.rstrip('/')}/*"],
            "service": spec.api_backend,
            "routeAction": {"urlRewrite": {"hostRewrite": spec.api_origin}},
        }
    ]


@cdn_bucket_reader.on("gcp")
def gcp_cdn_bucket_reader(comp: Composition, cdn_name: str) -> BucketReader | None:
    """Cloud CDN's fill service agent, when the environment gives the project number."""
    number = gcp_environment(comp).projectNumber
    if not number:
        comp.gap(
            Gap.CDN_PRIVATE_BUCKET_ACCESS,
            "Cloud CDN reads a private bucket through its service agent "
            "service-<project number>@cloud-cdn-fill.iam.gserviceaccount.com: set "
            "environment gcp.projectNumber; the bucket stays private meanwhile",
        )
        return None
    return BucketReader(
        name="cdn",
        principal=f"serviceAccount:service-{number}@cloud-cdn-fill.iam.gserviceaccount.com",
    )


@cdn_domain.on("gcp")
def gcp_cdn_domain(comp: Composition, cdn_name: str, spec: CdnSpec) -> str | None:
    """The first host of the current managed certificate (:func:`certificate_name`), once the
    forwarding rule is Ready; None while no CDN is composed (no host: see :func:`cdn`)."""
    hosts = _hosts(spec)
    if not hosts or not comp.is_ready(f"{cdn_name}-forwarding-rule"):
        return None
    return hosts[0]


@cdn_custom_domains.on("gcp")
def gcp_cdn_custom_domains(
    comp: Composition, cdn_name: str, spec: CdnSpec
) -> tuple[CdnCustomDomain, ...]:
    """A host is served once its certificate is issued and the forwarding rule is Ready (and,
    with a managed zone, its A record is Ready). Without a zone: an A record to the address,
    for the platform to create."""
    zone = gcp_environment(comp).cdnDomains.managedZone
    hosts = spec.custom_domains
    issued = bool(
        _hosts(spec) and comp.observed_value(certificate_name(cdn_name, spec), ISSUED_FIELD)
    )
    serving = issued and comp.is_ready(f"{cdn_name}-forwarding-rule")
    address = comp.observed_value(f"{cdn_name}-address", "status.atProvider.address")
    domains = []
    for host in hosts:
        if zone:
            record = f"{cdn_name}-record-{host.replace('.', '-')}"
            domains.append(CdnCustomDomain(host, serving and comp.is_ready(record)))
        else:
            records = (DnsRecord(host, "A", str(address)),) if address else ()
            domains.append(CdnCustomDomain(host, serving, records))
    return tuple(domains)
