"""GCP dual-regions: where one Cloud Storage bucket keeps its objects in two regions, and
where Cloud KMS must hold the key of such a bucket.

A dual-region bucket is Cloud Storage's own cross-region replication (asynchronous, with an
optional 15-minute turbo RPO): one bucket, so one retention policy (the lock), one default
key and one set of labels hold for both copies. Its location is fixed at creation
(https://cloud.google.com/storage/docs/locations: "You permanently set a geographic location
... when you create a bucket"; the pinned CRD: "If any of the data_locations changes, it will
recreate the bucket"), so only a new bucket can be dual-region.

Two kinds (https://cloud.google.com/storage/docs/locations#location-dr):

* **predefined** dual-regions, a location code of their own (``NAM4`` is us-central1 and
  us-east1) and no ``customPlacementConfig``;
* **configurable** dual-regions: two regions listed under one location code, the bucket's
  ``location`` being that code (``US``) and ``customPlacementConfig.dataLocations`` the pair
  (the gcloud docs: "set the --location flag to be the location code associated with the
  underlying regions").

The key: "You must create the Cloud KMS key ring in the same location as the data you intend
to encrypt ... For most dual-regions, you must create the Cloud KMS key ring in the associated
multi-region ... For the asia1, eur4, and nam4 predefined dual-regions, you must create the key
ring in the same predefined dual-region"
(https://cloud.google.com/storage/docs/encryption/customer-managed-keys#restrictions). So only
the dual-regions with a documented key location are placed here: ASIA1, EUR4 and NAM4 (keys
in ``asia1``, ``eur4``, ``nam4``), and configurable pairs under the ``US``, ``EU`` and ``ASIA``
multi-regions (keys in Cloud KMS's ``us``, ``europe`` and ``asia``). The other predefined
dual-regions (EUR5, EUR7, EUR8 pair London or Zürich with the EU) and the national location
codes (AU, CA, DE, IN, IT) have no multi-region Cloud Storage names for their key: a
``bucket-replication`` gap says so rather than composing a key Cloud Storage may refuse.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class DualRegion:
    """Where a dual-region bucket is, and where its CMEK key ring must be."""

    location: str  # the bucket's ``location``: a predefined code (NAM4) or a multi-region (US)
    #: ``customPlacementConfig.dataLocations`` of a configurable dual-region (upper-case, as
    #: the API reports them), () for a predefined one.
    data_locations: tuple[str, ...]
    key_location: str  # the Cloud KMS location of its key ring


#: Predefined dual-regions whose key ring location Cloud Storage names (the same code).
PREDEFINED: dict[frozenset[str], str] = {
    frozenset({"asia-northeast1", "asia-northeast2"}): "ASIA1",
    frozenset({"europe-north1", "europe-west4"}): "EUR4",
    frozenset({"us-central1", "us-east1"}): "NAM4",
}
#: Predefined dual-regions without a documented key ring location (no multi-region holds them).
UNKEYED_PREDEFINED: dict[frozenset[str], str] = {
    frozenset({"europe-west1", "europe-west2"}): "EUR5",
    frozenset({"europe-west2", "europe-west3"}): "EUR7",
    frozenset({"europe-west3", "europe-west6"}): "EUR8",
}
#: Configurable dual-region regions of the multi-region location codes, from the locations
#: page's table. us-east5 is left out: its pairing is restricted (a footnote of that table).
CONFIGURABLE: dict[str, frozenset[str]] = {
    "ASIA": frozenset({"asia-east1", "asia-southeast1"}),
    "EU": frozenset(
        {
            "europe-central2",
            "europe-north1",
            "europe-southwest1",
            "europe-west1",
            "europe-west3",
            "europe-west4",
            "europe-west8",
            "europe-west9",
            "europe-west10",
            "europe-west12",
        }
    ),
    "US": frozenset(
        {
            "us-central1",
            "us-east1",
            "us-east4",
            "us-south1",
            "us-west1",
            "us-west2",
            "us-west3",
            "us-west4",
        }
    ),
}
#: Pairs of a multi-region's list that Cloud Storage offers only under a national code (DE:
#: Frankfurt and Berlin, IT: Milan and Turin), whose key location is not documented.
NATIONAL_ONLY: frozenset[frozenset[str]] = frozenset(
    {
        frozenset({"europe-west3", "europe-west10"}),
        frozenset({"europe-west8", "europe-west12"}),
    }
)
#: The Cloud KMS multi-region of each Cloud Storage multi-region.
KEY_MULTI_REGION: dict[str, str] = {"ASIA": "asia", "EU": "europe", "US": "us"}


def dual_region(primary: str, copy: str) -> DualRegion | str:
    """The dual-region of ``primary`` and ``copy`` (GCP region names), or why there is none
    a CMEK bucket can be placed in."""
    pair = frozenset({primary, copy})
    if pair in PREDEFINED:
        code = PREDEFINED[pair]
        return DualRegion(code, (), code.lower())
    if pair in UNKEYED_PREDEFINED:
        return (
            f"{primary} and {copy} form the predefined dual-region "
            f"{UNKEYED_PREDEFINED[pair]}, for which Cloud Storage names no Cloud KMS "
            "location for a customer-managed key (only asia1, eur4 and nam4, and the US, EU "
            "and ASIA multi-regions)"
        )
    for code, regions in sorted(CONFIGURABLE.items()):
        if pair <= regions and pair not in NATIONAL_ONLY:
            return DualRegion(code, tuple(sorted(r.upper() for r in pair)), KEY_MULTI_REGION[code])
    return (
        f"{primary} and {copy} are in no dual-region whose customer-managed key has a "
        "documented Cloud KMS location (the predefined ASIA1, EUR4 and NAM4, or two "
        "regions of one multi-region: US, EU or ASIA)"
    )
