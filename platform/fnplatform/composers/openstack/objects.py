"""Kubernetes objects in other clusters (garden, control plane, storage pool), one call each.

Every manifest this module composes is a provider-kubernetes ``Object`` aimed at a
ProviderConfig: the garden's for Shoots, the management cluster's for the access refreshers,
a pool's for what runs inside it.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from fnplatform.composition import Composition
from fnplatform.library.kubernetes import add_kubernetes_object

MANAGED_BY = "app.kubernetes.io/managed-by"
PART_OF = "app.kubernetes.io/part-of"


def wrap(
    comp: Composition,
    name: str,
    manifest: Mapping[str, Any],
    *,
    provider_config: str,
    ready_when: str | None = None,
    uses: Iterable[str] = (),
) -> dict[str, Any]:
    """Apply ``manifest`` through ``provider_config``; ready when the CEL ``ready_when`` holds
    on the object (else once created)."""
    body = dict(manifest)
    metadata = dict(body.get("metadata") or {})
    metadata["labels"] = {**(metadata.get("labels") or {}),
                          MANAGED_BY: "crossplane", PART_OF: comp.name}
    body["metadata"] = metadata
    readiness = (
        {"policy": "DeriveFromCelQuery", "celQuery": ready_when} if ready_when else None
    )
    return add_kubernetes_object(
        comp, name, body, provider_config=provider_config, uses=uses, readiness=readiness
    )


def wrapped(comp: Composition, name: str, path: str) -> Any:
    """A field of the object ``name`` wraps, as provider-kubernetes last observed it."""
    return comp.observed_value(name, f"status.atProvider.manifest.{path}")
