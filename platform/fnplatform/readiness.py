"""Readiness of composed resources, derived from observed state by each kind's rule.

A resource is ready when its observed ``Ready`` condition is True (or, for kinds without
conditions such as ProviderConfigs, when it exists). Crossplane derives the composite's own
readiness from these.
"""

from __future__ import annotations

from crossplane.function.proto.v1 import run_function_pb2 as fnv1

from fnplatform.composition import Composition, Emitted
from fnplatform.kinds import Readiness, kind_of


def is_ready(comp: Composition, emitted: Emitted) -> bool:
    """Whether ``emitted`` is ready now."""
    if emitted.ready is not None:
        return emitted.ready
    if emitted.name not in comp.observed:
        return False
    if kind_of(emitted.body).readiness is Readiness.EXISTS:
        return True
    return comp.observed.condition_true(emitted.name)


def readiness(comp: Composition, emitted: Emitted) -> int:
    """The protobuf readiness of ``emitted``."""
    return fnv1.READY_TRUE if is_ready(comp, emitted) else fnv1.READY_FALSE
