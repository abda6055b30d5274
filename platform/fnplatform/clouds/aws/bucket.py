"""AWS bucket: an S3 bucket and the separate resources S3 configures it with.

Since AWS provider v4 every bucket setting is its own resource; each is composed here as
``<name>-<part>`` and points at the bucket with ``bucketRef``:

* ``<name>`` Bucket (``objectLockEnabled`` when locked: object lock can only be turned on when
  the bucket is created, and never off again);
* ``-versioning`` (Enabled), ``-encryption`` (SSE-KMS with the composed key and an S3 Bucket
  Key, or SSE-S3 without a key), ``-public-access-block`` (all four blocks),
  ``-ownership`` (BucketOwnerEnforced: ACLs off, the bucket owner owns every object);
* ``-policy``: the ONE bucket policy S3 allows, assembled here from every requirement: deny
  any request without TLS (``aws:SecureTransport``) or with TLS older than ``min_tls``
  (``s3:TlsVersion``), plus one statement per named reader;
* ``-lock``: default retention in COMPLIANCE mode for ``retention_days``;
* ``-lifecycle``: abort incomplete uploads, expire noncurrent versions (never before the
  retention ends) and, when asked, current ones;
* ``-logging`` with the log bucket ``<name>-logs`` (itself a bucket composed by this builder:
  SSE-S3, no object lock, because S3 cannot deliver server access logs to a bucket with
  object lock or a default SSE-KMS key; the log delivery service may write into it, only for
  this bucket and account);
* ``-replication`` with the role ``<name>-replication`` (+ ``-policy``, ``-attachment``) when
  ``replicate_to`` names another composed bucket; versioning is on for both, as replication
  requires.
"""

from __future__ import annotations

from typing import Any

from fnplatform.api.validation import repeated
from fnplatform.clouds.aws.common import partition, policy_document, trust_policy
from fnplatform.clouds.aws.kinds import (
    BUCKET,
    BUCKET_LIFECYCLE,
    BUCKET_LOGGING,
    BUCKET_OBJECT_LOCK,
    BUCKET_OWNERSHIP,
    BUCKET_POLICY,
    BUCKET_PUBLIC_ACCESS_BLOCK,
    BUCKET_REPLICATION,
    BUCKET_SSE,
    BUCKET_VERSIONING,
    IAM_POLICY,
    IAM_ROLE,
    ROLE_POLICY_ATTACHMENT,
)
from fnplatform.composition import Composition
from fnplatform.errors import SpecError
from fnplatform.library.bucket import (
    BucketAddress,
    BucketPart,
    BucketReader,
    BucketReplica,
    BucketSpec,
    add_bucket,
    bucket_address,
    bucket_name_from,
    bucket_name_rule,
    bucket_parts,
)
from fnplatform.library.rules import NameRule, check_name
from fnplatform.naming import dns_label

#: S3 general purpose bucket names: 3-63 of lowercase letters, digits, '.', '-', starting and
#: ending with a letter or digit. (Dots are allowed but break virtual-hosted TLS: not derived.)
BUCKET_NAME_RULE = NameRule(
    pattern=r"(?!xn--)(?!.*-s3alias$)[a-z0-9][a-z0-9.-]*[a-z0-9]",
    min_length=3,
    max_length=63,
    description="3-63 lowercase letters, digits, '.' and '-', starting and ending with a "
    "letter or digit (S3 bucket naming rules)",
)
LOG_DELIVERY_SERVICE = "logging.s3.amazonaws.com"
REPLICATION_SERVICE = "s3.amazonaws.com"
ABORT_MULTIPART_DAYS = 7
#: How long server access logs are kept: PCI DSS 10.5.1 asks for 12 months of audit history.
ACCESS_LOG_DAYS = 365


@bucket_name_rule.on("aws")
def aws_bucket_name_rule(comp: Composition) -> NameRule:
    """What S3 accepts as a bucket name."""
    return BUCKET_NAME_RULE


@bucket_name_from.on("aws")
def aws_bucket_name_from(comp: Composition, wanted: str) -> str:
    """S3 takes a composer's ``acme-mfe-<app>-<suffix>`` form as is (the builder checks it)."""
    return wanted


def named_bucket(comp: Composition, name: str, wanted: str | None) -> str:
    """The S3 name of composed bucket ``name``: ``wanted`` (its spec's), else the one the
    existing bucket has, else derived from the composite's
    :attr:`~Composition.global_name_base` (S3 names are global and a kept bucket outlives
    its composite)."""
    return wanted or comp.global_name(name, lambda base: dns_label(base, name))


def bucket_arn(comp: Composition, bucket: str, region: str | None = None) -> str:
    """The ARN of the S3 bucket named ``bucket`` (bucket ARNs carry no region or account)."""
    return f"arn:{partition(region or comp.region)}:s3:::{bucket}"


