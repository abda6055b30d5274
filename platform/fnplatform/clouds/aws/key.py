"""AWS key: a customer-managed KMS key with yearly (or faster) rotation, and its alias.

Composed as ``<name>`` (``Key``) and ``<name>-alias`` (``Alias``; AWS calls it
``alias/<alias resource name>``).
The key policy is the key's only grant document, assembled here in one place: the account
administers the key through IAM (without that statement nobody could ever change the policy
again), and any principal of the account may use it *through S3 in the key's region*
(``kms:ViaService``), which is what SSE-KMS on the buckets needs; further decrypters (a CDN) are
named one statement each. A deleted key is unrecoverable after its deletion window, and every
object encrypted with it with it: the key is stateful.
"""

from __future__ import annotations

from typing import Any

from fnplatform.clouds.aws.common import partition, policy_document
from fnplatform.clouds.aws.kinds import KMS_ALIAS, KMS_KEY
from fnplatform.composition import Composition
from fnplatform.errors import SpecError
from fnplatform.library.bucket import BucketReader
from fnplatform.library.key import KeySpec, add_key, key_deletable, key_id

#: KMS rotation periods: 90 to 2560 days.
MIN_ROTATION_DAYS, MAX_ROTATION_DAYS = 90, 2560
DELETION_WINDOW_DAYS = 30  # the longest: time to notice a deletion and cancel it
USE_ACTIONS = [
    "kms:Decrypt",
    "kms:DescribeKey",
    "kms:Encrypt",
    "kms:GenerateDataKey*",
    "kms:ReEncrypt*",
]


@add_key.on("aws")
def key(comp: Composition, name: str, spec: KeySpec) -> None:
    """KMS key ``name`` (rotation on) and its alias ``<name>-alias``."""
    if not MIN_ROTATION_DAYS <= spec.rotation_days <= MAX_ROTATION_DAYS:
        raise SpecError(
            "rotation_days", f"KMS rotates every {MIN_ROTATION_DAYS}-{MAX_ROTATION_DAYS} days"
        )
    region = spec.region or comp.region
    comp.emit(
        name,
        KMS_KEY.new(
            {
                "region": region,
                "description": spec.description,
                "keyUsage": "ENCRYPT_DECRYPT",
                "customerMasterKeySpec": "SYMMETRIC_DEFAULT",
                "enableKeyRotation": True,
                "rotationPeriodInDays": spec.rotation_days,
                "deletionWindowInDays": DELETION_WINDOW_DAYS,
                "policy": key_policy(comp, spec, region),
            }
        ),
    )
    # The provider names the alias "alias/" + its external name (provider-upjet-aws
    # config/cluster/externalname.go, kmsAlias()): the resource name is enough.
    comp.emit(
        f"{name}-alias",
        KMS_ALIAS.new({"region": region, "targetKeyIdRef": comp.ref(name)}),
        uses=(name,),
    )


def key_policy(comp: Composition, spec: KeySpec, region: str) -> str:
    """The key policy: the account administers, S3 in ``region`` uses, named decrypters read."""
    account = comp.scope
    statements: list[dict[str, Any]] = [
        {
            "Sid": "AccountAdministers",
            "Effect": "Allow",
            "Principal": {"AWS": f"arn:{partition(region)}:iam::{account}:root"},
            "Action": "kms:*",
            "Resource": "*",
        },
        {
            "Sid": "S3UsesForTheAccount",
            "Effect": "Allow",
            "Principal": {"AWS": "*"},
            "Action": USE_ACTIONS,
            "Resource": "*",
            "Condition": {
                "StringEquals": {
                    "kms:CallerAccount": account,
                    "kms:ViaService": f"s3.{region}.amazonaws.com",
                }
            },
        },
    ]
    statements.extend(
        _decrypter(comp, reader)
        for reader in sorted(spec.decrypters, key=lambda reader: reader.name)
    )
    return policy_document(statements)


def _decrypter(comp: Composition, reader: BucketReader) -> dict[str, Any]:
    service = not reader.principal.startswith("arn:")
    statement: dict[str, Any] = {
        "Sid": "".join(part.capitalize() for part in reader.name.split("-")),
        "Effect": "Allow",
        "Principal": {"Service": reader.principal} if service else {"AWS": reader.principal},
        "Action": ["kms:Decrypt", "kms:Encrypt", "kms:GenerateDataKey*"]
        if reader.write
        else ["kms:Decrypt"],
        "Resource": "*",
    }
    conditions = {"aws:SourceAccount": comp.scope} if service else {}
    if reader.source:
        conditions["AWS:SourceArn"] = reader.source
    if conditions:
        statement["Condition"] = {"StringEquals": conditions}
    return statement


@key_id.on("aws")
def aws_key_id(
    comp: Composition, name: str, region: str | None, replica_region: str | None
) -> str | None:
    """The ARN of composed key ``name`` once AWS assigned it (key ids are random)."""
    return comp.observed_string(name, "status.atProvider.arn")


#: Deleting the key resource deletes the key (after the cloud's waiting period).
key_deletable.on("aws")
