"""Azure key: a Key Vault, a rotating key in it, and the identity a storage account uses it as.

Composed (``<name>`` is the key):

* ``<name>-vault`` (``Vault``): purge protection on (Azure Storage refuses a customer-managed
  key from a vault without it) and 90 days of soft delete, access-policy authorization;
* ``<name>-admin-access`` (``AccessPolicy``): the Crossplane provider's own principal
  (``environment.azure.keyVaultAdminObjectId``) may create, rotate and delete keys; a vault's
  creator gets no data-plane access by itself;
* ``<name>`` (``Key``): RSA 3072, wrap/unwrap only, rotated automatically every
  ``rotation_days`` (storage accounts follow the versionless key id, so a rotation needs no
  change on them);
* ``<name>-identity`` (``UserAssignedIdentity``) and ``<name>-identity-access``
  (``AccessPolicy``: get, wrap, unwrap): the identity a storage account encrypts as. Its
  principal id exists only once Azure created the identity, so the grant waits for it.
"""

from __future__ import annotations

import ipaddress
from typing import Any

from fnplatform.clouds.azure.common import (
    compact_name,
    resource_group,
)
from fnplatform.clouds.azure.kinds import (
    KEY,
    KEY_VAULT,
    KEY_VAULT_ACCESS_POLICY,
    USER_ASSIGNED_IDENTITY,
)
from fnplatform.clouds.azure.settings import azure_environment
from fnplatform.composition import Composition
from fnplatform.errors import InputError, SpecError
from fnplatform.library.key import KeySpec, add_key, key_deletable, key_id

VAULT_NAME_MAX = 24
ADMIN_KEY_PERMISSIONS = [
    "Create",
    "Delete",
    "Get",
    "GetRotationPolicy",
    "List",
    "Purge",
    "Recover",
    "Rotate",
    "SetRotationPolicy",
    "Update",
]
USER_KEY_PERMISSIONS = ["Get", "UnwrapKey", "WrapKey"]
SOFT_DELETE_DAYS = 90


def _tenant_and_admin(comp: Composition) -> tuple[str, str]:
    settings = azure_environment(comp)
    if not settings.tenantId:
        raise InputError(
            "environment.azure.tenantId", "required: the Entra tenant of the Key Vault"
        )
    if not settings.keyVaultAdminObjectId:
        raise InputError(
            "environment.azure.keyVaultAdminObjectId",
            "required: the object id "
            "of the Crossplane provider's principal, which creates and rotates keys",
        )
    return settings.tenantId, settings.keyVaultAdminObjectId


def vault_name(comp: Composition, key: str) -> str:
    """The globally unique vault name: 3-24 letters, digits and '-', starting with a letter."""
    return compact_name(comp, f"{key}-vault", VAULT_NAME_MAX, prefix="kv")


def _network_rules(comp: Composition) -> dict[str, Any]:
    """Only the provider's ranges and trusted Azure services reach the vault, when the
    platform names the ranges (``azure.keyVaultAllowedIpRanges``).

    Key Vault takes single addresses, not ``/32`` (or ``/31``) ranges, so those are written
    as addresses. ``AzureServices`` lets Storage unwrap its customer-managed key.
    """
    ranges = azure_environment(comp).keyVaultAllowedIpRanges
    if not ranges:
        return {}
    rules: set[str] = set()
    for text in ranges:
        network = ipaddress.ip_network(text)
        if network.prefixlen >= 31:
            rules.update(str(address) for address in network)
        else:
            rules.add(text)
    return {
        "networkAcls": {
            "defaultAction": "Deny",
            "bypass": "AzureServices",
            "ipRules": sorted(rules),
        }
    }


@add_key.on("azure")
def key(comp: Composition, name: str, spec: KeySpec) -> None:
    """Vault, admin access, key ``name``, and the storage identity with its grant."""
    if spec.rotation_days < 28:
        raise SpecError("rotation_days", "Key Vault rotates at most every 28 days")
    tenant, admin = _tenant_and_admin(comp)
    group = resource_group(comp)
    location = spec.region or comp.region
    vault, admin_access = f"{name}-vault", f"{name}-admin-access"
    comp.emit(
        vault,
        KEY_VAULT.new(
            {
                "location": location,
                "resourceGroupName": group,
                "tenantId": tenant,
                "skuName": "standard",
                "purgeProtectionEnabled": True,
                "softDeleteRetentionDays": SOFT_DELETE_DAYS,
                **_network_rules(comp),
            }
        ),
        external_name=vault_name(comp, name),
    )
    comp.emit(
        admin_access,
        KEY_VAULT_ACCESS_POLICY.new(
            {
                "keyVaultIdRef": comp.ref(vault),
                "tenantId": tenant,
                "objectId": admin,
                "keyPermissions": ADMIN_KEY_PERMISSIONS,
            }
        ),
        uses=(vault,),
    )
    comp.emit(
        name,
        KEY.new(
            {
                "name": comp.resource_name(name),
                "keyVaultIdRef": comp.ref(vault),
                "keyType": "RSA",
                "keySize": 3072,
                "keyOpts": ["unwrapKey", "wrapKey"],
                "rotationPolicy": {"automatic": {"timeAfterCreation": f"P{spec.rotation_days}D"}},
            }
        ),
        uses=(admin_access,),
    )
    identity, grant = f"{name}-identity", f"{name}-identity-access"
    comp.emit(
        identity,
        USER_ASSIGNED_IDENTITY.new(
            {
                "name": comp.resource_name(identity),
                "location": location,
                "resourceGroupName": group,
            }
        ),
    )
    principal = comp.needs(identity, "status.atProvider.principalId", by=grant)
    if principal is not None:
        comp.emit(
            grant,
            KEY_VAULT_ACCESS_POLICY.new(
                {
                    "keyVaultIdRef": comp.ref(vault),
                    "tenantId": tenant,
                    "objectId": str(principal),
                    "keyPermissions": USER_KEY_PERMISSIONS,
                }
            ),
            uses=(vault, identity),
        )
    for reader in sorted(spec.decrypters, key=lambda reader: reader.name):
        comp.emit(
            f"{name}-decrypter-{reader.name}",
            KEY_VAULT_ACCESS_POLICY.new(
                {
                    "keyVaultIdRef": comp.ref(vault),
                    "tenantId": tenant,
                    "objectId": reader.principal,
                    "keyPermissions": USER_KEY_PERMISSIONS,
                }
            ),
            uses=(vault,),
        )


@key_id.on("azure")
def azure_key_id(
    comp: Composition, name: str, region: str | None, replica_region: str | None
) -> str | None:
    """The versionless key id once the key exists (storage follows its rotations)."""
    return comp.observed_string(name, "status.atProvider.versionlessId")


#: Deleting the key resource deletes the key (after the cloud's waiting period).
key_deletable.on("azure")
