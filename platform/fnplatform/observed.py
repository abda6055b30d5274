"""Reading observed state: existence, fields and the Ready condition of composed resources."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from fnplatform.merge import get_path


def condition(resource: Mapping[str, Any] | None, type_: str) -> Mapping[str, Any] | None:
    """The condition of ``type_`` in ``status.conditions``, if reported."""
    conditions = get_path(resource or {}, "status.conditions", None)
    if not isinstance(conditions, list):  # absent, or malformed observed state: not reported
        return None
    for cond in conditions:
        if isinstance(cond, Mapping) and cond.get("type") == type_:
            return cond
    return None


def condition_true(resource: Mapping[str, Any] | None, type_: str = "Ready") -> bool:
    """Whether the resource reports condition ``type_`` with status True."""
    cond = condition(resource, type_)
    return cond is not None and cond.get("status") == "True"


def condition_message(resource: Mapping[str, Any] | None, type_: str = "Ready") -> str:
    """Reason and message of a condition, for status that explains why something isn't ready."""
    cond = condition(resource, type_)
    if cond is None:
        return "not reported yet"
    parts = [str(cond.get("reason") or ""), str(cond.get("message") or "")]
    return ": ".join(p for p in parts if p) or str(cond.get("status", "Unknown"))
