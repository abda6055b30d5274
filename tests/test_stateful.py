"""Stateful resources are never removed from desired state by a transient problem.

For every module case: compose until everything exists (``converge``), then break the input
the way an edit or an outage would (missing EnvironmentConfig, EnvironmentConfig with bad data,
each invalid variant of the case, a missing flavor). Either every stateful resource that exists
is still desired, or the response is fatal (Crossplane then keeps the previous desired state);
either way a result or condition says why.
"""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest
from crossplane.function.proto.v1 import run_function_pb2 as fnv1

from tests.support.cases import (
    ModuleCase,
    baseline_unavailable,
    converge,
    in_both_forms,
    module_cases,
)
from tests.support.harness import Rendered

CASES = in_both_forms(module_cases())  # each case, and its v2 namespaced twin


@dataclass(frozen=True)
class Breakage:
    """A transient problem: ``apply`` returns the request kwargs for the case."""

    name: str
    apply: Callable[[ModuleCase], dict[str, Any]]


def _missing_environment(case: ModuleCase) -> dict[str, Any]:
    return {"required": {**case.fetched(), "environment-0": []}}


def _environment_not_fetched(case: ModuleCase) -> dict[str, Any]:
    fetched = case.fetched()
    fetched.pop("environment-0", None)
    return {"required": fetched}


def _environment_with_bad_data(case: ModuleCase) -> dict[str, Any]:
    fetched = case.fetched()
    for item in fetched.get("environment-0", []):
        item["data"] = {key: {"broken": [1, 2]} for key in item["data"]}
    return {"required": fetched}


def _environment_data_not_a_map(case: ModuleCase) -> dict[str, Any]:
    fetched = case.fetched()
    for item in fetched.get("environment-0", []):
        item["data"] = "oops"
    return {"required": fetched}


def _missing_flavor(case: ModuleCase) -> dict[str, Any]:
    composite = copy.deepcopy(case.composite)
    composite["spec"]["flavors"] = ["does-not-exist"]
    return {"composite": composite, "required": {**case.fetched(), "flavor-does-not-exist": []}}


def _invalid(variant_index: int) -> Callable[[ModuleCase], dict[str, Any]]:
    def apply(case: ModuleCase) -> dict[str, Any]:
        composite, step = copy.deepcopy(case.composite), case.step()
        case.invalid[variant_index].mutate(composite, step)
        return {"composite": composite, "input": step}

    return apply


def breakages(case: ModuleCase) -> list[Breakage]:
    """Every transient problem that applies to ``case``."""
    found = [Breakage("environment-not-fetched", _environment_not_fetched)]
    if case.environment:
        found += [
            Breakage("missing-environment-config", _missing_environment),
            Breakage("environment-bad-data", _environment_with_bad_data),
            Breakage("environment-data-not-a-map", _environment_data_not_a_map),
        ]
    if case.module == "async-actor":
        found.append(Breakage("missing-flavor", _missing_flavor))
    found += [Breakage(f"invalid-{v.name}", _invalid(i)) for i, v in enumerate(case.invalid)]
    return found


PARAMS = [(case, breakage) for case in CASES for breakage in breakages(case)]


@pytest.fixture(scope="module")
def converged(client) -> dict[str, tuple[Rendered, dict[str, dict[str, Any]]]]:
    """Each case composed until all its resources exist."""
    return {case.id: converge(client.run, case) for case in CASES}


def stateful_names(observed: dict[str, dict[str, Any]]) -> list[str]:
    """Observed resources whose loss loses data."""
    import fnplatform.clouds  # noqa: F401 - registers every cloud's kinds
    from fnplatform.kinds import is_stateful

    return sorted(name for name, body in observed.items() if is_stateful(body))


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_baseline_has_stateful_resources(converged, case: ModuleCase):
    rendered, observed = converged[case.id]
    if reason := baseline_unavailable(rendered):
        pytest.skip(reason)
    assert not rendered.fatal, rendered.fatal
    assert stateful_names(observed), "a stateful test needs stateful resources to protect"


@pytest.mark.parametrize(("case", "breakage"), PARAMS, ids=[f"{c.id}-{b.name}" for c, b in PARAMS])
def test_broken_input_keeps_every_stateful_resource(client, converged, case, breakage):
    baseline, observed = converged[case.id]
    if reason := baseline_unavailable(baseline):
        pytest.skip(reason)
    kwargs = breakage.apply(case)
    rendered = client.run(case.request(observed=observed, **kwargs))
    if rendered.fatal:
        assert all(": " in m for m in rendered.fatal), rendered.fatal
        return
    desired = rendered.resources
    if rendered.requirements and set(rendered.requirements) - set(kwargs.get("required", {})):
        # Crossplane fetches what is required and calls again before using this answer.
        return
    kept = [name for name in stateful_names(observed) if name in desired]
    assert kept == stateful_names(observed), f"dropped {set(stateful_names(observed)) - set(kept)}"
    explained = rendered.warnings or [
        c for c in rendered.response.conditions if c.status != fnv1.STATUS_CONDITION_TRUE
    ]
    assert explained, "a degraded pass must say why"


def test_environment_not_fetched_asks_for_it_again(client, converged):
    for case in CASES:
        if not case.environment:
            continue
        rendered = client.run(
            case.request(observed=converged[case.id][1], **_environment_not_fetched(case))
        )
        assert "environment-0" in rendered.requirements


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_a_vanished_dependency_keeps_every_stateful_resource(client, converged, case):
    """A resource others use disappears from observed state (deleted by hand, a cache miss)."""
    baseline, observed = converged[case.id]
    if reason := baseline_unavailable(baseline):
        pytest.skip(reason)
    stateful = stateful_names(observed)
    for vanished in sorted(observed):
        partial = {name: body for name, body in observed.items() if name != vanished}
        rendered = client.run(case.request(observed=partial))
        if rendered.fatal:
            continue
        missing = [name for name in stateful if name not in rendered.resources and name != vanished]
        assert not missing, f"{vanished} unobserved dropped {missing}: {rendered.messages}"
