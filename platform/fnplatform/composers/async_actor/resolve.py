"""Resolving an actor's spec: its flavors merged left to right, the claim's own spec on top.

A flavor is an EnvironmentConfig labelled ``asya.sh/flavor=<name>`` whose ``data`` is a
partial actor spec. Lists append (``env`` and ``volumes`` by name), maps merge deeply, and two
flavors setting the same leaf is an error naming both: the claim decides, never list order.
"""

from __future__ import annotations

from pydantic import ValidationError

from fnplatform.api.layering import Layer, Merged, merge_layers
from fnplatform.api.validation import WALKS, field_path, non_booleans, parse, validation_problems
from fnplatform.api.xrspec import user_spec
from fnplatform.composers.async_actor.model import ActorSpec, FlavorSelection
from fnplatform.composition import Composition
from fnplatform.errors import InputError
from fnplatform.library.lookup import require_labelled_configs

FLAVOR_LABEL = "asya.sh/flavor"
FLAVOR_KEY_PREFIX = "flavor"
KEYED_LISTS = {"env": "name", "volumes": "name", "sidecar.env": "name"}
CLAIM_ONLY = ("actor", "flavors")


def resolve_spec(comp: Composition) -> ActorSpec:
    """The validated actor spec; Pending while flavors are being fetched."""
    own = user_spec(comp.spec)
    names = parse(FlavorSelection, own, "spec").flavors
    flavors = require_labelled_configs(
        comp, names, label=FLAVOR_LABEL, key_prefix=FLAVOR_KEY_PREFIX, field="spec.flavors"
    )
    layers = [Layer(name, flavors[name], f"flavor {name}") for name in names]
    merged = merge_layers(layers, own, keyed_lists=KEYED_LISTS, user_only=CLAIM_ONLY)
    return _validate(merged)


def _validate(merged: Merged) -> ActorSpec:
    """Validate the merged spec; each problem says which flavor supplied the bad value."""

    def source(path: str) -> str:
        owner = merged.owner_of(path)
        return f" (from {owner})" if owner and owner.startswith("flavor") else ""

    loose = WALKS.get(
        "booleans", ActorSpec, merged.data, "", lambda: non_booleans(ActorSpec, merged.data, "")
    )
    if loose:
        problems = [f"spec.{path}: must be true or false{source(path)}" for path in loose]
        raise InputError("spec", "; ".join(problems))
    try:
        return ActorSpec.model_validate(merged.data)
    except ValidationError as err:
        problems = []
        for loc, reason in validation_problems(err, ActorSpec):
            path = field_path("", loc)
            problems.append(f"spec.{path}: {reason}{source(path)}")
        raise InputError("spec", "; ".join(problems)) from None
