"""Google Cloud's regions, by the names its APIs take (``europe-west1``).

The public list, https://cloud.google.com/about/locations (Compute Engine regions). A region
Google opens later is added here; until then a claim naming it is refused on its field.
"""

from __future__ import annotations

REGIONS = frozenset(
    {
        "africa-south1",
        "asia-east1",
        "asia-east2",
        "asia-northeast1",
        "asia-northeast2",
        "asia-northeast3",
        "asia-south1",
        "asia-south2",
        "asia-southeast1",
        "asia-southeast2",
        "australia-southeast1",
        "australia-southeast2",
        "europe-central2",
        "europe-north1",
        "europe-north2",
        "europe-southwest1",
        "europe-west1",
        "europe-west2",
        "europe-west3",
        "europe-west4",
        "europe-west6",
        "europe-west8",
        "europe-west9",
        "europe-west10",
        "europe-west12",
        "me-central1",
        "me-central2",
        "me-west1",
        "northamerica-northeast1",
        "northamerica-northeast2",
        "northamerica-south1",
        "southamerica-east1",
        "southamerica-west1",
        "us-central1",
        "us-east1",
        "us-east4",
        "us-east5",
        "us-south1",
        "us-west1",
        "us-west2",
        "us-west3",
        "us-west4",
    }
)

#: Its regions inside the EU/EEA, where GDPR data stays. Not the UK or Switzerland (adequacy
#: decisions, but outside the EEA): a platform that accepts them lists them itself.
EU_REGIONS: tuple[str, ...] = (
    "europe-central2",
    "europe-north1",
    "europe-north2",
    "europe-southwest1",
    "europe-west1",
    "europe-west3",
    "europe-west4",
    "europe-west8",
    "europe-west9",
    "europe-west10",
    "europe-west12",
)

#: By CCaaS platform, the regions near the platform's own media regions, where a BYOC trunk's
#: latency to the platform stays low: where a contact-center endpoint may run by default.
CCAAS_REGIONS: dict[str, tuple[str, ...]] = {
    "genesys-cloud": (
        "asia-northeast1",
        "australia-southeast1",
        "europe-west1",
        "europe-west2",
        "europe-west3",
        "northamerica-northeast1",
        "us-central1",
        "us-east1",
        "us-east4",
        "us-west1",
    ),
    "nice-cxone": (
        "australia-southeast1",
        "europe-west2",
        "europe-west3",
        "us-east1",
        "us-west1",
    ),
}
