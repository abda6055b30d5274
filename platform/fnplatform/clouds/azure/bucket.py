"""Azure bucket: a storage account and one private blob container in it.

Composed (``<name>`` is the ``Account``):

* ``<name>``: StorageV2, zone-redundant, HTTPS only with minimum TLS 1.2 (the highest Azure
  Storage offers), infrastructure (double) encryption, no public blobs, blob versioning and
  30-day soft delete, encrypted with the composed key as its user-assigned identity
  (``customerManagedKey`` + ``identity``). The identity's id and the key's versionless id
  exist only once Azure created them, and the identity must hold its vault grant before the
  account can use the key: the account waits for all three;
* ``<name>-container`` (``Container``, private), ``<name>-immutability``
  (``ContainerImmutabilityPolicy`` for ``retention_days``; ``locked`` with ``lock``, which is
  irreversible: the period can then only be extended);
* with ``access_logging``: Storage blob logs (read, write, delete) to a Log Analytics
  workspace ``<name>-logs`` through the diagnostic setting ``<name>-logging``;
* readers: ``<name>-reader-<reader>`` role assignments (Storage Blob Data Reader, or
  Contributor for writers) on the account.

Account names are global and allow only 3-24 lowercase letters and digits: the name is
derived from the composite and composition names, with a hash when it does not fit.
"""

from __future__ import annotations

import hashlib
import re
from typing import Any

from fnplatform.clouds.azure.common import (
    compact_name,
    resource_group,
)
from fnplatform.clouds.azure.kinds import (
    BLOB_CONTAINER,
    CONTAINER_IMMUTABILITY_POLICY,
    DIAGNOSTIC_SETTING,
    LOG_WORKSPACE,
    ROLE_ASSIGNMENT,
    STORAGE_ACCOUNT,
)
from fnplatform.clouds.azure.settings import azure_environment
from fnplatform.composition import Composition
from fnplatform.gaps import Gap
from fnplatform.holds import Wait
from fnplatform.library.bucket import (
    BucketAddress,
    BucketPart,
    BucketSpec,
    add_bucket,
    bucket_address,
    bucket_deleted_with_objects,
    bucket_name_from,
    bucket_name_rule,
    bucket_parts,
)
from fnplatform.library.rules import NameRule, check_name

ACCOUNT_NAME_RULE = NameRule(
    pattern=r"[a-z0-9]+",
    min_length=3,
    max_length=24,
    description="3-24 lowercase letters and digits (Azure storage account names)",
)
CONTAINER = "objects"  # the container's name inside its own account
SOFT_DELETE_DAYS = 30
ACCESS_LOG_DAYS = 365
BLOB_LOG_CATEGORIES = ("StorageDelete", "StorageRead", "StorageWrite")
READER_ROLE, WRITER_ROLE = "Storage Blob Data Reader", "Storage Blob Data Contributor"


@bucket_name_rule.on("azure")
def azure_bucket_name_rule(comp: Composition) -> NameRule:
    """What Azure accepts as a storage account name."""
    return ACCOUNT_NAME_RULE


@bucket_name_from.on("azure")
def azure_bucket_name_from(comp: Composition, wanted: str) -> str:
    """A storage account name from a composer's name (``acme-mfe-payments-7d3f9a12``):
    lowercase letters and digits only (``acmemfepayments7d3f9a12``), and when that is longer
    than 24 its first characters plus 6 hex digits of the SHA-256 of ``wanted``, so two
    different wanted names never meet in one account."""
    text = re.sub(r"[^a-z0-9]", "", wanted.lower())
    limit = ACCOUNT_NAME_RULE.max_length
    if len(text) <= limit:
        return text
    digest = hashlib.sha256(wanted.encode()).hexdigest()[:6]
    return text[: limit - len(digest)] + digest


def account_name(comp: Composition, name: str, spec: BucketSpec | None = None) -> str:
    """The storage account name of composed bucket ``name``."""
    if spec is not None and spec.bucket_name:
        return spec.bucket_name
    return compact_name(comp, name, ACCOUNT_NAME_RULE.max_length, alphanumeric=True)


@bucket_address.on("azure")
def azure_bucket_address(comp: Composition, name: str, wanted: str | None) -> BucketAddress:
    """Account name (an imported account's own) and (once it exists) the account's resource
    id."""
    return {
        "name": comp.cloud_name(name, wanted or account_name(comp, name)),
        "id": comp.observed_string(name, "status.atProvider.id"),
    }


