"""Never lose a stateful resource to a transient problem, and never silently.

Three rules keep buckets, queues, databases, pools and Shoots alive across bad passes:

1. Every problem the user can fix (an invalid spec, a missing EnvironmentConfig or flavor)
   is raised as an error and becomes a *fatal* result, on which Crossplane keeps the previous
   desired state untouched (:mod:`function.dispatch`).
2. A requirement that is not fetched yet composes nothing but asks again
   (:mod:`fnplatform.engine.runner`); Crossplane only uses the response once requirements settle.
3. A resource that already exists is never held back because something it uses is briefly
   unobserved (:func:`fnplatform.rules.dependencies.hold_unmet`).

What is left is a removal the composite really asks for (a pool deleted from the spec, a
private cluster made public): it goes ahead, announced by a warning event naming each
stateful resource, so nobody loses data without a trace. A change the cloud can only make by
replacing an existing stateful resource (spot capacity of a node pool, say) is refused by
:func:`refuse_replacement`, naming the field, instead of being sent to the provider.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from fnplatform.composition import Composition
from fnplatform.errors import SpecError
from fnplatform.kinds import is_stateful
from fnplatform.merge import get_path


def dropped_stateful(comp: Composition) -> list[str]:
    """Observed stateful resources this pass removes from desired state (an Object counts
    as stateful when the kind it wraps is)."""
    gone = (name for name in comp.observed if name not in comp.desired)
    return [name for name in gone if is_stateful(comp.observed[name])]


def announce_removals(comp: Composition) -> None:
    """A warning event for every stateful resource the composite no longer asks for."""
    for name in dropped_stateful(comp):
        comp.event(f"removing stateful resource {name}: no longer requested", warning=True)


def refuse_replacement(
    comp: Composition,
    name: str,
    for_provider: Mapping[str, Any],
    fixed: Mapping[str, tuple[str, Any]],
    *,
    what: str,
) -> None:
    """A SpecError when existing ``name`` would change a field its cloud can only change by
    replacing it.

    ``fixed`` maps a ``forProvider`` path to the spec attribute it comes from and the value
    the cloud assumes when it is unset (a pool created before the field was stated has it). A
    path this pass does not set is not ours and is never compared.
    """
    if name not in comp.observed:
        return
    for path, (attribute, unset) in fixed.items():
        wanted = get_path(for_provider, path)
        if wanted is None:
            continue
        existing = comp.observed_value(name, f"spec.forProvider.{path}")
        if (unset if existing is None else existing) != wanted:
            raise replacement_refused(attribute, what)


def replacement_refused(attribute: str, what: str) -> SpecError:
    """The error on ``attribute`` of an existing ``what`` the cloud would have to replace."""
    return SpecError(
        attribute,
        f"fixed once the {what} exists: the cloud can only change it "
        f"by replacing the {what}; add a new one and remove this one",
    )
