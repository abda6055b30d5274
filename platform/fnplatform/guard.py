"""Never lose a stateful resource to a transient problem, and never silently.

Three rules keep buckets, queues, databases, pools and Shoots alive across bad passes:

1. Every problem the user can fix (an invalid spec, a missing EnvironmentConfig or flavor)
   is raised as an error and becomes a *fatal* result, on which Crossplane keeps the previous
   desired state untouched (:mod:`function.dispatch`).
2. A requirement that is not fetched yet composes nothing but asks again
   (:mod:`fnplatform.runner`); Crossplane only uses the response once requirements settle.
3. A resource that already exists is never held back because something it uses is briefly
   unobserved (:func:`fnplatform.dependencies.hold_unmet`).

What is left is a removal the composite really asks for (a pool deleted from the spec, a
private cluster made public): it goes ahead, announced by a warning event naming each
stateful resource, so nobody loses data without a trace.
"""

from __future__ import annotations

from fnplatform.composition import Composition
from fnplatform.kinds import is_stateful


def dropped_stateful(comp: Composition) -> list[str]:
    """Observed stateful resources this pass removes from desired state (an Object counts
    as stateful when the kind it wraps is)."""
    gone = (name for name in comp.observed if name not in comp.desired)
    return [name for name in gone if is_stateful(comp.observed[name])]


def announce_removals(comp: Composition) -> None:
    """A warning event for every stateful resource the composite no longer asks for."""
    for name in dropped_stateful(comp):
        comp.event(f"removing stateful resource {name}: no longer requested", warning=True)
