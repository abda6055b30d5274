"""A customer-managed encryption key: spec, call and values.

A cloud registers its builder with ``@add_<capability>.on("<cloud>")`` and its answers with
``@<value>.on("<cloud>")`` in ``clouds/<cloud>/key.py``, the home each object declares.
"""

from __future__ import annotations

from dataclasses import dataclass

from fnplatform.library.bucket import BucketReader
from fnplatform.library.capability import Capability, Flag, Value


@dataclass(frozen=True)
class KeySpec:
    """A customer-managed encryption key with automatic rotation, usable by the cloud's storage.

    The key's grants let the storage service of its cloud use it for the buckets that name it:
    AWS a key policy for S3 in the account, GCP the project's Cloud Storage service agent, Azure
    a user-assigned identity the storage account runs as.
    """

    description: str
    rotation_days: int = 365
    region: str | None = None  # None: the placed region (a replica's key lives by its replica)
    #: The key encrypts a bucket keeping a copy there (:attr:`BucketSpec.geo_replica_region`):
    #: a cloud whose key must be where both copies are puts it there (GCP: a dual-region
    #: bucket's key ring in that dual-region's Cloud KMS location); others ignore it.
    geo_replica_region: str | None = None
    #: Principals besides the storage service that may decrypt with the key, in the cloud's
    #: form (see :class:`BucketReader`): a CDN reading objects it encrypts, say.
    decrypters: tuple[BucketReader, ...] = ()


add_key = Capability[KeySpec](
    "key",
    "A customer-managed key with rotation, and the grants its cloud's storage needs.",
    home="key",
)


key_id = Value[[str, str | None, str | None], str | None](
    "key_id",
    "The id of composed key ``name`` (its KeySpec.region and geo_replica_region), once known.",
    home="key",
)


#: Deleting the key resource deletes the key; a cloud without the flag can only destroy its
#: versions (Cloud KMS keeps every CryptoKey), so a composer keeps the key on delete.
key_deletable = Flag("key_deletable", "Deleting the key resource deletes the key.", home="key")
