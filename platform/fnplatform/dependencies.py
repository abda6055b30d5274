"""Dependencies between composed resources: hold dependents back, order deletion with Usages.

``uses=[...]`` on an emitted resource means two things. While a needed resource doesn't exist
yet, the dependent is held back (not created), unless the dependent itself already exists:
an existing resource is never dropped because something upstream is briefly missing. And a
Crossplane ``Usage`` ties the two together, so the needed resource outlives its dependent on
deletion (a node pool is deleted before its cluster).
"""

from __future__ import annotations

from typing import Any

from fnplatform.composition import Composition, Emitted
from fnplatform.kinds import Readiness, register

USAGE = register(
    "apiextensions.crossplane.io/v1beta1", "Usage", managed=False, readiness=Readiness.EXISTS
)


def hold_unmet(comp: Composition) -> None:
    """Remove dependents whose needs aren't met yet, until nothing more changes."""
    changed = True
    while changed:
        changed = False
        for emitted in list(comp.desired.values()):
            if emitted.name in comp.observed:
                continue
            missing = [u for u in emitted.uses if u not in comp.desired or u not in comp.observed]
            if missing:
                del comp.desired[emitted.name]
                comp.hold(emitted.name, ", ".join(sorted(missing)))
                changed = True
        for name in list(comp.notes.held):
            comp.desired.pop(name, None)


def usage_name(used: str, user: str) -> str:
    """The composed-resource name of the Usage that keeps ``used`` while ``user`` exists."""
    return f"usage-{used}-by-{user}"


def add_usages(comp: Composition) -> None:
    """Emit a Usage for every dependency between two desired resources."""
    pairs = [(u, e) for e in list(comp.desired.values()) for u in e.uses if u in comp.desired]
    for used_name, user in pairs:
        used = comp.desired[used_name].body
        comp.emit(
            usage_name(used_name, user.name),
            USAGE.new(None, of=_reference(used), by=_reference(user.body), replayDeletion=True),
            ready=True,
        )


def _reference(body: dict[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": body["apiVersion"],
        "kind": body["kind"],
        "resourceRef": {"name": body["metadata"]["name"]},
    }


def waiting_summary(held: dict[str, str]) -> str:
    """``a (waits for b), c (waits for d)``: a message that says what waits for what."""
    return ", ".join(f"{name} (waits for {need})" for name, need in sorted(held.items()))


__all__ = ["Emitted", "add_usages", "hold_unmet", "usage_name", "waiting_summary"]
