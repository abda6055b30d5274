"""Fetching labelled EnvironmentConfigs (flavors, presets) through required resources.

A composer asks for several configs at once, each selected by one label value. Every
requirement is declared before anything is read, so Crossplane fetches them all in a single
round; while any is not fetched yet the pass stops with :class:`~fnplatform.errors.Pending`
(the runner answers with just the requirements). A requirement fetched with no match is a
user error naming the missing value.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from fnplatform.composition import Composition
from fnplatform.errors import InputError, Pending
from fnplatform.merge import get_path
from fnplatform.request.requirements import ENVIRONMENT_CONFIG, Requirement


def labelled_requirement(key_prefix: str, label: str, value: str) -> Requirement:
    """The requirement selecting EnvironmentConfigs labelled ``label=value``."""
    api_version, kind = ENVIRONMENT_CONFIG
    return Requirement(
        key=f"{key_prefix}-{value}",
        api_version=api_version,
        kind=kind,
        match_labels=((label, value),),
    )


def require_labelled_configs(
    comp: Composition,
    values: Sequence[str],
    *,
    label: str,
    key_prefix: str,
    field: str,
) -> dict[str, Mapping[str, Any]]:
    """The ``data`` of the EnvironmentConfig labelled ``label=<value>``, for every value.

    ``field`` is the input field listing the values (``spec.flavors``): errors point at it.
    Raises Pending when any is not fetched yet, and InputError when one matches nothing, when
    several match one value (the choice would be arbitrary), or when ``data`` is not a map.
    """
    fetched = {
        value: comp.require(labelled_requirement(key_prefix, label, value)) for value in values
    }
    if any(items is None for items in fetched.values()):
        raise Pending(f"waiting for {', '.join(v for v, i in fetched.items() if i is None)}")
    result: dict[str, Mapping[str, Any]] = {}
    for index, value in enumerate(values):
        items = fetched[value] or []
        where = f"{field}[{index}]"
        if not items:
            raise InputError(where, f"no EnvironmentConfig labelled {label}={value} exists")
        if len(items) > 1:
            names = ", ".join(str(get_path(i, "metadata.name")) for i in items)
            raise InputError(
                where, f"{len(items)} EnvironmentConfigs are labelled {label}={value} ({names})"
            )
        data = items[0].get("data") or {}
        if not isinstance(data, Mapping):
            raise InputError(where, f"EnvironmentConfig labelled {label}={value}: data is no map")
        result[value] = data
    return result
