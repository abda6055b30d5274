"""The clouds this function composes for: one type, one order, and what each cloud declares.

``Cloud`` is the type of every ``cloud`` field and of every registration on a capability
(:mod:`fnplatform.library.capability`). It stays a ``Literal``: the XRDs' ``cloud`` enums are
generated from it (``apis/``), so they list the clouds in one order, and mypy checks every
``on("<cloud>")``. Everything else the shared code knows of a cloud is in the cloud's own folder:
``clouds/<cloud>/profile.py`` declares a :class:`CloudProfile` (scope key, tag style, regions,
provider family), and the floor reads it with :func:`cloud_profile`. A cloud folder whose name
is not in ``Cloud``, or a name of ``Cloud`` without a folder and profile, is an error
(:func:`fnplatform.clouds.discover`, ``tests/capabilities/test_layout.py``), so a new cloud
fails loudly until both are there.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal, get_args

from fnplatform.tagging import TagStyle

Cloud = Literal["aws", "azure", "gcp"]

#: Every cloud, in the one order the APIs list them.
CLOUDS: tuple[Cloud, ...] = get_args(Cloud)


@dataclass(frozen=True)
class CloudProfile:
    """What the shared code knows of one cloud, declared once in ``clouds/<cloud>/profile.py``.

    Builders and answers live on the library's capabilities; this is the rest: what placement,
    tagging, region checks, the test harness and the tools ask of a cloud by name.
    """

    name: Cloud
    #: The key of the platform's EnvironmentConfig block ``environment.<cloud>`` naming the
    #: scope resources go in (``accountId``, ``project``, ``resourceGroup``).
    scope_key: str
    #: That scope in words, for errors: "the AWS account id".
    scope_what: str
    #: How the cloud's kinds carry tags (its kinds name it; tests render with it).
    tag_style: TagStyle
    #: The cloud's regions, by the names its APIs take (``clouds/<cloud>/regions.py``).
    regions: frozenset[str]
    #: Its regions inside the EU/EEA: where GDPR data stays.
    eu_regions: tuple[str, ...]
    #: By CCaaS platform (``genesys-cloud``, ``nice-cxone``): regions near its media regions,
    #: where a contact-center endpoint may run unless the platform team lists others.
    ccaas_regions: Mapping[str, tuple[str, ...]]
    #: The upjet provider family (``provider-upjet-aws``): its CRDs' folder under the shared
    #: CRDs, its members ``provider-<cloud>-<service>``.
    provider: str
    #: The API group suffix of its kinds (``aws.upbound.io``).
    api_group: str
    #: ``forProvider`` fields that place a resource (``region``...), each with why changing it
    #: replaces the resource (``tools/derive_immutable_fields.py``).
    placement_fields: tuple[tuple[str, str], ...]
    #: A region and scope that are valid on the cloud, for tests and examples.
    example_region: str
    example_scope: str
    #: Settings a composite needs in ``environment.<cloud>`` besides the scope before anything
    #: composes there (tests' platform environment).
    example_settings: Mapping[str, str] = field(default_factory=dict)


_DECLARED: dict[str, CloudProfile] = {}


def declare(profile: CloudProfile) -> CloudProfile:
    """Register ``profile`` (``clouds/<cloud>/profile.py`` does, on import); returns it."""
    if profile.name not in CLOUDS:
        msg = f"clouds/{profile.name}: no cloud of fnplatform.cloud.Cloud; add it to the Literal"
        raise ValueError(msg)
    if profile.name in _DECLARED:
        raise ValueError(f"{profile.name} is declared twice")
    _DECLARED[profile.name] = profile
    return profile


def _loaded() -> dict[str, CloudProfile]:
    """The declared profiles, loading the cloud packages first if nothing has yet.

    Imported here, not at module level: ``fnplatform.clouds`` imports the library, which
    imports this module.
    """
    importlib.import_module("fnplatform.clouds")
    return _DECLARED


def cloud_profile(cloud: str) -> CloudProfile:
    """What ``cloud`` declares; a ValueError for a cloud without a profile."""
    found = _loaded().get(cloud)
    if found is None:
        msg = f"no cloud {cloud!r} declares a profile; clouds: {', '.join(sorted(_DECLARED))}"
        raise ValueError(msg)
    return found


def cloud_profiles() -> tuple[CloudProfile, ...]:
    """Every declared cloud's profile, in the order of :data:`CLOUDS`."""
    declared = _loaded()
    return tuple(declared[name] for name in CLOUDS if name in declared)
