"""Never lose a stateful resource to a transient problem.

When a pass is degraded (an EnvironmentConfig or requirement is missing, a value is not
observed yet) and a stateful resource that exists would vanish from desired state, the pass is
refused with a fatal result: Crossplane then keeps the previous desired state untouched.
"""

from __future__ import annotations

from fnplatform.composition import Composition
from fnplatform.errors import CompositionError
from fnplatform.kinds import is_stateful_type


def dropped_stateful(comp: Composition) -> list[str]:
    """Observed stateful resources this pass would remove from desired state."""
    gone = (name for name in comp.observed if name not in comp.desired)
    return [name for name in gone if is_stateful_type(*comp.observed.type_of(name))]


def protect_stateful(comp: Composition) -> None:
    """Refuse a degraded pass that would drop stateful resources; report intended removals."""
    dropped = dropped_stateful(comp)
    if not dropped:
        return
    if comp.notes.degraded:
        raise CompositionError(
            "composition",
            f"refusing to remove stateful resources {', '.join(dropped)} while "
            + "; ".join(comp.notes.degraded),
        )
    for name in dropped:
        comp.event(f"removing stateful resource {name}: no longer requested", warning=True)
