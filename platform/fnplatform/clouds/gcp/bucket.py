"""GCP bucket: one Cloud Storage bucket carries every setting itself.

``<name>`` is the ``Bucket``: uniform bucket-level access (no ACLs) and public access
prevention ``enforced``, a default CMEK (``encryption.defaultKmsKeyName``: the composed key,
which must allow the project's Cloud Storage service agent, see :mod:`.key`), versioning, a
retention policy for ``retention_days`` (locked with ``lock``: irreversible, the bucket can
then only be deleted once every object has aged out), lifecycle rules that never delete before
the retention ends, and usage logs into ``<name>-logs`` (a second bucket; the Cloud Storage
analytics group gets object-create on it, ``<name>-logs-writer``). Readers get
``roles/storage.objectViewer`` (``<name>-reader-<reader>``), writers objectCreator.

A bucket keeping a copy in ``geo_replica_region`` is a dual-region bucket (:mod:`.dual_region`):
Cloud Storage replicates it itself, under its one retention policy, default key and labels.
Its key ring is in the location Cloud Storage requires for that dual-region's key
(:func:`.key.key_location`), its log bucket is the same dual-region under the same key. A
location is fixed at creation, so a bucket that exists keeps the one it has (:func:`_placement`).

Gaps (conditions, not silent): a bucket with a retention policy cannot have Object Versioning,
so versioning is off while a retention policy holds every object; and Cloud Storage has no
bucket setting that refuses plain-HTTP or older-TLS requests (no bucket policy, no IAM
condition attribute for it), so TLS in transit cannot be enforced per bucket.
"""

from __future__ import annotations

from typing import Any

from fnplatform.clouds.gcp import kinds
from fnplatform.clouds.gcp.common import project
from fnplatform.clouds.gcp.dual_region import PREDEFINED, DualRegion, dual_region
from fnplatform.clouds.gcp.key import crypto_key_id, key_location
from fnplatform.composition import Composition
from fnplatform.errors import SpecError
from fnplatform.gaps import Gap
from fnplatform.library.bucket import (
    BucketAddress,
    BucketPart,
    BucketReader,
    BucketSpec,
    add_bucket,
    bucket_address,
    bucket_name_from,
    bucket_name_rule,
    bucket_parts,
)
from fnplatform.library.rules import NameRule, check_name
from fnplatform.naming import dns_label

BUCKET_NAME_RULE = NameRule(
    pattern=r"(?!goog)(?!.*google)[a-z0-9][a-z0-9_.-]*[a-z0-9]",
    min_length=3,
    max_length=63,
    description="3-63 lowercase letters, digits, '-', '_' and '.', starting and ending with a "
    "letter or digit, without 'goog' prefix or 'google' (Cloud Storage naming rules)",
)
#: Who writes Cloud Storage usage and storage logs into a log bucket.
ANALYTICS_GROUP = "group:cloud-storage-analytics@google.com"
ACCESS_LOG_DAYS = 365
DAY_SECONDS = 86400


@bucket_name_rule.on("gcp")
def gcp_bucket_name_rule(comp: Composition) -> NameRule:
    """What Cloud Storage accepts as a bucket name."""
    return BUCKET_NAME_RULE


@bucket_name_from.on("gcp")
def gcp_bucket_name_from(comp: Composition, wanted: str) -> str:
    """Cloud Storage takes a composer's hyphenated name as is (the builder checks it)."""
    return wanted


def bucket_name(comp: Composition, name: str, spec: BucketSpec | None = None) -> str:
    """The Cloud Storage name of composed bucket ``name``: the spec's, else the one the
    existing bucket has, else derived from the composite's
    :attr:`~Composition.global_name_base` (bucket names are global)."""
    if spec is not None and spec.bucket_name:
        return spec.bucket_name
    return comp.global_name(name, lambda base: _not_goog(dns_label(base, name)))


def _not_goog(name: str) -> str:
    """Cloud Storage refuses names starting with ``goog``: such a name gets ``x-`` first."""
    return name if not name.startswith("goog") else f"x-{name}"


@bucket_address.on("gcp")
def gcp_bucket_address(comp: Composition, name: str, wanted: str | None) -> BucketAddress:
    """Name and id (``gs://`` URL) of composed bucket ``name``."""
    bucket = wanted or bucket_name(comp, name)
    return {"name": bucket, "id": f"gs://{bucket}"}