@add_bucket.on("azure")
def bucket(comp: Composition, name: str, spec: BucketSpec) -> None:
    """Storage account ``name``, its container, immutability, logs and readers."""
    spec.check_retention()
    account = check_name(ACCOUNT_NAME_RULE, account_name(comp, name, spec), "bucket_name")
    if spec.min_tls != "1.2":
        comp.gap(
            Gap.BUCKET_MIN_TLS,
            f"Azure storage account {account}: TLS 1.2 is the highest "
            f"minimum Azure Storage offers; TLS {spec.min_tls} cannot be required",
        )
    if spec.replicate_to:
        comp.gap(
            Gap.BUCKET_REPLICATION,
            "Azure storage replicates inside the account "
            "(zone/geo-redundant SKUs), not to a second account: none composed",
        )
    group, location = resource_group(comp), spec.region or comp.region
    body: dict[str, Any] = {
        "location": location,
        "resourceGroupName": group,
        "accountKind": "StorageV2",
        "accountTier": "Standard",
        "accountReplicationType": _redundancy(comp, location, spec.geo_replica_region),
        "httpsTrafficOnlyEnabled": True,
        "minTlsVersion": "TLS1_2",
        "allowNestedItemsToBePublic": False,
        "infrastructureEncryptionEnabled": True,
        # People in the portal use their Entra identity, not the account key.
        "defaultToOauthAuthentication": True,
        "blobProperties": {
            "versioningEnabled": spec.versioning,
            "deleteRetentionPolicy": {"days": SOFT_DELETE_DAYS},
            "containerDeleteRetentionPolicy": {"days": SOFT_DELETE_DAYS},
        },
    }
    if azure_environment(comp).storageUseAzureAD:
        # Entra ID only: no account key, no key-signed SAS (user delegation SAS still works)
        body["sharedAccessKeyEnabled"] = False
    uses: tuple[str, ...] = ()
    if spec.key is not None:
        encryption = _customer_managed_key(comp, name, spec.key)
        if encryption is None:
            return  # nothing of the bucket exists yet: it is composed once the key is usable
        body.update(encryption)
        uses = (f"{spec.key}-identity-access",)
    comp.emit(name, STORAGE_ACCOUNT.new(body), uses=uses, external_name=account)
    container = f"{name}-container"
    comp.emit(
        container,
        BLOB_CONTAINER.new(
            {
                "storageAccountIdRef": comp.ref(name),
                "containerAccessType": "private",
            }
        ),
        uses=(name,),
        external_name=CONTAINER,
    )
    if spec.retention_days:
        comp.emit(
            f"{name}-immutability",
            CONTAINER_IMMUTABILITY_POLICY.new(
                {
                    "storageContainerResourceManagerIdRef": comp.ref(container),
                    "immutabilityPeriodInDays": spec.retention_days,
                    "locked": spec.lock,
                    "protectedAppendWritesEnabled": False,
                }
            ),
            uses=(container,),
        )
    if spec.access_logging:
        _access_logs(comp, name, group, location)
    for reader in sorted(spec.readers, key=lambda reader: reader.name):
        assignment = f"{name}-reader-{reader.name}"
        account_id = comp.needs(name, "status.atProvider.id", by=assignment)
        if account_id is not None:
            comp.emit(
                assignment,
                ROLE_ASSIGNMENT.new(
                    {
                        "scope": str(account_id),
                        "roleDefinitionName": WRITER_ROLE if reader.write else READER_ROLE,
                        "principalId": reader.principal,
                    }
                ),
                uses=(name,),
            )


#: Azure region pairs (learn.microsoft.com/azure/reliability/cross-region-replication-azure):
#: a geo-redundant account's secondary copy is always in its region's pair.
REGION_PAIRS: dict[str, str] = {
    "australiaeast": "australiasoutheast",
    "brazilsouth": "southcentralus",
    "canadacentral": "canadaeast",
    "centralindia": "southindia",
    "centralus": "eastus2",
    "eastasia": "southeastasia",
    "eastus": "westus",
    "eastus2": "centralus",
    "francecentral": "francesouth",
    "germanywestcentral": "germanynorth",
    "japaneast": "japanwest",
    "koreacentral": "koreasouth",
    "northcentralus": "southcentralus",
    "northeurope": "westeurope",
    "norwayeast": "norwaywest",
    "southcentralus": "northcentralus",
    "southeastasia": "eastasia",
    "swedencentral": "swedensouth",
    "switzerlandnorth": "switzerlandwest",
    "uksouth": "ukwest",
    "westcentralus": "westus2",
    "westeurope": "northeurope",
    "westus": "eastus",
    "westus2": "westcentralus",
    "westus3": "eastus",
}


