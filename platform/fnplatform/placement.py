"""Where a composite's cloud resources go: cloud, region and scope, set by the composer.

Each domain spells placement its own way (a cluster composite has a ``cloud`` label and
``spec.forProvider.location``; a contact-center endpoint has ``spec.cloud`` and
``spec.region``). The composer parses its own spec and says where things go with
:meth:`fnplatform.composition.Composition.place`; the registry and every cloud builder read
placement only from here. Each value remembers the user field it came from, so an error about
it names the field the user actually wrote.
"""

from __future__ import annotations

from dataclasses import dataclass

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