@bucket_address.on("aws")
def aws_bucket_address(comp: Composition, name: str, wanted: str | None) -> BucketAddress:
    """Name and ARN of composed bucket ``name`` (known before it exists: S3 names are ours)."""
    bucket = named_bucket(comp, name, wanted)
    return {"name": bucket, "id": bucket_arn(comp, bucket)}


@add_bucket.on("aws")
def bucket(comp: Composition, name: str, spec: BucketSpec) -> None:
    """The bucket ``name`` and every setting resource it needs (see the module docstring)."""
    _check(spec)
    region = spec.region or comp.region
    s3_name = check_name(
        BUCKET_NAME_RULE, named_bucket(comp, name, spec.bucket_name), "bucket_name"
    )
    body: dict[str, Any] = {"region": region, "forceDestroy": spec.force_destroy}
    if spec.lock:
        body["objectLockEnabled"] = True
    # The bucket is named after its resource, so every reference (and the policy's ARN) is
    # known before AWS has created anything.
    comp.emit(name, {**BUCKET.new(body), "metadata": {"name": s3_name}})

    def part(suffix: str, kind: Any, settings: dict[str, Any], uses: tuple[str, ...] = ()) -> None:
        fields = {"region": region, "bucketRef": comp.ref(name), **settings}
        comp.emit(f"{name}-{suffix}", kind.new(fields), uses=(name, *uses))

    part(
        "public-access-block",
        BUCKET_PUBLIC_ACCESS_BLOCK,
        {
            "blockPublicAcls": True,
            "blockPublicPolicy": True,
            "ignorePublicAcls": True,
            "restrictPublicBuckets": True,
        },
    )
    part("ownership", BUCKET_OWNERSHIP, {"rule": {"objectOwnership": "BucketOwnerEnforced"}})
    part(
        "versioning",
        BUCKET_VERSIONING,
        {
            "versioningConfiguration": {"status": "Enabled" if spec.versioning else "Suspended"},
        },
    )
    part("encryption", BUCKET_SSE, {"rule": [_encryption_rule(comp, spec)]})
    part(
        "policy",
        BUCKET_POLICY,
        {"policy": bucket_policy(comp, s3_name, spec, region)},
        uses=(f"{name}-public-access-block",),
    )
    if spec.lock and spec.retention_days:
        part(
            "lock",
            BUCKET_OBJECT_LOCK,
            {
                "objectLockEnabled": "Enabled",
                "rule": {"defaultRetention": {"mode": "COMPLIANCE", "days": spec.retention_days}},
            },
        )
    part(
        "lifecycle",
        BUCKET_LIFECYCLE,
        {"rule": _lifecycle_rules(spec)},
        uses=(f"{name}-versioning",),
    )
    if spec.access_logging:
        _access_logs(comp, name, s3_name, region)
        part(
            "logging",
            BUCKET_LOGGING,
            {
                "targetBucketRef": comp.ref(f"{name}-logs"),
                "targetPrefix": f"{s3_name}/",
                "targetObjectKeyFormat": {
                    "partitionedPrefix": {"partitionDateSource": "EventTime"}
                },
            },
            uses=(f"{name}-logs-policy",),
        )
    if spec.replicate_to:
        _replication(comp, name, spec, s3_name=s3_name, region=region, replica=spec.replicate_to)


def _check(spec: BucketSpec) -> None:
    spec.check_retention()
    if spec.lock and not spec.versioning:
        raise SpecError("versioning", "an object lock needs versioning")
    if spec.min_tls not in ("1.2", "1.3"):
        raise SpecError("min_tls", "must be 1.2 or 1.3")


def _encryption_rule(comp: Composition, spec: BucketSpec) -> dict[str, Any]:
    if spec.key is None:
        return {"applyServerSideEncryptionByDefault": {"sseAlgorithm": "AES256"}}
    return {
        "applyServerSideEncryptionByDefault": {
            "sseAlgorithm": "aws:kms",
            "kmsMasterKeyIdRef": comp.ref(spec.key),
        },
        # One data key per bucket instead of a KMS call per object: cheaper, same protection.
        "bucketKeyEnabled": True,
    }


def bucket_policy(comp: Composition, s3_name: str, spec: BucketSpec, region: str) -> str:
    """The bucket's one policy: TLS-only transport, then a statement per named reader."""
    arn = bucket_arn(comp, s3_name, region)
    everything = [arn, f"{arn}/*"]
    statements: list[dict[str, Any]] = [
        {
            "Sid": "DenyInsecureTransport",
            "Effect": "Deny",
            "Principal": "*",
            "Action": "s3:*",
            "Resource": everything,
            "Condition": {"Bool": {"aws:SecureTransport": "false"}},
        },
        {
            "Sid": "DenyOutdatedTls",
            "Effect": "Deny",
            "Principal": "*",
            "Action": "s3:*",
            "Resource": everything,
            "Condition": {"NumericLessThan": {"s3:TlsVersion": spec.min_tls}},
        },
    ]
    statements.extend(_reader_statement(comp, reader, arn) for reader in _sorted(spec.readers))
    return policy_document(statements)


