"""Reading what provider-kubernetes observed inside a cluster.

An ``Object`` reports the live manifest it manages under ``status.atProvider.manifest``; its
own ``Ready`` condition only says what its readiness policy derived. Status fields of the
managed object itself (a Deployment's replicas, a ScaledObject's conditions) are read here.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from fnplatform.merge import get_path
from fnplatform.observation.resources import condition, condition_message, condition_true

MANIFEST_STATUS = "status.atProvider.manifest.status"


def manifest_status(observed_object: Mapping[str, Any] | None) -> dict[str, Any]:
    """The live ``status`` of the object an observed ``Object`` manages ({} when unknown)."""
    status = get_path(observed_object or {}, MANIFEST_STATUS)
    return dict(status) if isinstance(status, Mapping) else {}


def manifest_value(
    observed_object: Mapping[str, Any] | None, path: str, default: Any = None
) -> Any:
    """A field of the managed object's live ``status`` (``readyReplicas``...)."""
    return get_path(manifest_status(observed_object), path, default)


def manifest_condition_true(observed_object: Mapping[str, Any] | None, type_: str) -> bool:
    """Whether the managed object reports condition ``type_`` as True."""
    return condition_true({"status": manifest_status(observed_object)}, type_)


def manifest_condition_message(observed_object: Mapping[str, Any] | None, type_: str) -> str:
    """``reason: message`` of the managed object's condition ``type_`` (or why it is unknown)."""
    if observed_object is None:
        return "not created yet"
    wrapped = {"status": manifest_status(observed_object)}
    if condition(wrapped, type_) is None:
        return f"{type_} not reported yet"
    return condition_message(wrapped, type_)
