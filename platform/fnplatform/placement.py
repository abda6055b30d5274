"""Where a composite's cloud resources go: cloud, region and scope, set by the composer.

Each domain spells placement its own way (a cluster composite has a ``cloud`` label and
``spec.forProvider.location``; a contact-center endpoint has ``spec.cloud`` and
``spec.region``). The composer parses its own spec and says where things go with
:meth:`fnplatform.composition.Composition.place`; the registry and every cloud builder read
placement only from here. Each value remembers the user field it came from, so an error about
it names the field the user actually wrote.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from fnplatform.cloud import Cloud, cloud_profile
from fnplatform.errors import InputError


@dataclass(frozen=True)
class Sourced:
    """A placement value and the user field it came from."""

    value: str | None
    field: str


@dataclass(frozen=True)
class Placement:
    """Cloud, region and scope (AWS account, GCP project, Azure resource group)."""

    cloud: Sourced
    region: Sourced
    scope: Sourced

    def required(self, which: str, what: str) -> str:
        """The value of ``which`` (``region``, ``scope``), or an InputError on its field."""
        sourced: Sourced = getattr(self, which)
        if not sourced.value:
            raise InputError(sourced.field, f"required: {what}")
        return sourced.value


UNPLACED = Placement(
    cloud=Sourced(None, "spec.cloud"),
    region=Sourced(None, "spec.region"),
    scope=Sourced(None, "environment"),
)


def cloud_settings(env: Mapping[str, Any], cloud: Cloud) -> Mapping[str, Any]:
    """The environment's ``<cloud>`` block (``environment.aws``...), empty when unset."""
    section = env.get(cloud) or {}
    if not isinstance(section, Mapping):
        raise InputError(f"environment.{cloud}", "must be an object")
    return section


def scope_from_environment(env: Mapping[str, Any], cloud: Cloud) -> Sourced:
    """The account, project or resource group the platform configures for ``cloud``: the key
    its profile names (:attr:`fnplatform.cloud.CloudProfile.scope_key`).

    Every module reads it here. Unset is not an error yet: :meth:`Placement.required` (what a
    builder that names the scope calls) raises it on ``environment.<cloud>.<key>``, or a
    composer that always needs it checks with :func:`required_scope`.
    """
    key = cloud_profile(cloud).scope_key
    value = cloud_settings(env, cloud).get(key)
    return Sourced(str(value) if value else None, f"environment.{cloud}.{key}")


def required_scope(env: Mapping[str, Any], cloud: Cloud) -> Sourced:
    """:func:`scope_from_environment`, an InputError on its key when the platform set none."""
    scope = scope_from_environment(env, cloud)
    if not scope.value:
        raise InputError(scope.field, f"required: {cloud_profile(cloud).scope_what}")
    return scope