@add_bucket.on("gcp")
def bucket(comp: Composition, name: str, spec: BucketSpec) -> None:
    """Bucket ``name`` (see the module docstring), its log bucket and reader grants."""
    spec.check_retention()
    gcs_name = check_name(BUCKET_NAME_RULE, bucket_name(comp, name, spec), "bucket_name")
    region = spec.region or comp.region
    retention = spec.retention_days
    versioning = spec.versioning and not retention
    if spec.versioning and retention:
        comp.gap(
            Gap.BUCKET_VERSIONING,
            f"Cloud Storage bucket {gcs_name}: Object Versioning "
            "cannot be combined with a retention policy; the retention policy keeps every "
            f"object unmodifiable for {retention} days instead",
        )
    comp.gap(
        Gap.BUCKET_MIN_TLS,
        f"Cloud Storage bucket {gcs_name}: Cloud Storage has no "
        "bucket setting (policy, IAM condition) that refuses plain-HTTP or older-TLS "
        f"requests; TLS {spec.min_tls}+ in transit is not enforced per bucket",
    )
    body: dict[str, Any] = {
        "project": project(comp),
        **_placement(comp, name, gcs_name, spec, region),
        "storageClass": "STANDARD",
        "uniformBucketLevelAccess": True,
        "publicAccessPrevention": "enforced",
        "forceDestroy": spec.force_destroy,
        "versioning": {"enabled": versioning},
        "lifecycleRule": _lifecycle_rules(spec, versioning),
    }
    if spec.key is not None:
        body["encryption"] = {
            "defaultKmsKeyName": crypto_key_id(  # where the data is
                comp, spec.key, key_location(comp, spec.key, region, spec.geo_replica_region)
            )
        }
    if retention:
        body["retentionPolicy"] = {
            "retentionPeriod": retention * DAY_SECONDS,
            "isLocked": spec.lock,
        }
    uses: tuple[str, ...] = ()
    if spec.key is not None:
        uses = (f"{spec.key}-storage-grant",)  # the service agent must be able to use the key
    if spec.access_logging:
        logs = f"{name}-logs"
        log_spec = BucketSpec(
            bucket_name=dns_label(gcs_name, "logs"),
            key=spec.key,
            region=spec.region,
            geo_replica_region=spec.geo_replica_region,  # where its key can encrypt it
            expire_after_days=ACCESS_LOG_DAYS,
            versioning=False,
            readers=(BucketReader("usage-logs", ANALYTICS_GROUP, write=True),),
        )
        bucket(comp, logs, log_spec)
        body["logging"] = {
            "logBucket": bucket_name(comp, logs, log_spec),
            "logObjectPrefix": gcs_name,
        }
        uses = (*uses, f"{logs}-reader-usage-logs")
    comp.emit(name, {**kinds.BUCKET.new(body), "metadata": {"name": gcs_name}}, uses=uses)
    for reader in sorted(spec.readers, key=lambda reader: reader.name):
        comp.emit(
            f"{name}-reader-{reader.name}",
            kinds.BUCKET_IAM_MEMBER.new(
                {
                    "bucketRef": comp.ref(name),
                    "role": "roles/storage.objectCreator"
                    if reader.write
                    else "roles/storage.objectViewer",
                    "member": reader.principal,
                }
            ),
            uses=(name,),
        )
    if spec.replicate_to:
        comp.gap(
            Gap.BUCKET_REPLICATION,
            "Cloud Storage replicates within a dual- or "
            "multi-region location, not to a second bucket: no replication composed",
        )


def _placement(
    comp: Composition,
    name: str,
    gcs_name: str,
    spec: BucketSpec,
    region: str,
) -> dict[str, Any]:
    """The bucket's location fields: ``region``, or the dual-region of ``region`` and
    ``spec.geo_replica_region`` (``location``, ``customPlacementConfig``, ``rpo``).

    The location is fixed at creation (replacing a bucket deletes its objects, and a locked one
    cannot be deleted at all), so a bucket that exists keeps its own: one created in a single
    region stays there, with the ``bucket-replication`` gap saying why there is no copy; a
    dual-region one cannot be told to copy elsewhere (a SpecError on ``geo_replica_region``).
    A new bucket is dual-region where the pair is one with a documented key location and its
    key ring is (or will be) there; else single-region, with the gap naming why. Whatever the
    spec, an existing bucket's ``location`` is the one it has.
    """
    existing = _existing_placement(comp, name)
    # the API reports locations upper-case; an existing bucket's own location, whatever it is
    single: dict[str, Any] = {"location": existing[0] if existing else region.upper()}
    copy = spec.geo_replica_region
    if existing is not None and _is_dual(*existing):
        wanted = dual_region(region, copy) if copy is not None else None
        if not isinstance(wanted, DualRegion) or _where(wanted) != existing:
            raise SpecError(
                "geo_replica_region",
                f"Cloud Storage bucket {gcs_name} is the "
                f"dual-region {_describe(*existing)}, fixed at creation: its copy "
                "cannot move or go (a new bucket would replace the recordings); "
                "keep the copy region as it is",
            )
        return _fields(wanted)
    if copy is None:
        return single
    placed = dual_region(region, copy)
    if isinstance(placed, str):
        _no_copy(comp, f"Cloud Storage bucket {gcs_name}: {placed}; no copy in {copy}")
        return single
    if existing is not None:
        _no_copy(
            comp,
            f"Cloud Storage bucket {gcs_name} exists in "
            f"{existing[0]} alone: a bucket's location is fixed at creation and replacing "
            f"it would delete its objects (under a locked retention policy it cannot be "
            f"deleted at all), so it stays single-region with no copy in {copy}; a new "
            f"endpoint gets the dual-region {_describe(*_where(placed))}",
        )
        return single
    key = (
        key_location(comp, spec.key, region, copy) if spec.key is not None else placed.key_location
    )
    if key != placed.key_location:
        _no_copy(
            comp,
            f"Cloud Storage bucket {gcs_name}: its key ring exists "
            f"in {key}, and Cloud KMS never moves a key ring; a dual-region "
            f"{_describe(*_where(placed))} bucket needs its key in "
            f"{placed.key_location}: no copy in {copy}",
        )
        return single
    return _fields(placed)


