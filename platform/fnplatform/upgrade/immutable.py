"""The fields a cloud cannot change in place, per managed kind: ``immutable-fields.yaml`` next
to this module (written by ``tools/derive_immutable_fields.py``, each field with its source).

A change of one of them replaces the cloud resource or is refused by the provider, so the
upgrade preview calls it a replacement and ``tests/test_upgrade.py`` fails on it. This module
imports nothing but the standard library and PyYAML: ``tools/make_upgrade_fixtures.py`` loads
it by its file path inside a release's tree, where ``fnplatform`` is the release's own.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import yaml

#: The one copy of the table (package data: the wheel ships it with this module).
TABLE = Path(__file__).resolve().parent / "immutable-fields.yaml"


@functools.cache
def load_table() -> dict[str, Any]:
    """The table, read once."""
    return dict(yaml.safe_load(TABLE.read_text()))


def group_of(api_version: str) -> str:
    """The API group of ``api_version`` (``""`` for the core group)."""
    return api_version.rsplit("/", 1)[0] if "/" in api_version else ""


def immutable_fields(table: Mapping[str, Any], api_version: str, kind: str) -> list[dict[str, Any]]:
    """The fields the table lists for ``kind`` of the group of ``api_version`` (the
    cluster-scoped and namespaced groups share one entry: ``s3.aws.m.upbound.io`` reads
    ``s3.aws.upbound.io``)."""
    group = (
        group_of(api_version)
        .replace(".m.upbound.io", ".upbound.io")
        .replace(".m.crossplane.io", ".crossplane.io")
    )
    return list((table.get("kinds") or {}).get(f"{kind}.{group}") or [])


def get_path(body: Mapping[str, Any], path: str) -> Any:
    """The value at a dotted ``path`` (``spec.forProvider.region``), None where absent. A
    ``[]`` segment (``rule[].cidr``) collects the field of every list item, in order."""
    values: list[Any] = [body]
    for part in path.split("."):
        many = part.endswith("[]")
        key = part.removesuffix("[]")
        found: list[Any] = []
        for value in values:
            if not isinstance(value, Mapping) or key not in value:
                continue
            item = value[key]
            if many:
                found.extend(item if isinstance(item, list) else [])
            else:
                found.append(item)
        if not found:
            return None
        values = found
        if many:
            values = [v for v in values if v is not None]
    if any("[]" in part for part in path.split(".")):
        return values
    return values[0]


def kept(old: Any, new: Any, compare: str | None) -> bool:
    """Whether ``new`` keeps ``old`` for a rule (``compare: engine``: only the engine of
    ``POSTGRES_16`` counts, an in-place major version upgrade being allowed)."""
    if compare == "engine" and isinstance(old, str) and isinstance(new, str):
        return old.split("_", 1)[0] == new.split("_", 1)[0]
    return bool(old == new)


def changed_fields(
    old: Mapping[str, Any], new: Mapping[str, Any], table: Mapping[str, Any] | None = None
) -> list[tuple[str, Any, Any, str]]:
    """``[(path, old value, new value, source)]`` for every immutable field of ``old``'s kind
    whose value ``new`` does not keep (a field ``old`` does not set is not held)."""
    rules = immutable_fields(
        load_table() if table is None else table, str(old.get("apiVersion")), str(old.get("kind"))
    )
    found = []
    for rule in rules:
        was = get_path(old, rule["path"])
        if was is None:
            continue
        now = get_path(new, rule["path"])
        if not kept(was, now, rule.get("compare")):
            found.append((rule["path"], was, now, str(rule.get("source", ""))))
    return found
