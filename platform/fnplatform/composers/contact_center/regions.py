"""Where a contact-center endpoint may run: per cloud and platform, from an EnvironmentConfig.

The seed's ``validate-region`` step. The platform team lists allowed regions in the
EnvironmentConfig the Composition selects (``contactCenter.allowedRegions.<cloud>.<platform>``,
see ``examples/contact-center/platform/environment-regions.yaml``); without one the defaults below
apply: regions near each CCaaS platform's own media regions, where a BYOC trunk's latency to
the platform stays low, which each cloud lists in ``clouds/<cloud>/regions.py``. Every region
listed, there or by the platform team, is one of the cloud's own (read through
``library.regions``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from fnplatform.api.validation import parse
from fnplatform.cloud import cloud_profile
from fnplatform.composition import Composition
from fnplatform.errors import InputError
from fnplatform.library.regions import refuse_new, region_problem

ENVIRONMENT_KEY = "contactCenter"


def default_regions(cloud: str, platform: str) -> tuple[str, ...]:
    """The regions near ``platform``'s media regions on ``cloud`` (the cloud's profile lists
    them, :attr:`fnplatform.cloud.CloudProfile.ccaas_regions`)."""
    return tuple(cloud_profile(cloud).ccaas_regions.get(platform, ()))


def default_residency(cloud: str, level: str) -> tuple[str, ...] | None:
    """The regions compliance ``level`` keeps data in on ``cloud`` by default (GDPR: the EU/EEA,
    :attr:`fnplatform.cloud.CloudProfile.eu_regions`), None for a level that keeps it anywhere.
    Not the UK or Switzerland (adequacy decisions, but outside the EEA): a platform that accepts
    them lists them in ``contactCenter.residency.GDPR.<cloud>``."""
    return cloud_profile(cloud).eu_regions if level == "GDPR" else None


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
    return default_regions(cloud, platform)


def _check_listed(comp: Composition, cloud: str, listed: list[str], key: str) -> None:
    """An InputError on ``environment.contactCenter.<key>[i]`` naming the first entry of
    ``listed`` that is no region of ``cloud`` (a warning per entry on an existing endpoint:
    :func:`~fnplatform.library.regions.refuse_new`)."""
    for index, region in enumerate(listed):
        problem = region_problem(comp, cloud, region)
        if problem:
            refuse_new(comp, f"environment.{ENVIRONMENT_KEY}.{key}[{index}]", problem)


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
    allowed = tuple(configured) if configured is not None else default_residency(cloud, level)
    if allowed is not None and region not in allowed:
        raise InputError(
            field,
            f"{region} is outside the regions complianceLevel {level} keeps "
            f"call recordings in ({', '.join(sorted(allowed))})",
        )