def _sorted(readers: tuple[BucketReader, ...]) -> list[BucketReader]:
    duplicates = repeated(reader.name for reader in readers)
    if duplicates:
        raise SpecError("readers", f"reader names must be unique; repeated: {duplicates}")
    return sorted(readers, key=lambda reader: reader.name)


def _reader_statement(comp: Composition, reader: BucketReader, arn: str) -> dict[str, Any]:
    """Allow ``reader`` to get (or put) objects; a service principal only for this account and
    (with ``source``) only on behalf of that one resource, against the confused deputy."""
    service = not reader.principal.startswith("arn:")
    statement: dict[str, Any] = {
        "Sid": "".join(part.capitalize() for part in reader.name.replace("_", "-").split("-")),
        "Effect": "Allow",
        "Principal": {"Service": reader.principal} if service else {"AWS": reader.principal},
        "Action": "s3:PutObject" if reader.write else "s3:GetObject",
        "Resource": f"{arn}/*",
    }
    conditions: dict[str, str] = {}
    if reader.source:
        conditions["AWS:SourceArn"] = reader.source
    if service:
        conditions["aws:SourceAccount"] = comp.scope
    if conditions:
        statement["Condition"] = {
            "ArnLike" if reader.source and "*" in reader.source else "StringEquals": conditions
        }
    return statement


def _lifecycle_rules(spec: BucketSpec) -> list[dict[str, Any]]:
    """Lifecycle rules (v1beta1: nested blocks are lists); none expires before the lock ends."""
    everything = [{"prefix": ""}]
    rules: list[dict[str, Any]] = [
        {
            "id": "abort-incomplete-uploads",
            "status": "Enabled",
            "filter": everything,
            "abortIncompleteMultipartUpload": [{"daysAfterInitiation": ABORT_MULTIPART_DAYS}],
        }
    ]
    noncurrent = spec.noncurrent_expire_after_days or spec.retention_days
    if noncurrent:
        rules.append(
            {
                "id": "expire-noncurrent-versions",
                "status": "Enabled",
                "filter": everything,
                "noncurrentVersionExpiration": [{"noncurrentDays": noncurrent}],
            }
        )
    if spec.expire_after_days:
        rules.append(
            {
                "id": "expire-current-versions",
                "status": "Enabled",
                "filter": everything,
                "expiration": [{"days": spec.expire_after_days}],
            }
        )
    return rules


def _access_logs(comp: Composition, name: str, s3_name: str, region: str) -> None:
    """The log bucket ``<name>-logs``: S3's log delivery may write into it for ``name`` only."""
    logs = f"{name}-logs"
    delivery = BucketReader(
        name="s3-server-access-logs",
        principal=LOG_DELIVERY_SERVICE,
        source=bucket_arn(comp, s3_name, region),
        write=True,
    )
    bucket(
        comp,
        logs,
        BucketSpec(
            bucket_name=dns_label(s3_name, "logs"),
            key=None,
            region=region,
            expire_after_days=ACCESS_LOG_DAYS,
            noncurrent_expire_after_days=ACCESS_LOG_DAYS,
            readers=(delivery,),
        ),
    )


