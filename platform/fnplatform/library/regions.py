"""Whether a region a user or platform team wrote is one of the cloud's.

Each cloud lists its regions once (``clouds/<cloud>/regions.py``, declared in its profile,
:attr:`fnplatform.cloud.CloudProfile.regions`); every module that takes a region from a claim or
an EnvironmentConfig checks it here, before anything is composed. Without the check a typo
(``europe-wset1``) or an invented region reaches the provider, which fails only when the
cloud refuses the first resource, or, where a network is global (GCP), never before the
database is attempted.
"""

from __future__ import annotations

from fnplatform.cloud import cloud_profile
from fnplatform.composition import Composition
from fnplatform.errors import InputError, closest


def region_problem(comp: Composition, cloud: str, region: str) -> str | None:
    """Why ``region`` is no region of ``cloud`` (naming the closest one, else all), or None."""
    known = cloud_profile(cloud).regions
    if region in known:
        return None
    ordered = sorted(known)  # a set's order varies between processes: the message must not
    guess = closest(region, ordered)
    hint = f"did you mean {guess}?" if guess else f"its regions: {', '.join(ordered)}"
    return f"{region} is not a region of {cloud}; {hint}"


def check_region(comp: Composition, cloud: str, region: str, field: str) -> None:
    """An InputError on ``field`` when ``region`` is no region of ``cloud`` (a warning on a
    composite that already exists: :func:`refuse_new`)."""
    problem = region_problem(comp, cloud, region)
    if problem:
        refuse_new(comp, field, problem)


def refuse_new(comp: Composition, field: str, problem: str) -> None:
    """Refuse a region no release before this check refused, on a new composite only.

    Releases up to 0.1.0 composed any region. A composite they composed keeps composing with
    a Warning event (reason ``UnknownRegion``) saying what to fix, as the deprecation policy
    promises (docs/upgrading.md): a fatal result would stop it reconciling, and its resources
    with it, until someone edits it. A composite with nothing observed yet is new: refused.
    """
    if not len(comp.observed):
        raise InputError(field, problem)
    comp.event(
        f"{field}: {problem} (this composite exists, so it is still composed; a new one is "
        "refused until the region is one of the cloud's)",
        warning=True,
        reason="UnknownRegion",
    )
