"""The response TTL follows the composite's phase: short while waiting, long once Ready.

Crossplane v2 requeues a composite after the shortest TTL its pipeline returned (realtime
compositions, on by default), so the TTL is how soon it calls again. Every module, from
nothing to Ready through gRPC: the first pass (everything waits for its dependencies) answers
with the waiting TTL, the converged pass (everything composed and observed Ready) with the
ready TTL. The step input's ``ttl`` overrides the server's defaults, as one duration or per
phase.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import pytest
from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from fnplatform.api.step_input import PhaseTTL

from tests.support.cases import converge, module_cases
from tests.support.harness import FunctionClient, Rendered, start_server
from tests.support.table import case

CASES = module_cases()
DEFAULTS = PhaseTTL(waiting=7.0, ready=420.0)


@pytest.fixture(scope="module")
def client() -> Iterator[FunctionClient]:
    """A server whose flag defaults are 7s waiting and 7m ready."""
    server, address = start_server(ttl=DEFAULTS)
    client = FunctionClient(address)
    yield client
    client.close()
    server.stop()


def seconds(rendered: Rendered) -> float:
    """The response's TTL in seconds."""
    ttl = rendered.response.meta.ttl
    return ttl.seconds + ttl.nanos / 1e9


def with_ttl(client: FunctionClient, ttl: Any) -> Callable[[fnv1.RunFunctionRequest], Rendered]:
    """Run requests whose step input sets ``ttl``."""

    def run(request: fnv1.RunFunctionRequest) -> Rendered:
        request.input.update({"ttl": ttl})
        return client.run(request)

    return run


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_waiting_then_ready_ttl_from_the_server_defaults(client, case):
    first = client.run(case.request())
    assert not first.fatal, first.fatal
    assert any(not first.ready(name) for name in first.resources), "first pass already Ready"
    assert seconds(first) == DEFAULTS.waiting

    settled, _ = converge(client.run, case)
    assert settled.resources and all(settled.ready(name) for name in settled.resources)
    assert "WaitingForDependencies" not in str(settled.response.conditions)
    assert seconds(settled) == DEFAULTS.ready


@pytest.mark.parametrize(
    ("ttl", "waiting", "ready"),
    [
        case(
            "one duration for both phases: a bare string sets the waiting and the ready TTL alike",
            "45s",
            45.0,
            45.0,
        ),  # the compatible form: one duration for every phase
        case(
            "a map sets each phase on its own: waiting while resources come up, ready once all are",
            {"waiting": "2s", "ready": "1h"},
            2.0,
            3600.0,
        ),
        case(
            "a map with only waiting keeps the default ready TTL: a phase left out is not zeroed",
            {"waiting": "1.5s"},
            1.5,
            DEFAULTS.ready,
        ),  # an unset phase keeps the server's default
        case(
            "a map with only ready keeps the default waiting TTL",
            {"ready": "10m"},
            DEFAULTS.waiting,
            600.0,
        ),
        case(
            "an empty map keeps both defaults, as no ttl at all does",
            {},
            DEFAULTS.waiting,
            DEFAULTS.ready,
        ),
    ],
    ids=["one-duration", "both", "waiting-only", "ready-only", "empty"],
)
def test_the_step_input_ttl_overrides_the_defaults_per_phase(client, ttl, waiting, ready):
    run = with_ttl(client, ttl)
    assert seconds(run(CASES[0].request())) == waiting
    settled, _ = converge(run, CASES[0])
    assert seconds(settled) == ready


def test_a_resource_not_yet_ready_keeps_the_waiting_ttl(client):
    case = CASES[0]
    settled, observed = converge(client.run, case)
    assert seconds(settled) == DEFAULTS.ready
    name = next(n for n, body in observed.items() if not body["kind"].endswith("Usage"))
    unready = {n: dict(body) for n, body in observed.items()}
    unready[name] = {
        **unready[name],
        "status": {"conditions": [{"type": "Ready", "status": "False", "reason": "Creating"}]},
    }
    again = client.run(case.request(observed=unready, connection=None))
    assert not again.ready(name)
    assert seconds(again) == DEFAULTS.waiting


@pytest.mark.parametrize(
    ("ttl", "message"),
    [
        case(
            "a string that is no duration is a fatal result naming input.ttl and the "
            "forms it takes, not a traceback",
            "soon",
            "input.ttl: must be a duration such as 30s, 5m or 1h",
        ),
        case(
            "a bad duration inside the map names the phase's own field, input.ttl.waiting",
            {"waiting": "fast"},
            "input.ttl.waiting: must be a duration such as 30s, 5m or 1h",
        ),
        case(
            "a misspelt phase is an unknown field with the nearest known name, so a typo "
            "is not silently ignored",
            {"waitng": "5s"},
            "input.ttl.waitng: unknown field; did you mean waiting?",
        ),
    ],
)
def test_a_bad_ttl_is_a_fatal_result_naming_the_field(client, ttl, message):
    rendered = with_ttl(client, ttl)(CASES[0].request())
    assert rendered.fatal == [message]


def test_a_fatal_result_keeps_crossplanes_default_ttl(client):
    rendered = with_ttl(client, "soon")(CASES[0].request())
    assert rendered.response.meta.ttl.seconds == 60  # the SDK's default for a bare response
    assert rendered.fatal
