"""add_key on every cloud: a rotating customer key its cloud's storage may use, and only that.

``storage`` is the key a bucket names; ``decrypter`` also lets a CDN decrypt what it reads.
"""

from __future__ import annotations

import copy
import json

import pytest
from fnplatform.composition import Composition
from fnplatform.library.bucket import BucketReader
from fnplatform.library.key import KeySpec, add_key

from tests.capabilities.harness import SETTINGS, Case, check_converges, compose_once, table

CDN = {
    "aws": BucketReader(
        "cdn",
        "cloudfront.amazonaws.com",
        "arn:aws:cloudfront::123456789012:distribution/EDFDVBD6EXAMPLE",
    ),
    "gcp": BucketReader("cdn", "serviceAccount:cdn@acme-probe.iam.gserviceaccount.com"),
    "azure": BucketReader("cdn", "00000000-0000-0000-0000-00000000dddd"),
}


def storage(comp: Composition) -> None:
    add_key(comp, "key", KeySpec("probe key"))


def decrypter(comp: Composition) -> None:
    add_key(comp, "key", KeySpec("probe key", rotation_days=90, decrypters=(CDN[str(comp.cloud)],)))


KINDS = {
    "aws": frozenset({"Key", "Alias"}),
    "gcp": frozenset({"KeyRing", "CryptoKey", "CryptoKeyIAMMember"}),
    "azure": frozenset({"Vault", "AccessPolicy", "Key", "UserAssignedIdentity"}),
}
CASES = [
    Case("storage", storage, kinds=KINDS),
    Case("decrypter", decrypter, kinds=KINDS),
]


@pytest.mark.parametrize(("case", "cloud"), table(add_key, CASES))
def test_composes_schema_valid_bodies_that_converge(case: Case, cloud: str) -> None:
    check_converges(case, cloud)


def test_aws_key_rotates_and_lets_s3_of_the_account_and_each_decrypter_use_it() -> None:
    key = check_converges(CASES[0], "aws").for_provider("key")
    assert key["enableKeyRotation"] is True and key["rotationPeriodInDays"] == 365
    statements = {s["Sid"]: s for s in json.loads(key["policy"])["Statement"]}
    assert statements["S3UsesForTheAccount"]["Condition"]["StringEquals"] == {
        "kms:CallerAccount": "123456789012",
        "kms:ViaService": "s3.eu-west-1.amazonaws.com",
    }
    assert "Cdn" not in statements
    key = check_converges(CASES[1], "aws").for_provider("key")
    assert key["rotationPeriodInDays"] == 90
    cdn = {s["Sid"]: s for s in json.loads(key["policy"])["Statement"]}["Cdn"]
    assert cdn["Action"] == ["kms:Decrypt"]
    assert cdn["Principal"] == {"Service": "cloudfront.amazonaws.com"}


def test_gcp_key_grants_the_storage_service_agent() -> None:
    done = check_converges(CASES[0], "gcp")
    grant = done.for_provider("key-storage-grant")
    number = SETTINGS["gcp"]["projectNumber"]
    assert grant["member"] == (
        f"serviceAccount:service-{number}@gs-project-accounts.iam.gserviceaccount.com"
    )
    assert grant["role"] == "roles/cloudkms.cryptoKeyEncrypterDecrypter"


def test_gcp_key_needs_the_project_number() -> None:
    settings = copy.deepcopy(SETTINGS)
    del settings["gcp"]["projectNumber"]
    failed = compose_once("gcp", storage, settings=settings)
    assert any("environment.gcp.projectNumber" in m for m in failed.fatal), failed.fatal


def test_azure_vault_keeps_deleted_keys() -> None:
    vault = check_converges(CASES[0], "azure").for_provider("key-vault")
    assert vault["purgeProtectionEnabled"] is True
