"""The composite a module is sent: the kind that module composes, and only fields its API has.

A Composition whose ``compositeTypeRef`` and step ``module`` disagree would otherwise fail with
a confusing message about the first missing field; it gets one that names both kinds.

An unknown field in the composite's ``spec`` never reaches a module on a real cluster: the API
server prunes what the generated XRD does not define. ``crossplane composition render`` has no
API server, so the function does the same pruning here and says so in a warning that names the
field and the closest valid one (a typo such as ``spec.pool`` would otherwise go unnoticed).
"""

from __future__ import annotations

import functools
from typing import Any

from fnplatform.api.validation import unknown_fields_of
from fnplatform.api.xrd import PARAMETERS, ApiDefinition, nested_parameters_reason
from fnplatform.api.xrspec import CROSSPLANE_SPEC_FIELDS
from fnplatform.composers import composite_apis
from fnplatform.errors import CompositionError


@functools.cache
def _apis() -> dict[str, tuple[ApiDefinition, ...]]:
    return composite_apis()


@functools.cache
def known_kinds() -> frozenset[str]:
    """Every composite kind a module of this release composes (the metrics' kind label)."""
    return frozenset(api.kind for apis in _apis().values() for api in apis)


def _shown(text: str, limit: int = 64) -> str:
    """``text`` for a message, cut when longer than ``limit`` (never echo huge input)."""
    return text if len(text) <= limit else f"{text[:limit]}... ({len(text)} characters)"


def check_composite_api(
    composite: dict[str, Any], module: str
) -> tuple[dict[str, Any] | None, list[str]]:
    """Refuse a composite of another kind; return its spec without the fields its API does not
    define (None: it has none), and a warning for each field left out.

    ``composite`` is not changed: the spec returned is a copy wherever a field was left out.
    """
    spec = composite.get("spec")
    spec = spec if isinstance(spec, dict) else None
    apis = _apis().get(module)
    if not apis:
        return spec, []
    kind = composite.get("kind")
    kind = kind if isinstance(kind, str) else ""
    # The kind only: a platform may serve the XRD in its own group.
    api = next((a for a in apis if a.kind == kind), None) if kind else None
    if kind and api is None:
        owner = next(
            (m for m, group in _apis().items() if any(a.kind == kind for a in group)), None
        )
        hint = f" (module {owner} composes {kind})" if owner else ""
        composes = ", ".join(f"{a.kind} ({a.api_version})" for a in apis)
        raise CompositionError(
            "input.module",
            f"module {module} composes {composes}, but the composite's kind is "
            f"{_shown(kind)}{hint}; check the Composition's compositeTypeRef and the module "
            "in its step input",
        )
    if api is None:
        if len(apis) > 1:
            return spec, []  # no kind to tell which API: the module names the problem itself
        api = apis[0]
    if spec is None:
        return spec, []
    own = {k: v for k, v in spec.items() if k not in CROSSPLANE_SPEC_FIELDS}
    _check_not_nested_in_parameters(api, own)
    warnings = []
    for path, suggestion in unknown_fields_of(api.spec_model, own):
        spec = _without(spec, path)
        warnings.append(
            f"spec.{'.'.join(path)}: unknown field, ignored (an API server serving the XRD "
            f"drops it too); {suggestion}"
        )
    return spec, warnings


def _check_not_nested_in_parameters(api: ApiDefinition, own: dict[str, object]) -> None:
    """A spec written in the Crossplane v1 style of many guides, ``spec.parameters.<field>``,
    for an API whose fields sit directly under ``spec``: one error saying so.

    Pruned field by field it would give a warning for ``parameters`` and a missing-field error
    for each field that is in fact there, one level down.
    The XRD refuses ``spec.parameters`` with the same words (``ApiDefinition.spec_schema``).
    """
    nested = own.get(PARAMETERS)
    fields = api.spec_model.model_fields
    if PARAMETERS in fields or not isinstance(nested, dict):
        return
    ours = sorted(key for key in nested if key in fields)
    if ours:
        raise CompositionError(f"spec.{PARAMETERS}", nested_parameters_reason(api.kind, ours))


def _without(node: Any, path: tuple[str, ...]) -> Any:
    """``node`` without the field at ``path`` (map keys, and list indexes as digits): a copy of
    each map and list on the way, everything else shared, every other key in its order."""
    head, rest = path[0], path[1:]
    if isinstance(node, list):
        at = int(head)
        return [*node[:at], _without(node[at], rest), *node[at + 1 :]]
    if not rest:
        return {key: value for key, value in node.items() if key != head}
    return {key: _without(value, rest) if key == head else value for key, value in node.items()}
