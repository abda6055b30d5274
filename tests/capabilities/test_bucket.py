"""add_bucket on every cloud: never public, TLS-only, encrypted with its key, locked, logged.

The main row asks what the contact-center recordings need (a customer key, a compliance lock,
access logging, an expiry and a named reader); ``defaults`` asks for a bucket with nothing
set (the cloud's managed encryption, no lock), as the environment module's site bucket does.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from fnplatform.composition import Composition
from fnplatform.library.bucket import BucketReader, BucketSpec, add_bucket, bucket_name_rule
from fnplatform.library.key import KeySpec, add_key
from fnplatform.library.rules import name_problem

from tests.capabilities.harness import Case, check_converges, compose_once, converge, table
from tests.support.table import case

READER = {
    "aws": (
        "cloudfront.amazonaws.com",
        "arn:aws:cloudfront::123456789012:distribution/EDFDVBD6EXAMPLE",
    ),
    "gcp": ("serviceAccount:cdn@acme-probe.iam.gserviceaccount.com", None),
    "azure": ("00000000-0000-0000-0000-00000000dddd", None),
}


def recordings(comp: Composition) -> None:
    """A locked, logged, expiring bucket under a customer key, read by a CDN; the user may
    name it (``spec.bucketName``); status says the cloud's name rule."""
    principal, source = READER[str(comp.cloud)]
    reader = BucketReader("cdn", principal, source)
    add_key(comp, "key", KeySpec("probe key", decrypters=(reader,)))
    add_bucket(
        comp,
        "bucket",
        BucketSpec(
            key="key",
            retention_days=30,
            lock=True,
            access_logging=True,
            expire_after_days=30,
            readers=(reader,),
            bucket_name=comp.spec.get("bucketName"),
        ),
        fields={"bucket_name": "spec.bucketName", "expire_after_days": "spec.expiry"},
    )
    rule = bucket_name_rule(comp)
    comp.set_status("nameRule", {"min": rule.min_length, "max": rule.max_length})


def defaults(comp: Composition) -> None:
    add_bucket(comp, "bucket", BucketSpec())


CASES = [
    Case(
        "recordings",
        recordings,
        kinds={
            "aws": frozenset(
                {
                    "Key",
                    "Alias",
                    "Bucket",
                    "BucketPolicy",
                    "BucketObjectLockConfiguration",
                    "BucketLogging",
                    "BucketLifecycleConfiguration",
                    "BucketServerSideEncryptionConfiguration",
                    "BucketVersioning",
                    "BucketPublicAccessBlock",
                    "BucketOwnershipControls",
                }
            ),
            "gcp": frozenset(
                {"KeyRing", "CryptoKey", "CryptoKeyIAMMember", "Bucket", "BucketIAMMember"}
            ),
            "azure": frozenset(
                {
                    "Vault",
                    "AccessPolicy",
                    "Key",
                    "UserAssignedIdentity",
                    "Account",
                    "Container",
                    "ContainerImmutabilityPolicy",
                    "Workspace",
                    "MonitorDiagnosticSetting",
                    "RoleAssignment",
                }
            ),
        },
    ),
    Case(
        "defaults",
        defaults,
        kinds={
            "aws": frozenset(
                {
                    "Bucket",
                    "BucketPolicy",
                    "BucketPublicAccessBlock",
                    "BucketServerSideEncryptionConfiguration",
                    "BucketVersioning",
                }
            ),
            "gcp": frozenset({"Bucket"}),
            "azure": frozenset({"Account", "Container"}),
        },
    ),
]


@pytest.mark.parametrize(("case", "cloud"), table(add_bucket, CASES))
def test_composes_schema_valid_bodies_that_converge(case: Case, cloud: str) -> None:
    check_converges(case, cloud)


def policy(body: dict[str, Any]) -> dict[str, Any]:
    return {s["Sid"]: s for s in json.loads(body["spec"]["forProvider"]["policy"])["Statement"]}


def test_aws_bucket_has_one_policy_with_tls_deny_and_each_reader() -> None:
    done = converge("aws", recordings)
    # S3 keeps one policy per bucket: a second BucketPolicy would overwrite the first.
    policies = {
        name: body["spec"]["forProvider"]["bucketRef"]["name"]
        for name, body in done.desired.items()
        if body["kind"] == "BucketPolicy"
    }
    assert policies == {"bucket-policy": "probe-bucket", "bucket-logs-policy": "probe-bucket-logs"}
    statements = policy(done.body("bucket-policy"))
    assert statements["DenyInsecureTransport"]["Condition"] == {
        "Bool": {"aws:SecureTransport": "false"}
    }
    assert statements["DenyOutdatedTls"]["Condition"] == {
        "NumericLessThan": {"s3:TlsVersion": "1.2"}
    }
    cdn = statements["Cdn"]
    assert cdn["Principal"] == {"Service": "cloudfront.amazonaws.com"}
    assert cdn["Action"] == "s3:GetObject"
    assert cdn["Condition"]["StringEquals"]["AWS:SourceArn"] == READER["aws"][1]
    assert cdn["Resource"] == "arn:aws:s3:::probe-bucket/*"
    # The access-log bucket's own single policy lets S3 log delivery write for this bucket only.
    delivery = policy(done.body("bucket-logs-policy"))["S3ServerAccessLogs"]
    assert delivery["Principal"] == {"Service": "logging.s3.amazonaws.com"}
    assert delivery["Condition"]["StringEquals"] == {
        "AWS:SourceArn": "arn:aws:s3:::probe-bucket",
        "aws:SourceAccount": "123456789012",
    }


