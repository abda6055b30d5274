"""A bucket: its spec, the call composing it, and the values each cloud answers about it.

A cloud registers its builder with ``@add_<capability>.on("<cloud>")`` and its answers with
``@<value>.on("<cloud>")`` in ``clouds/<cloud>/bucket.py``, the home each object declares.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import TypedDict

from fnplatform.errors import SpecError
from fnplatform.library.capability import Capability, Flag, Value
from fnplatform.library.rules import NameRule


@dataclass(frozen=True)
class BucketReader:
    """Someone named as allowed to read (or, with ``write``, deliver) the bucket's objects.

    ``principal`` is in the cloud's own form: AWS a service principal
    (``cloudfront.amazonaws.com``) or an IAM role ARN; GCP an IAM member
    (``serviceAccount:...``); Azure a principal (object) id. ``source`` narrows a service
    principal to one resource acting through it (AWS ``aws:SourceArn``, e.g. a CloudFront
    distribution ARN).
    """

    name: str  # unique within the bucket: the policy statement id / helper resource suffix
    principal: str
    source: str | None = None
    write: bool = False


@dataclass(frozen=True)
class BucketReplica:
    """The composed bucket a bucket replicates to, with what replication needs of it: what
    its own :class:`BucketSpec` said (region, key, name), so the builder never reads its body."""

    bucket: str  # composition name of the destination bucket
    region: str
    key: str | None = None  # composition name of the key encrypting it
    bucket_name: str | None = None  # its BucketSpec.bucket_name


@dataclass(frozen=True)
class BucketSpec:
    """An object store that is never public, versioned, TLS-only, encrypted with ``key``.

    ``key`` names the composed :class:`KeySpec` key; None means the cloud's own managed
    encryption (only for buckets a service writes into that can't use a customer key, such as
    AWS server access logs). ``retention_days`` with ``lock`` holds every object version in
    compliance mode (nobody can delete it early, not even the account root); lifecycle
    expiration never comes before the lock ends. ``replica_of`` makes this bucket the
    replication destination of another composed bucket.
    """

    bucket_name: str | None = None  # None: derived from the composite and composition name
    key: str | None = None
    versioning: bool = True
    retention_days: int | None = None
    lock: bool = False  # compliance-mode object lock / locked retention policy / locked WORM
    access_logging: bool = False
    expire_after_days: int | None = None  # current versions; must be >= retention_days
    noncurrent_expire_after_days: int | None = None
    readers: tuple[BucketReader, ...] = ()
    replicate_to: BucketReplica | None = None  # the destination bucket (AWS)
    #: A second region holding a copy of every object, replicated by the storage service
    #: inside this bucket (Azure geo-redundant accounts, to the region's pair; GCP dual-region
    #: buckets): the same lock, key and settings, no second bucket. Where the cloud replicates
    #: only to another bucket (``bucket_replication``), ``replicate_to`` is used instead.
    #: Its key is given the same region (:attr:`KeySpec.geo_replica_region`).
    geo_replica_region: str | None = None
    region: str | None = None  # None: the placed region
    min_tls: str = "1.2"
    #: Deleting the bucket deletes its objects (and versions) first; else a bucket holding
    #: objects cannot be deleted, and neither can its claim (S3, GCS).
    force_destroy: bool = False

    def check_retention(self) -> None:
        """The rule every cloud shares: a lock needs a retention, and no lifecycle expiry may
        end before it (it would delete what the lock promises to keep)."""
        retention = self.retention_days or 0
        if self.lock and not self.retention_days:
            raise SpecError("retention_days", "required with a lock: how long to hold")
        for attribute in ("expire_after_days", "noncurrent_expire_after_days"):
            days = getattr(self, attribute)
            if days is not None and days < retention:
                raise SpecError(
                    attribute,
                    f"{days} days would expire objects before the {retention}-day retention ends",
                )


class BucketPart(StrEnum):
    """What a bucket does that a composer vouches for (a compliance condition): each cloud says
    which of the resources its bucket builder emits do it (``bucket_parts``)."""

    #: encryption with the spec's key, besides the bucket itself and the key's own resources
    ENCRYPTION = "encryption"
    NEVER_PUBLIC = "never-public"
    #: a minimum TLS version in transit (none where the cloud cannot: a gap)
    TLS = "tls"
    VERSIONING = "versioning"
    LIFECYCLE = "lifecycle"
    LOCK = "lock"
    ACCESS_LOGGING = "access-logging"
    #: the copy kept by the storage service itself (BucketSpec.geo_replica_region)
    GEO_REPLICATION = "geo-replication"
    #: the replication to another bucket (BucketSpec.replicate_to), besides that bucket
    REPLICATION = "replication"


class BucketAddress(TypedDict):
    """How others name a composed bucket: its cloud name, and its id once the cloud has one."""

    name: str
    id: str | None


add_bucket = Capability[BucketSpec](
    "bucket",
    "A never-public, versioned, TLS-only bucket encrypted with a composed key.",
    home="bucket",
)


bucket_name_rule = Value[[], NameRule](
    "bucket_name_rule", "What the cloud accepts as a bucket name.", home="bucket"
)


bucket_name_from = Value[[str], str](
    "bucket_name_from",
    "The cloud's bucket name for a composer's wanted ``<prefix>-<app>``.",
    home="bucket",
)


#: Called with the bucket's :attr:`BucketSpec.bucket_name` (None: derived), so the address
#: follows from the same arguments the builder had, never from what it emitted.
bucket_address = Value[[str, str | None], BucketAddress](
    "bucket_address",
    "Name and (once known) id of composed bucket ``name`` (its BucketSpec.bucket_name).",
    home="bucket",
)


bucket_parts = Value[[str, BucketPart], tuple[str, ...]](
    "bucket_parts",
    "The composition names (``<prefix>*``: all of that prefix) of the resources of bucket "
    "``name`` doing ``part``, as the bucket builder emits them.",
    home="bucket",
)


#: Deleting the bucket deletes its objects with it, no ``force_destroy`` asked (an Azure
#: storage account goes with its blobs); else a bucket is deleted only once empty.
bucket_deleted_with_objects = Flag(
    "bucket_deleted_with_objects",
    "Deleting the bucket deletes the objects in it.",
    home="bucket",
)
