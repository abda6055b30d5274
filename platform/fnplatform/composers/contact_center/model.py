"""The contact-center endpoint's spec and status, as the user writes and reads them.

One model is the source of the XRD (``api.py``) and of the composer's validation, so the API
server and the function agree on what a valid endpoint is. Rules that span fields (trusted
ranges never the whole internet, ports that don't overlap, PCI-DSS storage) live in
``rules.py``, where each error names the field and index the user wrote; those that need
only the claim and fit CEL are declared here as claim rules (``fnplatform.api.xrd.ClaimRule``), so
the API server refuses them at admission with the message the function gives.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from fnplatform.api.validation import RECORD_NAME, Cidr, describe_pattern
from fnplatform.api.xrd import ClaimRule, claim_rule, differs
from fnplatform.cloud import Cloud

Platform = Literal["genesys-cloud", "nice-cxone"]
PORT_RANGE = describe_pattern(
    r"^[0-9]{1,5}(-[0-9]{1,5})?$", "a port or a port range such as 5060 or 5060-5080"
)
IPV4_CIDR = describe_pattern(
    r"^([0-9]{1,3}\.){3}[0-9]{1,3}/[0-9]{1,2}$", "an IPv4 range such as 10.60.0.0/16"
)
HTTP_PATH = describe_pattern(r"^/[^\s]*$", "an absolute HTTP path without spaces, such as /health")


class TaggingPolicy(BaseModel):
    """Who pays and which regime applies: carried by every taggable resource."""

    model_config = ConfigDict(extra="forbid")

    costCenter: str = Field(min_length=1, max_length=128)
    #: PCI-DSS: compliance-mode object lock, access logging and a lock-bound lifecycle.
    #: HIPAA: the same lock and logging, and at least six years of retention. SOC2: access
    #: logging. GDPR: recordings, replicas and failover stay in EU/EEA regions.
    complianceLevel: Literal["PCI-DSS", "HIPAA", "SOC2", "GDPR", "none"]


class NetworkSettings(BaseModel):
    """The endpoint's private network."""

    model_config = ConfigDict(extra="forbid")

    cidr: Cidr = Field("10.60.0.0/16", pattern=IPV4_CIDR)


class SipSettings(BaseModel):
    """Who may reach the SIP signaling and RTP media ports."""

    model_config = ConfigDict(extra="forbid")

    #: The carriers' and platform's SBC ranges; never 0.0.0.0/0 or ::/0.
    trustedCidrs: list[str] = Field(min_length=1, max_length=50)
    #: SIP over UDP and TCP/TLS (5060 plain, 5061 TLS; the seed's range covers both).
    signalingPorts: str = Field("5060-5080", pattern=PORT_RANGE)
    #: RTP/SRTP media over UDP.
    mediaPorts: str = Field("16384-32767", pattern=PORT_RANGE)


class RecordingSettings(BaseModel):
    """Call-recording storage."""

    model_config = ConfigDict(extra="forbid")

    retentionDays: int = Field(365, ge=1, le=36500)
    #: Hold recordings unmodifiable (compliance mode) for retentionDays; PCI-DSS requires it.
    objectLock: bool | None = None  # unset: on for PCI-DSS, off otherwise
    #: A second region holding a replica of every recording (AWS; a condition elsewhere).
    replicationRegion: str | None = Field(None, min_length=1)


class FailoverDns(BaseModel):
    """Which DNS name fails over: AWS hosted zone id, GCP managed zone name, Azure relative name."""

    model_config = ConfigDict(extra="forbid")

    zone: str = Field(min_length=1, max_length=128)
    recordName: str = Field(pattern=RECORD_NAME, max_length=253)


class FailoverPolicy(BaseModel):
    """A secondary region and the DNS name that moves to it when the primary is unhealthy."""

    model_config = ConfigDict(extra="forbid")

    secondaryRegion: str = Field(min_length=1)
    healthCheckPath: str = Field("/health", pattern=HTTP_PATH, max_length=255)
    dns: FailoverDns
    #: What the health check probes and the records point at (host names or IPv4 addresses).
    primaryTarget: str = Field(min_length=1, max_length=253)
    secondaryTarget: str = Field(min_length=1, max_length=253)
    #: The secondary site's network in secondaryRegion (same trusted ranges and ports). Must
    #: not overlap network.cidr; unset: the sibling block of network.cidr (10.60.0.0/16 ->
    #: 10.61.0.0/16), so the two sites can be peered or routed between later.
    networkCidr: Cidr | None = Field(None, pattern=IPV4_CIDR)
    #: How DNS chooses between the two sites: failover (the primary while healthy, then the
    #: secondary) or latency (the healthy site nearer the caller: Route 53 latency records,
    #: Traffic Manager Performance routing; GCP answers by the nearer region, see the docs).
    routing: Literal["failover", "latency"] = "failover"


