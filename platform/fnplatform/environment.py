"""EnvironmentConfigs, selected by this function since Crossplane removed native environments.

The step input lists sources (by name, or by labels whose values may come from composite
fields); matches are merged in order, later wins, deep. An environment an earlier pipeline step
put in the context key ``apiextensions.crossplane.io/environment`` is the base.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from fnplatform.errors import InputError
from fnplatform.input import EnvironmentSource, Input
from fnplatform.merge import deep_merge, get_path
from fnplatform.requirements import ENVIRONMENT_CONFIG, Requirement

CONTEXT_KEY = "apiextensions.crossplane.io/environment"


@dataclass
class Environment:
    """The merged environment, or what is still missing to build it."""

    data: dict[str, Any] = field(default_factory=dict)
    requirements: list[Requirement] = field(default_factory=list)
    pending: bool = False  # some requirement not fetched yet


def requirements_for(step: Input, composite: Mapping[str, Any]) -> list[Requirement]:
    """One requirement per environment source, keyed by its position."""
    return [_requirement(index, source, composite) for index, source in enumerate(step.environment)]


def _requirement(
    index: int, source: EnvironmentSource, composite: Mapping[str, Any]
) -> Requirement:
    key = f"environment-{index}"
    api_version, kind = ENVIRONMENT_CONFIG
    if source.name is not None:
        return Requirement(key, api_version, kind, match_name=source.name)
    labels = []
    for label, value in sorted((source.matchLabels or {}).items()):
        resolved = value.value
        if value.fromFieldPath is not None:
            resolved = get_path(composite, value.fromFieldPath)
            if resolved is None or resolved == "":
                raise InputError(
                    value.fromFieldPath,
                    f"required to select EnvironmentConfigs (input environment[{index}]"
                    f".matchLabels.{label}) but not set on the composite",
                )
        labels.append((label, str(resolved)))
    return Requirement(key, api_version, kind, match_labels=tuple(labels))


def merge_environment(
    step: Input,
    requirements: list[Requirement],
    fetched: Mapping[str, list[dict[str, Any]] | None],
    context_environment: Mapping[str, Any],
) -> Environment:
    """Merge the context environment and the fetched EnvironmentConfigs, in order."""
    env = Environment(data=dict(context_environment), requirements=requirements)
    for source, requirement in zip(step.environment, requirements, strict=True):
        items = fetched.get(requirement.key)
        if items is None:
            env.pending = True
            continue
        if not items and not source.optional:
            raise InputError(
                f"input.environment[{requirements.index(requirement)}]",
                f"no {requirement.describe()} exists; create it or mark the source optional",
            )
        for item in items:
            data = item.get("data") or {}
            if not isinstance(data, Mapping):
                name = get_path(item, "metadata.name")
                raise InputError(f"EnvironmentConfig {name}.data", "must be an object")
            env.data = deep_merge(env.data, data)
    return env
