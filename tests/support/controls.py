"""Observed states where one composed resource does not do its part, for the conditions that
vouch for a control (:mod:`fnplatform.rules.controls`).

A provider reports ``Synced=False`` when it cannot apply a resource (the cloud refused it:
``ReconcileError`` and the cloud's message, crossplane-runtime ``xpv1.ReconcileError``), and
``Ready=False`` while the resource is being created (``xpv1.Creating``). Each helper lays one of
these over a resource of a converged state, everything else as the simulation reports it.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

Body = dict[str, Any]

#: What the providers say, in crossplane-runtime's words.
REFUSED = {
    "type": "Synced",
    "status": "False",
    "reason": "ReconcileError",
    "message": "update failed: the cloud refused the change",
}
CREATING = {"type": "Ready", "status": "False", "reason": "Creating"}


@dataclass(frozen=True)
class Breakage:
    """How one implementing resource fails: the condition laid over it, the condition's
    reason expected on the composite, and the words its message says of the resource."""

    name: str
    condition: Mapping[str, str]
    reason: str
    says: str


SYNCED_FALSE = Breakage("Synced=False", REFUSED, "ControlFailing", "Synced=False")
READY_FALSE = Breakage("Ready=False", CREATING, "ControlNotVerified", "not Ready")
BREAKAGES = (SYNCED_FALSE, READY_FALSE)


def resolve(observed: Mapping[str, Body], resource: str) -> str:
    """``resource``, or for ``<prefix>*`` the first observed name of that prefix."""
    if not resource.endswith("*"):
        assert resource in observed, f"{resource} not observed; observed: {sorted(observed)}"
        return resource
    matches = sorted(name for name in observed if name.startswith(resource[:-1]))
    assert matches, f"nothing observed matches {resource}; observed: {sorted(observed)}"
    return matches[0]


def broken(observed: Mapping[str, Body], resource: str, breakage: Breakage) -> dict[str, Body]:
    """A copy of ``observed`` where ``resource`` reports ``breakage.condition`` in place of the
    condition of that type the simulation reported."""
    out = copy.deepcopy(dict(observed))
    status = out[resource].setdefault("status", {})
    conditions = [
        c for c in status.get("conditions") or [] if c.get("type") != breakage.condition["type"]
    ]
    status["conditions"] = [*conditions, dict(breakage.condition)]
    return out
