"""What a cloud can't provide, by name: the features ``Composition.gap`` reports.

A builder that can't provide a feature on its cloud says so with ``comp.gap(Gap.X, why)``,
and the runner names each in the ``CapabilitiesAvailable=False`` condition. A composer reads
them back (contact-center's compliance controls): one enum, so a name a builder reports and a
name a composer checks are the same object, and a name nobody reports can't be checked for.
"""

from __future__ import annotations

from enum import StrEnum


class Gap(StrEnum):
    """A feature a cloud can't provide; the value is what the condition says."""

    BUCKET_MIN_TLS = "bucket-min-tls"
    BUCKET_REPLICATION = "bucket-replication"
    BUCKET_VERSIONING = "bucket-versioning"
    CDN = "cdn"
    CDN_API = "cdn-api"
    CDN_PRIVATE_BUCKET_ACCESS = "cdn-private-bucket-access"
    CDN_PRIVATE_LINK_APPROVAL = "cdn-private-link-approval"
    FAILOVER_DNS = "failover-dns"
    LATENCY_ROUTING = "latency-routing"
    RECORDING_REPLICATION = "recording-replication"
