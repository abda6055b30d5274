"""Readiness of composed resources, derived from observed state by each kind's rule.

A resource is ready when its observed ``Ready`` condition is True (or, for kinds without
conditions such as ProviderConfigs, when it exists). Crossplane derives the composite's own
readiness from these.
"""

from __future__ import annotations

from typing import Any

from fnplatform.composition import Composition, Emitted
from fnplatform.kinds import Readiness, kind_of
from fnplatform.observation.resources import ObservedResources


def is_ready(comp: Composition, emitted: Emitted) -> bool:
    """Whether ``emitted`` is ready now."""
    return ready_now(comp.observed, emitted.name, emitted.ready, exists_is_ready(emitted.body))


def exists_is_ready(body: dict[str, Any]) -> bool:
    """Whether a resource of ``body``'s kind is Ready once it exists (it has no conditions)."""
    return kind_of(body).readiness is Readiness.EXISTS


def ready_now(
    observed: ObservedResources, name: str, explicit: bool | None, exists_ready: bool
) -> bool:
    """The rule: an ``explicit`` readiness the composer set, else observed ``name`` exists and
    either its kind is Ready by existing (``exists_ready``) or it reports ``Ready=True``."""
    if explicit is not None:
        return explicit
    if name not in observed:
        return False
    return exists_ready or observed.condition_true(name)