#: Compliance levels whose recordings are held under a compliance-mode lock (and logged).
LOCKED_LEVELS = ("PCI-DSS", "HIPAA")
#: HIPAA keeps required documentation six years (45 CFR 164.316(b)(2)(i)).
HIPAA_RETENTION_DAYS = 6 * 365
_LEVEL = "has(self.taggingPolicy) && has(self.taggingPolicy.complianceLevel)"


class ContactCenterSpec(BaseModel):
    """``spec`` of a ContactCenterEndpoint."""

    model_config = ConfigDict(extra="forbid")

    cloud: Cloud
    region: str = Field(min_length=1, max_length=64)
    platform: Platform
    #: TLS standard for SIP signaling.
    encryptionStandard: Literal["TLS1.2", "TLS1.3"] = "TLS1.2"
    taggingPolicy: TaggingPolicy
    network: NetworkSettings = Field(default_factory=NetworkSettings)
    sip: SipSettings
    recording: RecordingSettings = Field(default_factory=RecordingSettings)
    failoverPolicy: FailoverPolicy | None = None

    _failover_region = differs("failoverPolicy.secondaryRegion", "region")
    _replication_region = differs("recording.replicationRegion", "region")
    _locked = claim_rule(
        ClaimRule(
            "recording.objectLock",
            "must not be false for PCI-DSS and HIPAA (taggingPolicy.complianceLevel): their "
            "recordings are held under a compliance-mode object lock; remove objectLock or set "
            "it true",
            f"!({_LEVEL} && self.taggingPolicy.complianceLevel in {list(LOCKED_LEVELS)!r} && "
            "has(self.recording) && has(self.recording.objectLock) && "
            "!self.recording.objectLock)",
            lambda spec: (
                not (
                    spec.taggingPolicy.complianceLevel in LOCKED_LEVELS
                    and spec.recording.objectLock is False
                )
            ),
        )
    )
    _hipaa_retention = claim_rule(
        ClaimRule(
            "recording.retentionDays",
            f"must be at least {HIPAA_RETENTION_DAYS} for HIPAA (taggingPolicy.complianceLevel): "
            "HIPAA keeps records at least six years",
            f"!({_LEVEL} && self.taggingPolicy.complianceLevel == 'HIPAA') || "
            "(has(self.recording) && has(self.recording.retentionDays) ? "
            "self.recording.retentionDays : "
            f"{RecordingSettings.model_fields['retentionDays'].default}"
            f") >= {HIPAA_RETENTION_DAYS}",
            lambda spec: (
                spec.taggingPolicy.complianceLevel != "HIPAA"
                or spec.recording.retentionDays >= HIPAA_RETENTION_DAYS
            ),
        )
    )


class BucketStatus(BaseModel):
    """Where recordings go."""

    name: str | None = None
    id: str | None = None  # S3 ARN, gs:// URL, Azure storage account resource id


class EndpointsStatus(BaseModel):
    """What agents and trunks connect to."""

    primary: str | None = None
    secondary: str | None = None
    dns: str | None = None
    routing: str | None = None  # failover or latency: how dns chooses between the two


class SiteStatus(BaseModel):
    """The secondary site failover moves to: where the user's secondary SBC runs."""

    region: str | None = None
    networkId: str | None = None
    securityGroupId: str | None = None


class ContactCenterStatus(BaseModel):
    """``status`` of a ContactCenterEndpoint."""

    cloud: str | None = None
    region: str | None = None
    networkId: str | None = None
    securityGroupId: str | None = None
    recordingBucket: BucketStatus | None = None
    replicaBucket: BucketStatus | None = None
    #: Where the recordings' own storage keeps a copy of every recording (Azure: the pair
    #: region of the geo-redundant account; AWS reports its replica in replicaBucket).
    replicaRegion: str | None = None
    kmsKeyId: str | None = None
    endpoints: EndpointsStatus | None = None
    secondarySite: SiteStatus | None = None
    #: The compliance lock once recordings are held under it: it can be extended, never
    #: shortened or lifted (S3 object lock, locked GCS retention, locked Azure WORM).
    lockedRetentionDays: int | None = None
    controls: list[str] | None = None
