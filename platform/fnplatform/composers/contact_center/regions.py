"""Where a contact-center endpoint may run: per cloud and platform, from an EnvironmentConfig.

The seed's ``validate-region`` step. The platform team lists allowed regions in the
EnvironmentConfig the Composition selects (``contactCenter.allowedRegions.<cloud>.<platform>``,
see ``examples/contact-center/platform/environment-regions.yaml``); without one the defaults below
apply: regions near each CCaaS platform's own media regions, where a BYOC trunk's latency to
the platform stays low. Every region listed, here or by the platform team, is one of the
cloud's own (``clouds/<cloud>/regions.py``, read through ``library.regions``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from fnplatform.api.validation import parse
from fnplatform.composition import Composition
from fnplatform.errors import InputError
from fnplatform.library.regions import region_problem

ENVIRONMENT_KEY = "contactCenter"

DEFAULT_REGIONS: dict[str, dict[str, tuple[str, ...]]] = {
    "aws": {
        "genesys-cloud": (
            "ap-northeast-1",
            "ap-northeast-2",
            "ap-south-1",
            "ap-southeast-2",
            "ca-central-1",
            "eu-central-1",
            "eu-west-1",
            "eu-west-2",
            "sa-east-1",
            "us-east-1",
            "us-east-2",
            "us-west-2",
        ),
        "nice-cxone": (
            "ap-northeast-1",
            "ap-southeast-2",
            "ca-central-1",
            "eu-central-1",
            "eu-west-2",
            "us-east-1",
            "us-west-2",
        ),
    },
    "azure": {
        "genesys-cloud": (
            "australiaeast",
            "canadacentral",
            "eastus",
            "eastus2",
            "germanywestcentral",
            "japaneast",
            "northeurope",
            "uksouth",
            "westeurope",
            "westus2",
        ),
        "nice-cxone": (
            "australiaeast",
            "canadacentral",
            "eastus",
            "uksouth",
            "westeurope",
            "westus2",
        ),
    },
    "gcp": {
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
    },
}


#: Regions inside the EU/EEA, where GDPR endpoints keep recordings, replicas and failover.
#: Not the UK or Switzerland (adequacy decisions, but outside the EEA): a platform that accepts
#: them lists them in ``contactCenter.residency.GDPR.<cloud>``.
EU_REGIONS: dict[str, tuple[str, ...]] = {
    "aws": (
        "eu-central-1",
        "eu-central-2",
        "eu-north-1",
        "eu-south-1",
        "eu-south-2",
        "eu-west-1",
        "eu-west-3",
    ),
    "azure": (
        "francecentral",
        "germanywestcentral",
        "italynorth",
        "northeurope",
        "norwayeast",
        "polandcentral",
        "spaincentral",
        "swedencentral",
        "westeurope",
    ),
    "gcp": (
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
    ),
}
#: Compliance level -> the regions it keeps data in, by cloud.
DEFAULT_RESIDENCY: dict[str, dict[str, tuple[str, ...]]] = {"GDPR": EU_REGIONS}


class ContactCenterEnvironment(BaseModel):
    """``environment.contactCenter``."""

    model_config = ConfigDict(extra="ignore")

    #: cloud -> platform -> allowed regions. A listed cloud replaces that cloud's defaults.
    allowedRegions: dict[str, dict[str, list[str]]] = Field(default_factory=dict)  # noqa: N815
    #: compliance level -> cloud -> the regions its data may be in (replaces the default).
    residency: dict[str, dict[str, list[str]]] = Field(default_factory=dict)


def settings(comp: Composition) -> ContactCenterEnvironment:
    """The parsed ``contactCenter`` environment block."""
    raw: Mapping[str, Any] | None = comp.env.get(ENVIRONMENT_KEY)
    return parse(ContactCenterEnvironment, raw or {}, f"environment.{ENVIRONMENT_KEY}")


def allowed_regions(comp: Composition, cloud: str, platform: str) -> tuple[str, ...]:
    """The regions ``platform`` endpoints may use on ``cloud``: the platform team's list, each
    checked against the cloud's regions (a typo there would allow a region no claim can use),
    else the defaults (tests hold them to the cloud's regions)."""
    configured = settings(comp).allowedRegions.get(cloud)
    if configured is not None:
        listed = configured.get(platform, [])
        _check_listed(comp, cloud, listed, f"allowedRegions.{cloud}.{platform}")
        return tuple(sorted(listed))
    return DEFAULT_REGIONS[cloud][platform]


def _check_listed(comp: Composition, cloud: str, listed: list[str], key: str) -> None:
    """An InputError on ``environment.contactCenter.<key>[i]`` naming the first entry of
    ``listed`` that is no region of ``cloud``."""
    for index, region in enumerate(listed):
        problem = region_problem(comp, cloud, region)
        if problem:
            raise InputError(f"environment.{ENVIRONMENT_KEY}.{key}[{index}]", problem)


def check_region(comp: Composition, cloud: str, platform: str, region: str, field: str) -> None:
    """An InputError on ``field`` listing the allowed regions when ``region`` isn't one."""
    allowed = allowed_regions(comp, cloud, platform)
    if region not in allowed:
        listed = ", ".join(allowed) or "none"
        raise InputError(
            field, f"{region} is not an allowed {cloud} region for {platform}; allowed: {listed}"
        )


def check_residency(comp: Composition, cloud: str, level: str, region: str, field: str) -> None:
    """An InputError on ``field`` when ``level`` keeps data out of ``region`` (GDPR: EU/EEA).

    Checked for the primary, replication and failover regions before anything is composed:
    a replica in us-east-1 would move EU recordings out of the EU.
    """
    configured = settings(comp).residency.get(level, {}).get(cloud)
    if configured is not None:
        _check_listed(comp, cloud, configured, f"residency.{level}.{cloud}")
    allowed = (
        tuple(configured) if configured is not None else DEFAULT_RESIDENCY.get(level, {}).get(cloud)
    )
    if allowed is not None and region not in allowed:
        raise InputError(
            field,
            f"{region} is outside the regions complianceLevel {level} keeps "
            f"call recordings in ({', '.join(sorted(allowed))})",
        )
