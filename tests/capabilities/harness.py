"""The one way to test a capability on a cloud: a tests-only composer, run by the real runner.

A test writes what a composer would (an :data:`Ask`: the capability calls, and any values it
reads); :func:`compose_once` wraps it in a module that places a synthetic composite on the
cloud, and runs one pass through :func:`fnplatform.engine.runner.compose`, so everything shared is
applied exactly as in production (environment merge, tags, holds, Usages, readiness,
conditions). A :class:`~fnplatform.errors.CompositionError` becomes a fatal result, as
``function.dispatch`` reports it. :func:`converge` plays Crossplane: pass after pass, every
desired body fed back observed Ready as platform/providersim/simulation.py reports it, until nothing
new appears; every body of every pass must validate against the provider CRDs, because every
pass's bodies are applied. No gRPC: the server is covered elsewhere, and capability tables
stay fast enough to run over every cloud.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

import providersim
import pytest
from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from fnplatform.api.step_input import Input
from fnplatform.cloud import cloud_profiles
from fnplatform.composition import Composition
from fnplatform.engine.runner import Call, compose
from fnplatform.errors import CompositionError
from fnplatform.library.capability import PerCloud
from fnplatform.merge import deep_merge
from fnplatform.request.structs import struct_to_dict

from tests.support.cases import CLUSTER_API_ALLOWLIST, ENVIRONMENT_SETTINGS
from tests.support.harness import request, step_input
from tests.support.schemas import load_catalog
from tests.support.table import case as row

Body = dict[str, Any]
#: What a composer asks for once the composite is placed: capability calls, values read.
Ask = Callable[[Composition], None]

NAME = "probe"  # the composite: composed names derive from it (``probe-bucket``)
#: Where the probe is placed on each cloud: the region and scope its profile gives for tests
#: (``clouds/<cloud>/profile.py``), so a new cloud is probed without an edit here.
REGION = {p.name: p.example_region for p in cloud_profiles()}
SCOPE = {p.name: p.example_scope for p in cloud_profiles()}
#: One platform environment every capability composes in: the environment module's settings,
#: what each cloud's profile says a composite needs there (Azure: the Key Vault tenant and
#: administrator), and the API allowlists clusters require where endpoints are public.
SETTINGS: Body = deep_merge(
    deep_merge(
        ENVIRONMENT_SETTINGS,
        {p.name: dict(p.example_settings) for p in cloud_profiles() if p.example_settings},
    ),
    {
        cloud: block
        for allowlist in CLUSTER_API_ALLOWLIST.values()
        for cloud, block in allowlist.items()
    },
)


@dataclass(frozen=True)
class Outcome:
    """One pass's answer as plain data, and the response for byte-level comparisons."""

    desired: dict[str, Body]
    fatal: list[str]
    status: Body
    conditions: dict[str, fnv1.Condition]
    response: fnv1.RunFunctionResponse | None
    passes: int = 1

    def body(self, name: str) -> Body:
        """One desired body; fails listing what was composed when it is missing."""
        assert name in self.desired, f"{name} not desired; desired: {sorted(self.desired)}"
        return self.desired[name]

    def reported(self, name: str) -> Body:
        """``status.atProvider`` the simulated provider reports for desired body ``name`` once
        Ready (platform/providersim/simulation.py): what a test expects the composite to carry."""
        return providersim.reported(self.body(name)) or {}

    def for_provider(self, name: str) -> Body:
        """``spec.forProvider`` of one desired body."""
        return dict(self.body(name)["spec"]["forProvider"])

    @property
    def kinds(self) -> set[str]:
        """Every composed kind, bare (``Instance``) and after its group's first label
        (``rds/Instance``), where the bare kind says too little."""
        bare = {str(body["kind"]) for body in self.desired.values()}
        grouped = {
            f"{str(body['apiVersion']).split('.')[0]}/{body['kind']}"
            for body in self.desired.values()
        }
        return bare | grouped


def module(ask: Ask) -> Callable[[Composition], None]:
    """A composer placing the composite from its spec (as the shipped modules do, with field
    paths for errors), tagging it, then asking what the test asks."""

    def probe(comp: Composition) -> None:
        spec = comp.spec
        comp.place(
            spec["cloud"],
            cloud_field="spec.cloud",
            region=spec["region"],
            region_field="spec.region",
            scope=spec["scope"],
            scope_field="spec.scope",
        )
        comp.tag_with({"costCenter": "probe"}, field="spec.tags")
        ask(comp)

    return probe


