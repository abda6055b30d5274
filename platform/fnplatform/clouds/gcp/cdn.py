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

A managed certificate needs a hostname (``environment.frontend.domain``); without one there is
nothing to serve HTTPS on, so nothing is composed and a gap condition says why. One path rule
per micro-frontend (``/checkout/*``).
"""

from __future__ import annotations

from fnplatform.clouds.gcp.common import project
from fnplatform.clouds.gcp.kinds import (
    BACKEND_BUCKET,
    GLOBAL_ADDRESS,
    GLOBAL_FORWARDING_RULE,
    MANAGED_SSL_CERTIFICATE,
    TARGET_HTTPS_PROXY,
    URL_MAP,
)
from fnplatform.clouds.gcp.settings import gcp_environment
from fnplatform.composition import Composition
from fnplatform.library import values
from fnplatform.library.calls import add_cdn
from fnplatform.library.specs import BucketReader, CdnSpec

PATH_MATCHER = "micro-frontends"


@add_cdn.on("gcp")
def cdn(comp: Composition, name: str, spec: CdnSpec) -> None:
    """A URL map with one path rule per micro-frontend, served over HTTPS from Cloud CDN."""
    if not spec.hostname:
        comp.gap(
            "cdn",
            "Cloud CDN needs a hostname for its managed certificate: set "
            "environment frontend.domain; no CDN is composed until then",
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
                "hostRule": [{"hosts": [spec.hostname], "pathMatcher": PATH_MATCHER}],
                "pathMatcher": [
                    {
                        "name": PATH_MATCHER,
                        "defaultServiceRef": backend,
                        "pathRule": [
                            *_api_rule(comp, spec),
                            *({"paths": [f"{path.path.rstrip('/')}/*"], "serviceRef": backend}
                              for path in spec.paths),
                        ],
                    }
                ],
            }
        ),
        uses=[f"{name}-backend"],
    )
    comp.emit(
        f"{name}-certificate",
        MANAGED_SSL_CERTIFICATE.new(
            {"project": gcp_project, "type": "MANAGED", "managed": {"domains": [spec.hostname]}}
        ),
    )
    comp.emit(
        f"{name}-https-proxy",
        TARGET_HTTPS_PROXY.new(
            {
                "project": gcp_project,
                "urlMapRef": comp.ref(name),
                "sslCertificatesRefs": [comp.ref(f"{name}-certificate")],
            }
        ),
        uses=[name, f"{name}-certificate"],
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


def _api_rule(comp: Composition, spec: CdnSpec) -> list[dict[str, object]]:
    """``/api/*`` to the platform's backend service, the host rewritten to the environment's
    origin name (the ingress routes on it). A URL map routes to backend services only, and
    the pinned provider has no backend service or network endpoint group kind, so the
    platform names its own (``api.gcpBackendService``); without it a gap condition says so."""
    if not spec.api_origin:
        return []
    if not spec.api_backend:
        comp.gap(
            "cdn-api",
            "Cloud CDN routes /api/* to a backend service: set environment "
            "api.gcpBackendService (an EXTERNAL_MANAGED backend service reaching the ingress)",
        )
        return []
    return [{
        "paths": [f"{spec.api_path.rstrip('/')}/*"],
        "service": spec.api_backend,
        "routeAction": {"urlRewrite": {"hostRewrite": spec.api_origin}},
    }]


@values.cdn_bucket_reader.on("gcp")
def cdn_bucket_reader(comp: Composition, cdn_name: str) -> BucketReader | None:
    """Cloud CDN's fill service agent, when the environment gives the project number."""
    number = gcp_environment(comp).projectNumber
    if not number:
        comp.gap(
            "cdn-private-bucket-access",
            "Cloud CDN reads a private bucket through its service agent "
            "service-<project number>@cloud-cdn-fill.iam.gserviceaccount.com: set "
            "environment gcp.projectNumber; the bucket stays private meanwhile",
        )
        return None
    return BucketReader(
        name="cdn",
        principal=f"serviceAccount:service-{number}@cloud-cdn-fill.iam.gserviceaccount.com",
    )


@values.cdn_domain.on("gcp")
def cdn_domain(comp: Composition, cdn_name: str) -> str | None:
    """The hostname the managed certificate serves, once the forwarding rule is Ready."""
    certificate = comp.desired.get(f"{cdn_name}-certificate")
    if certificate is None or not comp.is_ready(f"{cdn_name}-forwarding-rule"):
        return None
    return str(certificate.body["spec"]["forProvider"]["managed"]["domains"][0])