def test_aws_bucket_is_locked_private_encrypted_and_logged() -> None:
    done = converge("aws", recordings)
    spec = {name: body["spec"].get("forProvider", {}) for name, body in done.desired.items()}
    assert spec["bucket"]["objectLockEnabled"] is True  # only possible at creation
    assert spec["bucket-lock"]["rule"]["defaultRetention"] == {"mode": "COMPLIANCE", "days": 30}
    assert spec["bucket-ownership"]["rule"] == {"objectOwnership": "BucketOwnerEnforced"}
    assert all(
        spec["bucket-public-access-block"][flag]
        for flag in (
            "blockPublicAcls",
            "blockPublicPolicy",
            "ignorePublicAcls",
            "restrictPublicBuckets",
        )
    )
    sse = spec["bucket-encryption"]["rule"][0]["applyServerSideEncryptionByDefault"]
    assert sse == {"sseAlgorithm": "aws:kms", "kmsMasterKeyIdRef": {"name": "probe-key"}}
    assert spec["bucket-versioning"]["versioningConfiguration"] == {"status": "Enabled"}
    assert spec["bucket-logging"]["targetBucketRef"] == {"name": "probe-bucket-logs"}
    assert "objectLockEnabled" not in spec["bucket-logs"]  # S3 can't log into a locked bucket
    logs_sse = spec["bucket-logs-encryption"]["rule"][0]["applyServerSideEncryptionByDefault"]
    assert logs_sse == {"sseAlgorithm": "AES256"}
    expiries = [r for r in spec["bucket-lifecycle"]["rule"] if "expiration" in r]
    assert expiries[0]["expiration"] == [{"days": 30}]


def test_gcp_bucket_is_private_locked_encrypted_and_logged() -> None:
    done = converge("gcp", recordings)
    bucket = done.for_provider("bucket")
    assert bucket["publicAccessPrevention"] == "enforced"
    assert bucket["uniformBucketLevelAccess"] is True
    assert bucket["retentionPolicy"] == {"retentionPeriod": 30 * 86400, "isLocked": True}
    assert bucket["encryption"]["defaultKmsKeyName"] == (
        "projects/acme-probe/locations/europe-west1/keyRings/probe-key-ring/cryptoKeys/probe-key"
    )
    assert bucket["logging"]["logBucket"] == "probe-bucket-logs"
    # A locked retention policy replaces versioning on GCS: said as a gap, not silently.
    gap = done.conditions.get("CapabilitiesAvailable")
    assert gap is not None and gap.status == fnv1.STATUS_CONDITION_FALSE
    assert "bucket-versioning" in gap.message


def test_azure_account_waits_for_key_identity_and_grant() -> None:
    first = compose_once("azure", recordings)
    assert first.fatal == []
    assert "bucket" not in first.desired
    assert "key-identity-access" not in first.desired
    # The vault and the identity come first; the key waits for the provider's vault access.
    assert {"key-vault", "key-identity"} <= set(first.desired)
    assert "key" not in first.desired
    done = converge("azure", recordings)
    account = done.for_provider("bucket")
    assert account["customerManagedKey"] == {
        "keyVaultKeyId": done.reported("key")["versionlessId"],
        "userAssignedIdentityId": done.reported("key-identity")["id"],
    }
    assert account["minTlsVersion"] == "TLS1_2"
    assert account["allowNestedItemsToBePublic"] is False
    assert account["infrastructureEncryptionEnabled"] is True
    immutability = done.for_provider("bucket-immutability")
    assert immutability["immutabilityPeriodInDays"] == 30 and immutability["locked"] is True


@pytest.mark.parametrize(
    ("cloud", "maximum"),
    [
        case("S3 bucket names: at most 63 characters", "aws", 63),
        case("GCS bucket names: at most 63 characters", "gcp", 63),
        case("Azure storage account names: at most 24 characters", "azure", 24),
    ],
)
def test_bucket_name_rule_is_a_cloud_value(cloud: str, maximum: int) -> None:
    assert sorted(bucket_name_rule.clouds()) == sorted(add_bucket.clouds())
    assert converge(cloud, recordings).status["nameRule"] == {"min": 3, "max": maximum}
    bad = compose_once(cloud, recordings, spec={"bucketName": "Not_A-Valid.Name!"})
    assert bad.fatal and all(m.startswith("spec.bucketName") for m in bad.fatal), bad.fatal


def test_name_problem_table() -> None:
    from fnplatform.clouds.aws.bucket import BUCKET_NAME_RULE as S3
    from fnplatform.clouds.azure.bucket import ACCOUNT_NAME_RULE as AZURE_RULE

    table = [
        (S3, "recordings-2026", None),
        (S3, "ab", "must be"),
        (S3, "xn--bucket", "must be"),
        (S3, "Upper", "must be"),
        (AZURE_RULE, "recordings2026", None),
        (AZURE_RULE, "recordings-2026", "must be"),
        (AZURE_RULE, "a" * 25, "characters"),
    ]
    for rule, value, problem in table:
        found = name_problem(rule, value)
        assert (found is None) if problem is None else (problem in str(found)), (value, found)
