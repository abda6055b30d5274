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
    merged: dict[str, Any] = {key: copied(value) for key, value in base.items()}
    for key, value in overlay.items():
        current = merged.get(key)
        if isinstance(current, Mapping) and isinstance(value, Mapping):
            merged[key] = deep_merge(current, value)
        else:
            merged[key] = copied(value)
    return merged


_ATOMS = (str, int, float, bool, type(None))


def copied(value: Any) -> Any:
    """A deep copy of JSON-like ``value``; anything else goes through ``copy.deepcopy``.

    Environments and settings are merged on every request, and ``copy.deepcopy`` (its memo,
    its dispatch by type) was a tenth of composing a small composite (bench/results.md); plain
    dicts, lists and scalars need none of that.
    """
    kind = type(value)
    if kind is dict:
        return {key: copied(item) for key, item in value.items()}
    if kind is list:
        return [copied(item) for item in value]
    if kind in _ATOMS:
        return value
    return copy.deepcopy(value)


def get_path(obj: Any, path: str, default: Any = None) -> Any:
    """Read ``path`` (``status.atProvider.endpoint``, ``identity[0].oidc[0].issuer``) or
    ``default``.

    Crossplane's field-path syntax, the one every path in the function follows
    (:func:`fnplatform.fieldpath.get`): a path here reads what it reads in a Composition.
    """
    return fieldpath.get(obj, path, default)
