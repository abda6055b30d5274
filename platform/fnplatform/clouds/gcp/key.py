"""GCP key: a Cloud KMS key ring, a rotating crypto key, and the storage service agent's grant.

``<name>-ring`` (``KeyRing``) holds ``<name>`` (``CryptoKey``, ENCRYPT_DECRYPT, rotated every
``rotation_days``); ``<name>-storage-grant`` (``CryptoKeyIAMMember``) lets the project's Cloud
Storage service agent, ``service-<project number>@gs-project-accounts.iam.gserviceaccount.com``,
encrypt and decrypt with it: without that grant a bucket with this default key rejects every
write. The project number comes from the environment (``gcp.projectNumber``): it is not the
project id and cannot be derived from it.

Key rings and crypto keys cannot be deleted in Cloud KMS (deleting the resource only forgets
it; a key's versions are destroyed after ``destroyScheduledDuration``): both are stateful.

The ring is where the data it encrypts is: the key's region, or, for a key whose bucket keeps
a copy in a second region (``KeySpec.geo_replica_region``), the Cloud KMS location Cloud
Storage requires for that dual-region's key (:mod:`.dual_region`: ``nam4``, ``us``,
``europe``...). A ring that exists stays where it is (:func:`key_location`): Cloud KMS
resources "can't be moved to a different location after creation"
(https://cloud.google.com/kms/docs/locations).
"""

from __future__ import annotations

from fnplatform.clouds.gcp import kinds
from fnplatform.clouds.gcp.common import project
from fnplatform.clouds.gcp.dual_region import DualRegion, dual_region
from fnplatform.clouds.gcp.settings import gcp_environment
from fnplatform.composition import Composition
from fnplatform.errors import InputError, SpecError
from fnplatform.library.key import KeySpec, add_key, key_id
from fnplatform.naming import dns_label

ENCRYPTER_DECRYPTER = "roles/cloudkms.cryptoKeyEncrypterDecrypter"
DESTROY_AFTER = "2592000s"  # 30 days between a version's destruction request and its end


def storage_service_agent(comp: Composition) -> str:
    """The Cloud Storage service agent of the placed project, as an IAM member."""
    number = gcp_environment(comp).projectNumber
    if not number:
        raise InputError(
            "environment.gcp.projectNumber",
            "required: the project number whose "
            "Cloud Storage service agent must use the bucket's key",
        )
    return f"serviceAccount:service-{number}@gs-project-accounts.iam.gserviceaccount.com"


def _ring_name(comp: Composition, key: str) -> str:
    """The key ring's name (its ``metadata.name``): the existing ring's, else derived from the
    composite's :attr:`~Composition.global_name_base`. A ring can never be deleted and its
    name never reused, so a re-created namespaced composite must not derive the same one."""
    return comp.global_name(f"{key}-ring", lambda base: dns_label(base, key, "ring"))


def crypto_key_id(comp: Composition, key: str, location: str) -> str:
    """``projects/<p>/locations/<location>/keyRings/<ring>/cryptoKeys/<key>`` of composed
    ``key`` whose ring is in ``location`` (:func:`key_location`)."""
    return (
        f"projects/{project(comp)}/locations/{location}/keyRings/"
        f"{_ring_name(comp, key)}/cryptoKeys/{comp.resource_name(key)}"
    )


def key_location(comp: Composition, key: str, region: str, replica_region: str | None) -> str:
    """The Cloud KMS location of composed key ``key``'s ring: where the ring exists (it never
    moves), else the location Cloud Storage requires for the key of a dual-region bucket of
    ``region`` and ``replica_region``, else ``region``. The bucket builder asks the same, so a
    bucket and its key always agree on where the key is."""
    existing = comp.observed_string(f"{key}-ring", "spec.forProvider.location")
    if existing:
        return existing
    if replica_region is not None:
        placed = dual_region(region, replica_region)
        if isinstance(placed, DualRegion):
            return placed.key_location
    return region


@add_key.on("gcp")
def key(comp: Composition, name: str, spec: KeySpec) -> None:
    """Key ring ``<name>-ring``, crypto key ``name``, and the storage service agent's grant."""
    if spec.rotation_days < 1:
        raise SpecError("rotation_days", "must be at least 1 day")
    location = key_location(comp, name, spec.region or comp.region, spec.geo_replica_region)
    ring = f"{name}-ring"
    comp.emit(
        ring,
        {
            **kinds.KEY_RING.new({"project": project(comp), "location": location}),
            "metadata": {"name": _ring_name(comp, name)},
        },
    )
    comp.emit(
        name,
        kinds.CRYPTO_KEY.new(
            {
                "keyRingRef": comp.ref(ring),
                "purpose": "ENCRYPT_DECRYPT",
                "rotationPeriod": f"{spec.rotation_days * 86400}s",
                "destroyScheduledDuration": DESTROY_AFTER,
                "versionTemplate": {
                    "algorithm": "GOOGLE_SYMMETRIC_ENCRYPTION",
                    "protectionLevel": "SOFTWARE",
                },
            }
        ),
        uses=(ring,),
    )
    comp.emit(
        f"{name}-storage-grant",
        kinds.CRYPTO_KEY_IAM_MEMBER.new(
            {
                "cryptoKeyIdRef": comp.ref(name),
                "role": ENCRYPTER_DECRYPTER,
                "member": storage_service_agent(comp),
            }
        ),
        uses=(name,),
    )
    for reader in sorted(spec.decrypters, key=lambda reader: reader.name):
        comp.emit(
            f"{name}-decrypter-{reader.name}",
            kinds.CRYPTO_KEY_IAM_MEMBER.new(
                {
                    "cryptoKeyIdRef": comp.ref(name),
                    "role": ENCRYPTER_DECRYPTER
                    if reader.write
                    else "roles/cloudkms.cryptoKeyDecrypter",
                    "member": reader.principal,
                }
            ),
            uses=(name,),
        )


@key_id.on("gcp")
def gcp_key_id(comp: Composition, name: str, region: str | None, replica_region: str | None) -> str:
    """The crypto key's resource id (deterministic), in its ring's :func:`key_location`."""
    return crypto_key_id(
        comp, name, key_location(comp, name, region or comp.region, replica_region)
    )