def _redundancy(comp: Composition, location: str, replica_region: str | None) -> str:
    """``ZRS``, or ``RAGZRS`` when the account is to keep a copy in ``replica_region``.

    Azure geo-replicates an account only to its region's pair, asynchronously, with read
    access to the secondary (RA-GZRS: zone-redundant in the primary, as ZRS was). The copy is
    the same account's: the same container WORM policy (lock), the same customer-managed key,
    the same settings. ZRS to RA-GZRS is an in-place conversion (the azurerm provider replaces
    an account only between the LRS/GRS/RAGRS and ZRS/GZRS/RAGZRS families). Another region
    than the pair cannot hold the copy: that is the ``bucket-replication`` gap.
    """
    if replica_region is None:
        return "ZRS"
    pair = REGION_PAIRS.get(location)
    if pair != replica_region:
        choose = (
            f"its paired region {pair}: choose {pair} as the replication or secondary region"
            if pair
            else f"a paired region, and {location} has none"
        )
        comp.gap(
            Gap.BUCKET_REPLICATION,
            f"Azure geo-replicates a storage account only to {choose}; no copy in {replica_region}",
        )
        return "ZRS"
    return "RAGZRS"


def _customer_managed_key(comp: Composition, name: str, key: str) -> dict[str, Any] | None:
    """The account's ``identity`` and ``customerManagedKey`` blocks, or None while not usable.

    They name the key's identity and versionless key id, which exist only once Azure created
    them, and the identity must hold its vault grant first (Azure Storage refuses the key
    otherwise: rule AZURE_KEY_GRANT_FIRST of platform/providersim/simulation.py). An account that
    already exists keeps the blocks it was created with while a source is briefly unobserved:
    dropping them would switch the account back to Microsoft-managed keys.
    """
    if comp.is_observed(name):
        kept = {
            field: comp.observed_value(name, f"spec.forProvider.{field}")
            for field in ("identity", "customerManagedKey")
        }
        identity_id = comp.observed_value(f"{key}-identity", "status.atProvider.id")
        key_id = comp.observed_value(key, "status.atProvider.versionlessId")
        if identity_id is None or key_id is None:
            return {field: value for field, value in kept.items() if value is not None}
        return _encryption_blocks(str(identity_id), str(key_id))
    identity_id = comp.needs(f"{key}-identity", "status.atProvider.id", by=name)
    key_id = comp.needs(key, "status.atProvider.versionlessId", by=name)
    granted = comp.is_observed(f"{key}-identity-access")
    if not granted:
        comp.hold(name, Wait(f"{key}-identity-access", "(the identity's grant on the key vault)"))
    if identity_id is None or key_id is None or not granted:
        return None
    return _encryption_blocks(str(identity_id), str(key_id))


def _encryption_blocks(identity_id: str, key_id: str) -> dict[str, Any]:
    return {
        "identity": {"type": "UserAssigned", "identityIds": [identity_id]},
        "customerManagedKey": {"keyVaultKeyId": key_id, "userAssignedIdentityId": identity_id},
    }


def _access_logs(comp: Composition, name: str, group: str, location: str) -> None:
    """Blob read/write/delete logs of the account into workspace ``<name>-logs``."""
    workspace, setting = f"{name}-logs", f"{name}-logging"
    comp.emit(
        workspace,
        LOG_WORKSPACE.new(
            {
                "location": location,
                "resourceGroupName": group,
                "sku": "PerGB2018",
                "retentionInDays": ACCESS_LOG_DAYS,
            }
        ),
    )
    account_id = comp.needs(name, "status.atProvider.id", by=setting)
    workspace_id = comp.needs(workspace, "status.atProvider.id", by=setting)
    if account_id is None or workspace_id is None:
        return
    comp.emit(
        setting,
        DIAGNOSTIC_SETTING.new(
            {
                "name": comp.resource_name(setting),
                "targetResourceId": f"{account_id}/blobServices/default",
                "logAnalyticsWorkspaceId": str(workspace_id),
                "enabledLog": [{"category": category} for category in BLOB_LOG_CATEGORIES],
            }
        ),
        uses=(name, workspace),
    )


#: The bucket is a storage account: deleting it deletes its blobs.
bucket_deleted_with_objects.on("azure")


@bucket_parts.on("azure")
def azure_bucket_parts(comp: Composition, name: str, part: BucketPart) -> tuple[str, ...]:
    """What of bucket ``name`` does ``part`` (the composer vouches for it by these names):
    the account's customer-managed key is the account itself; no public nesting and a
    private container; the account's minimum TLS version; the immutability (WORM) policy
    retains, so nothing expires and versions are kept; the diagnostic setting and its
    workspace; the geo-redundant account keeps its own copy."""
    return {
        BucketPart.ENCRYPTION: (),
        BucketPart.NEVER_PUBLIC: (name, f"{name}-container"),
        BucketPart.TLS: (name,),
        BucketPart.VERSIONING: (name, f"{name}-immutability"),
        BucketPart.LIFECYCLE: (f"{name}-immutability",),
        BucketPart.LOCK: (f"{name}-immutability",),
        BucketPart.ACCESS_LOGGING: (f"{name}-logging", f"{name}-logs"),
        BucketPart.GEO_REPLICATION: (name,),
        BucketPart.REPLICATION: (),
    }[part]
