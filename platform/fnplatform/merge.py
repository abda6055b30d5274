"""Deep merge of plain JSON-like dicts: the one merge rule used for environments and templates."""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

from fnplatform import fieldpath


def deep_merge(base: Mapping[str, Any], overlay: Mapping[str, Any]) -> dict[str, Any]:
    """Return ``base`` with ``overlay`` merged on top; maps merge, everything else is replaced.

    Lists are replaced rather than concatenated: an EnvironmentConfig that sets a list means
    "this list", which is what Crossplane's own environment merge does.
    """
    merged: dict[str, Any] = copy.deepcopy(dict(base))
    for key, value in overlay.items():
        current = merged.get(key)
        if isinstance(current, Mapping) and isinstance(value, Mapping):
            merged[key] = deep_merge(current, value)
        else:
            merged[key] = copy.deepcopy(value)
    return merged


def get_path(obj: Any, path: str, default: Any = None) -> Any:
    """Read ``path`` (``status.atProvider.endpoint``, ``identity[0].oidc[0].issuer``) or
    ``default``.

    Crossplane's field-path syntax, the one every path in the function follows
    (:func:`fnplatform.fieldpath.get`): a path here reads what it reads in a Composition.
    """
    return fieldpath.get(obj, path, default)
