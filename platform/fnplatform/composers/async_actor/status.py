"""The actor's status: readiness of queue, KEDA and workload, and the phase they add up to.

Read from observed state only. ``Creating`` until all three are ready; then ``Ready``, or
``Napping`` when KEDA has scaled the Deployment to zero (a sleeping actor is healthy). A part
whose resource the provider cannot apply (``Synced=False``: a queue setting AWS refuses, a
Deployment the API server rejects) is not ready, whatever it reported before: the same rule as
every condition that vouches for something (:func:`fnplatform.rules.controls.resource_shortfall`).
"""

from __future__ import annotations

from dataclasses import dataclass

from fnplatform.api.phase import Phase
from fnplatform.composition import Composition
from fnplatform.observation.kubernetes import (
    MANIFEST_STATUS,
    manifest_condition_message,
    manifest_condition_true,
    manifest_value,
)
from fnplatform.observation.resources import condition_message
from fnplatform.rules.controls import resource_shortfall


@dataclass(frozen=True)
class Parts:
    """Composition names of the resources the status is read from."""

    queue: str
    scaled_object: str
    deployment: str


def report_status(comp: Composition, parts: Parts, *, scaling: bool) -> Phase:
    """Write ``status.infrastructure`` and ``status.phase``; returns the phase."""
    queue_ready = _queue(comp, parts.queue)
    keda_ready = _keda(comp, parts.scaled_object, scaling=scaling)
    workload_ready, replicas = _workload(comp, parts.deployment)
    phase = Phase.CREATING
    if queue_ready and keda_ready and workload_ready:
        phase = Phase.NAPPING if scaling and replicas == 0 else Phase.READY
    comp.set_phase(phase)
    return phase


def _failing(comp: Composition, name: str) -> str | None:
    """Why composed ``name`` fails (``Synced=False``, its reason), None while it does not."""
    shortfall = resource_shortfall(comp, name) if name in comp.observed else None
    return shortfall[1] if shortfall is not None and shortfall[0] else None


def _queue(comp: Composition, name: str) -> bool:
    failing = _failing(comp, name)
    ready = comp.is_ready(name) and failing is None
    observed = comp.observed.part(name, "status.conditions")
    message = (
        "Available"
        if ready
        else failing or (condition_message(observed) if observed is not None else "not created yet")
    )
    comp.set_status("infrastructure.queue", {"ready": ready, "message": message})
    return ready


def _keda(comp: Composition, name: str, *, scaling: bool) -> bool:
    if not scaling:
        comp.set_status("infrastructure.keda", {"ready": True, "message": "scaling disabled"})
        return True
    observed = comp.observed.part(name, MANIFEST_STATUS)
    failing = _failing(comp, name)
    ready = manifest_condition_true(observed, "Ready") and failing is None
    message = (
        "Ready"
        if ready
        else failing
        or (
            manifest_condition_message(observed, "Ready")
            if observed is not None
            else "waiting for the queue URL"
            if name not in comp.desired
            else "not created yet"
        )
    )
    comp.set_status("infrastructure.keda", {"ready": ready, "message": message})
    return ready


def _workload(comp: Composition, name: str) -> tuple[bool, int]:
    observed = comp.observed.part(name, MANIFEST_STATUS)
    failing = _failing(comp, name)
    ready = manifest_condition_true(observed, "Available") and failing is None
    replicas = int(manifest_value(observed, "replicas", 0) or 0)
    ready_replicas = int(manifest_value(observed, "readyReplicas", 0) or 0)
    comp.set_status(
        "infrastructure.workload",
        {"ready": ready, "replicas": replicas, "readyReplicas": ready_replicas},
    )
    return ready, replicas
