"""Import of existing infrastructure: ``spec.parameters.import``.

Observe mode adopts a resource read-only (``managementPolicies: ["Observe"]``); manage mode takes
full control. While importing, ``deletionPolicy: Orphan`` protects the real resource from a
mistaken delete, and the ``crossplane.io/external-name`` annotation always names it.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from fnplatform.errors import InputError
from fnplatform.validation import suggest

EXTERNAL_NAME = "crossplane.io/external-name"


class ImportedResource(BaseModel):
    """One composed resource to adopt instead of create."""

    model_config = ConfigDict(extra="forbid")

    externalName: str = Field(min_length=1, description="The resource's name in the cloud.")  # noqa: N815


class ImportSpec(BaseModel):
    """``spec.parameters.import``."""

    model_config = ConfigDict(extra="forbid")

    enabled: bool = Field(False, description="Adopt the listed resources.")
    mode: Literal["observe", "manage"] = Field(
        "observe", description="observe: read-only; manage: full control."
    )
    resources: dict[str, ImportedResource] = Field(
        default_factory=dict, description="Composed resource name to its external name."
    )
    include: list[str] = Field(
        default_factory=list,
        description=(
            "In observe mode, composed resources to create inside the imported ones anyway "
            "(a node pool in an imported cluster, say); nothing else is written into them."
        ),
    )

    def observing(self) -> bool:
        """Whether resources are adopted read-only (nothing may be written into them)."""
        return self.enabled and self.mode == "observe" and bool(self.resources)


def check_import_names(spec: ImportSpec, composed: Iterable[str]) -> None:
    """Every ``import.resources`` name must be a resource this composite composes.

    A misspelt name would not adopt anything: the function would create a second resource
    beside the one meant to be imported. ``composed`` holds every name of this pass, held-back
    resources included, so a resource that only appears once its dependencies are ready counts.
    """
    if not spec.enabled:
        return
    known = sorted(set(composed))
    for name in sorted(spec.resources):
        if name not in known:
            raise InputError(
                f"spec.parameters.import.resources.{name[:63]}",
                f"no composed resource has this name; {suggest(name, known, 'names')}",
            )


def apply_import(spec: ImportSpec, name: str, body: dict[str, Any], managed: bool) -> None:
    """Mark ``body`` (composed as ``name``) for import when the composite asks for it."""
    imported = spec.resources.get(name) if spec.enabled else None
    if imported is None:
        return
    annotations = body.setdefault("metadata", {}).setdefault("annotations", {})
    annotations[EXTERNAL_NAME] = imported.externalName
    if managed:
        if spec.mode == "observe":
            body["spec"]["managementPolicies"] = ["Observe"]
        else:  # full control, minus what the builder deliberately left out (LateInitialize)
            body["spec"].setdefault("managementPolicies", ["*"])
        body["spec"]["deletionPolicy"] = "Orphan"