def _no_copy(comp: Composition, message: str) -> None:
    """The ``bucket-replication`` gap, each bucket's reason kept (a log bucket's too)."""
    previous = comp.notes.gaps.get(Gap.BUCKET_REPLICATION)
    comp.gap(Gap.BUCKET_REPLICATION, f"{previous}; {message}" if previous else message)


def _fields(placed: DualRegion) -> dict[str, Any]:
    """A dual-region bucket's location fields; replication at the default RPO (turbo
    replication, ``ASYNC_TURBO``, is a premium the module does not buy, as S3 replication
    here runs without Replication Time Control)."""
    fields: dict[str, Any] = {"location": placed.location}
    if placed.data_locations:
        fields["customPlacementConfig"] = {"dataLocations": list(placed.data_locations)}
    fields["rpo"] = "DEFAULT"
    return fields


def _existing_placement(comp: Composition, name: str) -> tuple[str, tuple[str, ...]] | None:
    """The location and data locations bucket ``name`` exists with, None while it doesn't."""
    location = comp.observed_string(name, "spec.forProvider.location")
    if location is None:
        return None
    data = comp.observed_value(name, "spec.forProvider.customPlacementConfig.dataLocations")
    locations = tuple(sorted(str(r).upper() for r in data)) if isinstance(data, list) else ()
    return location.upper(), locations


def _where(placed: DualRegion) -> tuple[str, tuple[str, ...]]:
    """A dual-region's location and data locations, as :func:`_existing_placement` says them."""
    return placed.location, placed.data_locations


def _is_dual(location: str, data: tuple[str, ...]) -> bool:
    """A configurable dual-region (its data locations) or a predefined one (its code)."""
    return bool(data) or location in PREDEFINED.values()


def _describe(location: str, data: tuple[str, ...]) -> str:
    """``US (US-EAST1+US-WEST1)``, or a predefined dual-region's code alone."""
    return f"{location} ({'+'.join(data)})" if data else location


def _lifecycle_rules(spec: BucketSpec, versioning: bool) -> list[dict[str, Any]]:
    rules: list[dict[str, Any]] = [
        {
            "action": {"type": "AbortIncompleteMultipartUpload"},
            "condition": {"age": 7},
        }
    ]
    noncurrent = spec.noncurrent_expire_after_days or spec.retention_days
    if versioning and noncurrent:
        rules.append(
            {
                "action": {"type": "Delete"},
                "condition": {"daysSinceNoncurrentTime": noncurrent, "withState": "ARCHIVED"},
            }
        )
    if spec.expire_after_days:
        rules.append(
            {
                "action": {"type": "Delete"},
                "condition": {"age": spec.expire_after_days, "withState": "LIVE"},
            }
        )
    return rules


@bucket_parts.on("gcp")
def gcp_bucket_parts(comp: Composition, name: str, part: BucketPart) -> tuple[str, ...]:
    """What of bucket ``name`` does ``part`` (the composer vouches for it by these names):
    the bucket's default KMS key, public access prevention, versioning, lifecycle rules
    and locked retention policy are all on the bucket; no TLS minimum (a gap); the bucket's
    logging and the log bucket; a dual-region bucket keeps its own copy."""
    return {
        BucketPart.ENCRYPTION: (),
        BucketPart.NEVER_PUBLIC: (name,),
        BucketPart.TLS: (),
        BucketPart.VERSIONING: (name,),
        BucketPart.LIFECYCLE: (name,),
        BucketPart.LOCK: (name,),
        BucketPart.ACCESS_LOGGING: (name, f"{name}-logs", f"{name}-logs-*"),
        BucketPart.GEO_REPLICATION: (name,),
        BucketPart.REPLICATION: (),
    }[part]
