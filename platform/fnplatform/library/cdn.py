"""A CDN in front of a private bucket: spec, call and values.

A cloud registers its builder with ``@add_<capability>.on("<cloud>")`` and its answers with
``@<value>.on("<cloud>")`` in ``clouds/<cloud>/cdn.py``, the home each object declares.
"""

from __future__ import annotations

from dataclasses import dataclass

from fnplatform.library.bucket import BucketReader
from fnplatform.library.capability import Capability, Value


@dataclass(frozen=True)
class CdnPath:
    """One cache path: requests under ``path`` (``/checkout``) are cached as their own route."""

    name: str
    path: str


@dataclass(frozen=True)
class CdnSpec:
    """A CDN serving the private bucket composed as ``bucket`` (``bucket_name`` in the cloud).

    The bucket stays private: the CDN reads it as a named reader (AWS origin access control,
    GCP private bucket access, Azure Front Door private link). ``hostname`` is the public
    name where a cloud needs one for its certificate (GCP's managed certificate).
    """

    bucket: str  # composition name of the bucket
    bucket_name: str
    paths: tuple[CdnPath, ...] = ()
    hostname: str | None = None
    root_object: str = "index.html"
    #: The backend's HTTPS origin host (the platform's ingress, reached by this name): when
    #: set, ``api_path/*`` is forwarded there uncached with every method.
    api_origin: str | None = None
    api_path: str = "/api"
    #: GCP: the global backend service (self link) reaching the platform's ingress; a URL
    #: map routes to backend services, not host names.
    api_backend: str | None = None
    #: The users' own host names (``shop.example.com``): the CDN serves them too, each with a
    #: certificate the cloud issues once DNS proves the domain (see :class:`CdnCustomDomain`).
    custom_domains: tuple[str, ...] = ()


@dataclass(frozen=True)
class DnsRecord:
    """A DNS record someone must create: ``name`` fully qualified, no trailing dot."""

    name: str
    type: str  # CNAME, TXT, A
    value: str


@dataclass(frozen=True)
class CdnCustomDomain:
    """One custom host of a CDN, from observed state.

    ``ready``: the CDN serves the host with an issued certificate. ``records``: what the
    platform must still create in its own DNS because it named no zone the cloud may write
    (certificate validation, the host pointing at the CDN); empty when they are composed.
    """

    host: str
    ready: bool
    records: tuple[DnsRecord, ...] = ()


add_cdn = Capability[CdnSpec](
    "cdn",
    "A CDN in front of a private bucket, one cache path each.",
    home="cdn",
)


cdn_bucket_reader = Value[[str], BucketReader | None](
    "cdn_bucket_reader", "Who the CDN ``name`` reads the bucket as, once known.", home="cdn"
)


cdn_domain = Value[[str, CdnSpec], str | None](
    "cdn_domain", "The CDN's public domain, once observed.", home="cdn"
)


cdn_custom_domains = Value[[str, CdnSpec], tuple[CdnCustomDomain, ...]](
    "cdn_custom_domains",
    "Each custom host of the CDN ``name`` (CdnSpec.custom_domains): served yet, and the DNS "
    "records still to create.",
    home="cdn",
)