def _replication(
    comp: Composition,
    name: str,
    spec: BucketSpec,
    *,
    s3_name: str,
    region: str,
    replica: BucketReplica,
) -> None:
    """Replicate every object version (deletes markers too) to bucket ``replica``."""
    target = replica.bucket
    role = f"{name}-replication"
    source_arn = bucket_arn(comp, s3_name, region)
    target_arn = bucket_arn(comp, named_bucket(comp, target, replica.bucket_name), region)
    comp.emit(
        role,
        IAM_ROLE.new(
            {
                "assumeRolePolicy": trust_policy(REPLICATION_SERVICE, "sts:AssumeRole"),
                "description": f"S3 replication of {source_arn} to {target_arn}",
            }
        ),
    )
    comp.emit(
        f"{role}-policy",
        IAM_POLICY.new(
            {
                "policy": _replication_permissions(source_arn, target_arn, region, replica.region),
                "description": f"What S3 replication of {source_arn} may do",
            }
        ),
    )
    comp.emit(
        f"{role}-attachment",
        ROLE_POLICY_ATTACHMENT.new(
            {
                "roleRef": comp.ref(role),
                "policyArnRef": comp.ref(f"{role}-policy"),
            }
        ),
        uses=(role, f"{role}-policy"),
    )
    destination: dict[str, Any] = {"bucketRef": comp.ref(target), "storageClass": "STANDARD"}
    rule: dict[str, Any] = {
        "id": "replicate-everything",
        "status": "Enabled",
        "priority": 1,
        "filter": {},
        "deleteMarkerReplication": {"status": "Enabled"},
        "destination": destination,
    }
    configuration = f"{name}-replication-configuration"
    target_key = replica.key
    if spec.key is not None and target_key is not None:
        # S3 wants the replica key's ARN here (a key id is refused), and the provider's
        # reference would resolve the id: wait for the ARN AWS assigns instead.
        key_arn = comp.needs(target_key, "status.atProvider.arn", by=configuration)
        if key_arn is None:
            return
        destination["encryptionConfiguration"] = {"replicaKmsKeyId": str(key_arn)}
        rule["sourceSelectionCriteria"] = {"sseKmsEncryptedObjects": {"status": "Enabled"}}
    # The role by its ARN, which IAM derives from the name we give it: no wait, no reference
    # whose extractor might yield the bare name.
    role_arn = f"arn:{partition(region)}:iam::{comp.scope}:role/{comp.ref(role)['name']}"
    comp.emit(
        configuration,
        BUCKET_REPLICATION.new(
            {
                "region": region,
                "bucketRef": comp.ref(name),
                "role": role_arn,
                "rule": [rule],
            }
        ),
        uses=(name, target, f"{name}-versioning", f"{target}-versioning", f"{role}-attachment"),
    )


def _replication_permissions(
    source_arn: str,
    target_arn: str,
    source_region: str,
    target_region: str,
) -> str:
    """S3's documented replication permissions; KMS use only through S3 in each bucket's
    region (``kms:ViaService``) and only for that bucket's objects (encryption context), as
    AWS's "Replicating encrypted objects" example policy does."""
    return policy_document(
        [
            {
                "Effect": "Allow",
                "Action": ["s3:GetReplicationConfiguration", "s3:ListBucket"],
                "Resource": source_arn,
            },
            {
                "Effect": "Allow",
                "Action": [
                    "s3:GetObjectVersionForReplication",
                    "s3:GetObjectVersionAcl",
                    "s3:GetObjectVersionTagging",
                    "s3:GetObjectRetention",
                    "s3:GetObjectLegalHold",
                ],
                "Resource": f"{source_arn}/*",
            },
            {
                "Effect": "Allow",
                "Action": [
                    "s3:ReplicateObject",
                    "s3:ReplicateDelete",
                    "s3:ReplicateTags",
                    "s3:ObjectOwnerOverrideToBucketOwner",
                ],
                "Resource": f"{target_arn}/*",
            },
            # With S3 Bucket Keys the encryption context is the bucket ARN, else the object ARN.
            {
                "Effect": "Allow",
                "Action": ["kms:Decrypt"],
                "Resource": "*",
                "Condition": {
                    "StringLike": {
                        "kms:ViaService": f"s3.{source_region}.amazonaws.com",
                        "kms:EncryptionContext:aws:s3:arn": [source_arn, f"{source_arn}/*"],
                    }
                },
            },
            {
                "Effect": "Allow",
                "Action": ["kms:Encrypt", "kms:GenerateDataKey"],
                "Resource": "*",
                "Condition": {
                    "StringLike": {
                        "kms:ViaService": f"s3.{target_region}.amazonaws.com",
                        "kms:EncryptionContext:aws:s3:arn": [target_arn, f"{target_arn}/*"],
                    }
                },
            },
        ]
    )


@bucket_parts.on("aws")
def aws_bucket_parts(comp: Composition, name: str, part: BucketPart) -> tuple[str, ...]:
    """What of bucket ``name`` does ``part`` (the composer vouches for it by these names):
    the bucket's SSE-KMS configuration; the public access block and ownership (no ACLs); the
    bucket policy (``aws:SecureTransport``, ``s3:TlsVersion``); versioning, lifecycle rules, the
    object lock; the logging configuration and the log bucket with its settings; the replication
    role and configuration (the replica bucket is the composer's)."""
    return {
        BucketPart.ENCRYPTION: (f"{name}-encryption",),
        BucketPart.NEVER_PUBLIC: (name, f"{name}-public-access-block", f"{name}-ownership"),
        BucketPart.TLS: (f"{name}-policy",),
        BucketPart.VERSIONING: (f"{name}-versioning",),
        BucketPart.LIFECYCLE: (f"{name}-lifecycle",),
        BucketPart.LOCK: (name, f"{name}-lock"),
        BucketPart.ACCESS_LOGGING: (f"{name}-logging", f"{name}-logs", f"{name}-logs-*"),
        BucketPart.GEO_REPLICATION: (),
        BucketPart.REPLICATION: (f"{name}-replication", f"{name}-replication-*"),
    }[part]
