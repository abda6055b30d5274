"""Layered partial specs: named layers (flavors, presets) merged under the user's own spec.

Unlike :func:`fnplatform.merge.deep_merge` (later wins, lists replaced), layers here must not
silently fight: two layers setting the same leaf is an error naming both layers and the path,
because which one "wins" would depend on list order the user may not see. The user's own spec
goes on top and may override anything. Lists append (a layer adds tolerations, env vars...);
lists declared *keyed* (``env`` by ``name``) treat an item with the same key like a leaf: two
layers giving it is a conflict, the user's item replaces the layer's.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from fnplatform.errors import InputError
from fnplatform.merge import copied

USER_LAYER = "spec"


@dataclass(frozen=True)
class Layer:
    """One named partial spec; ``source`` is what an error message calls it."""

    name: str
    data: Mapping[str, Any]
    source: str = ""

    def describe(self) -> str:
        """How an error names this layer."""
        return self.source or self.name


@dataclass
class Merged:
    """The merged data and, per dotted path, which layer set it (for error messages)."""

    data: dict[str, Any] = field(default_factory=dict)
    owners: dict[str, str] = field(default_factory=dict)

    def owner_of(self, path: str) -> str | None:
        """The layer that set ``path`` or its nearest set parent."""
        while path:
            if path in self.owners:
                return self.owners[path]
            path = path.rpartition(".")[0]
        return None


def merge_layers(
    layers: Sequence[Layer],
    user: Mapping[str, Any],
    *,
    keyed_lists: Mapping[str, str] | None = None,
    user_only: Sequence[str] = (),
    prefix: str = "spec",
) -> Merged:
    """Merge ``layers`` left to right (conflicts are errors), then ``user`` on top.

    ``keyed_lists`` maps a dotted path (``env``, ``sidecar.env``) to the item key that
    identifies list items there. ``user_only`` names top-level keys a layer may not set.
    ``prefix`` starts the field paths in error messages.
    """
    merged = Merged()
    keyed = dict(keyed_lists or {})
    for layer in layers:
        for key in user_only:
            if key in layer.data:
                raise InputError(
                    f"{layer.describe()}.{key}",
                    f"{key} can only be set on the {prefix} itself, not by {layer.describe()}",
                )
        _Pass(merged, layer, keyed, prefix, strict=True).merge(merged.data, layer.data, "")
    user_layer = Layer(USER_LAYER, user, prefix)
    _Pass(merged, user_layer, keyed, prefix, strict=False).merge(merged.data, user, "")
    return merged


@dataclass
class _Pass:
    """Merging one layer into the result; ``strict`` makes overlapping leaves conflicts."""

    merged: Merged
    layer: Layer
    keyed: Mapping[str, str]
    prefix: str
    strict: bool

    def merge(self, target: dict[str, Any], overlay: Mapping[str, Any], path: str) -> None:
        """Merge ``overlay`` into ``target`` (the node at ``path``)."""
        for key, value in overlay.items():
            child = f"{path}.{key}" if path else str(key)
            current = target.get(key)
            if key not in target:
                target[key] = copied(value)
                self._own(child, value)
            elif isinstance(current, dict) and isinstance(value, Mapping):
                self.merge(current, value, child)
            elif isinstance(current, list) and isinstance(value, list):
                target[key] = self._merge_list(current, value, child)
            elif self.strict:
                self._conflict(child)
            else:
                target[key] = copied(value)
                self._own(child, value)

    def _merge_list(self, current: list[Any], items: list[Any], path: str) -> list[Any]:
        """Append ``items``; for a keyed list, an item whose key is present is a leaf."""
        key_field = self.keyed.get(path)
        result = list(current)
        for item in items:
            item_key = item.get(key_field) if key_field and isinstance(item, Mapping) else None
            if item_key is None:
                result.append(copied(item))
                continue
            item_path = f"{path}[{key_field}={item_key}]"
            index = _index_of(result, key_field, item_key)
            if index is None:
                result.append(copied(item))
            elif self.strict:
                self._conflict(item_path)
            else:
                result[index] = copied(item)
            self.merged.owners[item_path] = self.layer.describe()
        self.merged.owners.setdefault(path, self.layer.describe())
        return result

    def _own(self, path: str, value: Any) -> None:
        """Record this layer as the setter of ``path`` and every leaf below it."""
        self.merged.owners[path] = self.layer.describe()
        if isinstance(value, Mapping):
            for key, sub in value.items():
                self._own(f"{path}.{key}", sub)
        key_field = self.keyed.get(path)
        if key_field and isinstance(value, list):
            for item in value:
                if isinstance(item, Mapping) and item.get(key_field) is not None:
                    self.merged.owners[f"{path}[{key_field}={item[key_field]}]"] = (
                        self.layer.describe()
                    )

    def _conflict(self, path: str) -> None:
        first = self.merged.owner_of(path) or "an earlier layer"
        raise InputError(
            f"{self.prefix}.{path}",
            f"set by both {first} and {self.layer.describe()}; set it in one of them, "
            f"or on the {self.prefix} itself to choose",
        )


def _index_of(items: list[Any], key_field: str | None, key: Any) -> int | None:
    for index, item in enumerate(items):
        if isinstance(item, Mapping) and item.get(key_field) == key:
            return index
    return None
