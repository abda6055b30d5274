"""One vocabulary for the phase a composite reports: ``status.phase`` of the async actor and
the OpenStack composites, and the ``Pending`` reason of the environment's parts condition.

A user reading ``kubectl get`` across modules sees the same word for the same state; a module
that needs a state of its own (the actor's ``Napping``) adds it here, once.
"""

from __future__ import annotations

from enum import StrEnum


class Phase(StrEnum):
    """Where a composite is in its life, as ``status.phase`` says it."""

    #: Nothing to work with yet (an input not fetched, no Object observed).
    PENDING = "Pending"
    #: Its resources are being created (the actor: queue, KEDA and workload not all ready).
    CREATING = "Creating"
    #: Created, and the cloud or Gardener is still bringing it up.
    PROVISIONING = "Provisioning"
    READY = "Ready"
    #: Ready, scaled to zero by KEDA (a sleeping actor is healthy).
    NAPPING = "Napping"
    #: Something it depends on went missing after it was ready.
    DEGRADED = "Degraded"
