"""The async-actor API: claim ``asya.sh/v1alpha1 AsyncActor``, XR ``XAsyncActor``.

``tools/generate_apis.py`` writes ``apis/async-actor/definition.yaml`` from :data:`API`. The
schema comes from the models the composer validates with, minus their defaults: the function
applies defaults after merging flavors, and a default the API server wrote into the claim
would shadow the flavor's value.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from fnplatform.api.xrd import PHASE_COLUMN, ApiDefinition, CompositionAlias, PrinterColumn
from fnplatform.composers.async_actor.model import ActorSpec, ActorStatus

#: The Deployment's replicas as the status reports them (``status.py`` reads the live
#: Deployment's ``status.readyReplicas`` and ``status.replicas`` through its Object).
READY_REPLICAS = ".status.infrastructure.workload.readyReplicas"
REPLICAS = ".status.infrastructure.workload.replicas"


def without_defaults(schema: Any) -> Any:
    """``schema`` with every ``default`` keyword removed (recursively)."""
    if isinstance(schema, dict):
        return {k: without_defaults(v) for k, v in schema.items() if k != "default"}
    if isinstance(schema, list):
        return [without_defaults(item) for item in schema]
    return schema


@dataclass(frozen=True)
class FlavoredApiDefinition(ApiDefinition):
    """An API whose spec defaults are applied by the function, after flavors, not by Kubernetes."""

    def spec_schema(self) -> dict[str, Any]:
        """The OpenAPI v3 schema of ``spec``, without defaults."""
        schema: dict[str, Any] = without_defaults(super().spec_schema())
        return schema


API = FlavoredApiDefinition(
    group="asya.sh",
    kind="XAsyncActor",
    claim_kind="AsyncActor",
    spec_model=ActorSpec,
    status_model=ActorStatus,
    short_names=("xasya",),
    claim_short_names=("asya", "asyas"),
    # The asya-crossplane chart installs this Composition and makes it the XRD's
    # defaultCompositionRef: every composite it made carries compositionRef asyncactor-sqs.
    aliases=(
        CompositionAlias(
            "asyncactor-sqs", "Asya's Crossplane integration guide for AsyncActor, Architecture"
        ),
    ),
    # The guide's status columns: Actor, Status, Ready (ready replicas), Replicas, Queue
    # (wide), Age. Crossplane appends SYNCED, READY (the Ready condition), its own columns and
    # AGE to every composite and claim CRD it generates (crossplane-runtime v2.4.0
    # pkg/xcrd/schemas.go, CompositeResourcePrinterColumns), so Age is Crossplane's: a
    # second one here would print AGE twice.
    printer_columns=(
        PrinterColumn("Actor", ".status.actor"),
        replace(PHASE_COLUMN, name="Status"),
        PrinterColumn("Ready", READY_REPLICAS, "integer"),
        PrinterColumn("Replicas", REPLICAS, "integer"),
        PrinterColumn("Queue", ".status.queueUrl", priority=1),
    ),
)
