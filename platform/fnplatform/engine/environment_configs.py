"""EnvironmentConfigs, selected by this function since Crossplane removed native environments.

The step input lists sources (by name, or by labels whose values may come from composite
fields); matches are merged in order, later wins, deep. An environment an earlier pipeline step
put in the context key ``apiextensions.crossplane.io/environment`` is the base.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from fnplatform import fieldpath
from fnplatform.api.step_input import EnvironmentSource, Input
from fnplatform.errors import InputError
from fnplatform.merge import deep_merge, get_path
from fnplatform.request.requirements import ENVIRONMENT_CONFIG, Requirement

CONTEXT_KEY = "apiextensions.crossplane.io/environment"


@dataclass
class Environment:
    """The merged environment, or what is still missing to build it."""

    data: dict[str, Any] = field(default_factory=dict)
    pending: bool = False  # some requirement not fetched yet


@dataclass(frozen=True)
class Selection:
    """One environment source of the step input, resolved against the composite."""

    index: int
    source: EnvironmentSource
    requirement: Requirement | None  # None: optional, and the composite lacks a label value

    @property
    def field(self) -> str:
        """The source's path in the step input, for messages."""
        return f"input.environment[{self.index}]"


def selections(step: Input, composite: Mapping[str, Any]) -> list[Selection]:
    """Every environment source with its requirement, keyed by position."""
    return [
        Selection(index, source, _requirement(index, source, composite))
        for index, source in enumerate(step.environment)
    ]


def requirements_of(selected: list[Selection]) -> list[Requirement]:
    """The requirements to declare: one per source that selects anything."""
    return [s.requirement for s in selected if s.requirement is not None]


def _requirement(
    index: int, source: EnvironmentSource, composite: Mapping[str, Any]
) -> Requirement | None:
    """The source's selector, or None for an optional source the composite cannot fill in.

    An optional source whose label value comes from a field the composite doesn't set selects
    nothing (a cluster without a ``planeType`` label gets no plane-type config); a required
    one is an error naming that field.
    """
    key = f"environment-{index}"
    api_version, kind = ENVIRONMENT_CONFIG
    if source.name is not None:
        return Requirement(key, api_version, kind, match_name=source.name)
    labels = []
    for label, value in sorted((source.matchLabels or {}).items()):
        resolved = value.value
        if value.fromFieldPath is not None:
            resolved = _label_value(composite, value.fromFieldPath, index, label)
            if resolved is None:
                if source.optional:
                    return None
                raise InputError(
                    value.fromFieldPath,
                    f"required to select EnvironmentConfigs (input environment[{index}]"
                    f".matchLabels.{label}) but not set on the composite",
                )
        labels.append((label, str(resolved)))
    return Requirement(key, api_version, kind, match_labels=tuple(labels))


def _label_value(composite: Mapping[str, Any], path: str, index: int, label: str) -> Any:
    """The value at Crossplane field path ``path`` of the composite, or None when unset.

    Read as Crossplane reads ``fromFieldPath`` (:mod:`fnplatform.fieldpath`), so
    ``metadata.labels[cloud]`` and ``metadata.labels.cloud`` are the same label. A path that
    can't go through the composite's shape (an index into a map, a field of a string) is an
    error even for an optional source: it is the Composition that is wrong, not a composite
    that leaves a field unset. So is a map or a list, which is no label value.
    """
    where = f"input environment[{index}].matchLabels.{label}"
    try:
        found = fieldpath.lookup(composite, fieldpath.parse(path))
    except fieldpath.PathNotFound:
        return None
    except fieldpath.PathTypeError as err:
        raise InputError(
            path, f"cannot be read from the composite ({err}); {where} selects with it"
        ) from None
    if isinstance(found, Mapping | list):
        raise InputError(
            path,
            f"is {'a map' if isinstance(found, Mapping) else 'a list'} on "
            f"the composite, not a label value; {where} selects with it",
        )
    return None if found == "" else found


def merge_environment(
    selected: list[Selection],
    fetched: Mapping[str, list[dict[str, Any]] | None],
    context_environment: Mapping[str, Any],
) -> Environment:
    """Merge the context environment and the fetched EnvironmentConfigs, in order."""
    env = Environment(data=dict(context_environment))
    for selection in selected:
        requirement = selection.requirement
        if requirement is None:
            continue
        items = fetched.get(requirement.key)
        if items is None:
            env.pending = True
            continue
        if not items and not selection.source.optional:
            raise InputError(
                selection.field,
                f"no {requirement.describe()} exists; create it or mark the source optional",
            )
        for item in items:
            data = item.get("data") or {}
            if not isinstance(data, Mapping):
                # Kubernetes names are at most 253 characters; never echo more of a bad one.
                name = str(get_path(item, "metadata.name"))[:253]
                raise InputError(f"EnvironmentConfig {name}.data", "must be an object")
            env.data = deep_merge(env.data, data)
    return env
