"""One way to build a :class:`~fnplatform.composition.Composition` for the concern tables:
a real request (``tests.support.harness.request``) around a composite, observed resources and
an environment, so every table runs the library's functions over what a request carries."""

from __future__ import annotations

from typing import Any

from fnplatform.api.step_input import Input
from fnplatform.composition import Composition

from tests.support.harness import request, step_input

XR: dict[str, Any] = {
    "apiVersion": "x.io/v1",
    "kind": "XThing",
    "metadata": {"name": "demo"},
    "spec": {},
}


def composition(
    *,
    composite: dict[str, Any] | None = None,
    observed: dict[str, dict[str, Any]] | None = None,
    required: dict[str, list[dict[str, Any]]] | None = None,
    env: dict[str, Any] | None = None,
) -> Composition:
    """A composition of ``composite`` (default a cluster-scoped ``demo``) as a request has it."""
    req = request(composite or XR, step_input("cluster"), observed=observed, required=required)
    return Composition(req, Input.model_validate(step_input("cluster")), env or {})