def compose_once(
    cloud: str,
    ask: Ask,
    *,
    spec: Mapping[str, Any] | None = None,
    settings: Mapping[str, Any] | None = None,
    observed: Mapping[str, Body] | None = None,
) -> Outcome:
    """One pass of ``ask`` on ``cloud`` with ``observed`` resources (default: none yet)."""
    composite = {
        "apiVersion": "probe.fn.crossplane.io/v1",
        "kind": "CapabilityProbe",
        "metadata": {"name": NAME},
        "spec": {"cloud": cloud, "region": REGION[cloud], "scope": SCOPE[cloud], **(spec or {})},
    }
    # Any shipped module name: the runner ignores it, the step input requires one.
    raw = step_input("environment", settings=dict(SETTINGS if settings is None else settings))
    req = request(composite, raw, observed=observed)
    try:
        rsp = compose(Call.of(req, Input.model_validate(raw), module(ask))).response
    except CompositionError as err:  # what function.dispatch turns into a fatal result
        return Outcome({}, [str(err)], {}, {}, None)
    return Outcome(
        desired={name: struct_to_dict(r.resource) for name, r in rsp.desired.resources.items()},
        fatal=[r.message for r in rsp.results if r.severity == fnv1.SEVERITY_FATAL],
        status=dict(struct_to_dict(rsp.desired.composite.resource).get("status") or {}),
        conditions={c.type: c for c in rsp.conditions},
        response=rsp,
    )


def converge(
    cloud: str,
    ask: Ask,
    *,
    status: Mapping[str, Body] | None = None,
    spec: Mapping[str, Any] | None = None,
    settings: Mapping[str, Any] | None = None,
    limit: int = 8,
) -> Outcome:
    """Compose until the desired set is stable, everything observed Ready as the providers
    report it (:func:`observe`), with ``status`` laid over by composition name.

    Fails the test unless every pass is free of fatal results and every body validates, the
    last pass has composed everything (no hold left: ``Composed`` is True), and composing
    that pass again gives the same bytes (same input, same output: Crossplane would otherwise
    see a change, and update, on every reconcile).
    """
    catalog = load_catalog()
    observed: dict[str, Body] = {}
    for passes in range(1, limit + 1):
        outcome = compose_once(cloud, ask, spec=spec, settings=settings, observed=observed)
        assert not outcome.fatal, f"{cloud}, pass {passes}: {outcome.fatal}"
        problems = {name: catalog.validate(body) for name, body in outcome.desired.items()}
        invalid = {name: found for name, found in problems.items() if found}
        assert not invalid, f"{cloud}, pass {passes}: {invalid}"
        if set(outcome.desired) == set(observed):
            composed = outcome.conditions.get("Composed")
            assert composed is not None and composed.status == fnv1.STATUS_CONDITION_TRUE, (
                f"{cloud}: not everything composed: {composed}"
            )
            again = compose_once(cloud, ask, spec=spec, settings=settings, observed=observed)
            assert again.response is not None and outcome.response is not None
            assert again.response.SerializeToString(
                deterministic=True
            ) == outcome.response.SerializeToString(deterministic=True), (
                f"{cloud}: the same input composed a different response"
            )
            return dataclasses.replace(outcome, passes=passes)
        observed = observe(outcome.desired, status)
    pytest.fail(f"{cloud}: still composing new resources after {limit} passes")


def observe(desired: Mapping[str, Body], over: Mapping[str, Body] | None = None) -> dict[str, Body]:
    """Every ``desired`` body observed Ready as its provider reports it
    (:func:`providersim.ready`), with ``over`` (by composition name) laid over its status:
    only what a test observes deliberately unlike the simulation."""
    return {name: providersim.ready(body, (over or {}).get(name)) for name, body in desired.items()}


@dataclass(frozen=True)
class Case:
    """A row of a capability's table: what a composer asks, what each cloud must compose."""

    id: str
    ask: Ask
    #: Kinds each cloud must compose for it (at least these).
    kinds: Mapping[str, frozenset[str]]
    #: By cloud, then composition name: status laid over what the simulation reports once
    #: Ready (:func:`observe`), where a row needs something unlike it.
    status: Mapping[str, Mapping[str, Body]] = field(default_factory=dict)
    spec: Mapping[str, Any] = field(default_factory=dict)


def table(capability: PerCloud[Any], cases: list[Case]) -> list[Any]:
    """Every case on every cloud providing ``capability``: ``(case, cloud)`` parameters.

    The clouds come from the capability, so a cloud that starts providing it is tested by
    every row at once (and fails on a row naming no kinds for it). Each row's reason is made
    from the case: the capability, the ask and the kinds the cloud must compose for it.
    """
    return [
        row(
            f"{capability.name} {each.id} on {cloud}: what the composer asks must compose "
            f"at least {', '.join(sorted(each.kinds.get(cloud, ()))) or 'the kinds it names'} "
            f"there, schema-valid, as on every cloud providing {capability.name}",
            each,
            cloud,
            id=f"{each.id}-{cloud}",
        )
        for each in cases
        for cloud in capability.clouds()
    ]


def check_converges(case: Case, cloud: str) -> Outcome:
    """``case`` converges on ``cloud`` with schema-valid bodies of at least its kinds."""
    outcome = converge(cloud, case.ask, status=case.status.get(cloud), spec=case.spec)
    assert cloud in case.kinds, f"{case.id} names no kinds for {cloud}"
    missing = case.kinds[cloud] - outcome.kinds
    assert not missing, sorted(missing)
    return outcome
