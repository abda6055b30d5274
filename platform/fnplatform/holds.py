"""Why a resource is held back (not created yet): typed, so nothing parses a message back.

A :class:`Hold` is what :meth:`fnplatform.composition.Composition.hold` records: each
:class:`Wait` names the composed resource it waits for (None for something outside the
composite: a ConfigMap the platform provides, "a node group") and what about it. Import reads
:attr:`Hold.resources` to leave out what waits inside an adopted resource; the Composed
condition shows :func:`str` of it ("db status.atProvider.endpoint, key Ready").
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Wait:
    """One thing a held-back resource waits for: ``resource``'s ``detail``."""

    resource: str | None
    detail: str = ""

    def __str__(self) -> str:
        return " ".join(part for part in (self.resource, self.detail) if part)


READY = "Ready"
CONNECTION_DETAILS = "connection details"


@dataclass(frozen=True)
class Hold:
    """Everything a held-back resource waits for."""

    waits_for: tuple[Wait, ...]

    @property
    def resources(self) -> set[str]:
        """The composed resources it waits for."""
        return {wait.resource for wait in self.waits_for if wait.resource}

    def __str__(self) -> str:
        return ", ".join(str(wait) for wait in self.waits_for)
