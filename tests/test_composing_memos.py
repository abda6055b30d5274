"""What composing remembers between passes (issue 34 item 4) never changes an answer.

The spec walks (unknown fields, strict booleans) are remembered by the exact content of the
value walked (fnplatform.api.validation.WalkResults), and observed conditions are read once per
resource per pass (ObservedResources.conditions_of). Each test composes over gRPC, changes
one composite's spec, and checks that the answer follows the content every time, and that
another composite's answer does not move.
"""

from __future__ import annotations

import copy
import gc
from typing import Any

import pytest
from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from fnplatform.api.validation import WalkResults
from fnplatform.observation.resources import ObservedResources, none_false
from google.protobuf import struct_pb2

from function.server import GC_YOUNG_THRESHOLD, settle_heap
from tests.support.cases import cluster_case, cluster_composite
from tests.support.harness import FunctionClient, Rendered
from tests.support.table import case

UNKNOWN = "spec.parameters.colour: unknown field"


def _compose(client: FunctionClient, name: str, **parameters: Any) -> Rendered:
    composite = cluster_composite("gcp", name, pools=3)
    composite["spec"]["parameters"].update(parameters)
    return client.run(cluster_case("gcp").with_composite(composite).request())


def _warned(rendered: Rendered) -> bool:
    return any(w.startswith(UNKNOWN) for w in rendered.warnings)


def test_unknown_field_warnings_follow_each_composites_spec(client: FunctionClient) -> None:
    """The remembered walk answers for the content it walked, not for the composite."""
    steps = [  # (composite, extra parameters, warned)
        ("memo-a", {"colour": "blue"}, True),
        ("memo-a", {}, False),  # the same composite, the field removed: no warning
        ("memo-b", {"colour": "blue"}, True),  # another composite, same spec: same answer
        ("memo-a", {"colour": "blue"}, True),  # back again: remembered, still right
        ("memo-b", {}, False),
    ]
    for name, extra, warned in steps:
        rendered = _compose(client, name, **extra)
        assert rendered.fatal == [], rendered.messages
        assert _warned(rendered) is warned, (name, extra, rendered.warnings)


def test_strict_booleans_follow_the_content_exactly(client: FunctionClient) -> None:
    """``"true"`` and ``true`` marshal differently, so one is never answered for the other."""
    for value, fatal in (("true", True), (True, False), ("true", True), (False, False)):
        rendered = _compose(client, "memo-bool", privateCluster=value)
        refused = "spec.parameters.privateCluster: must be true or false"
        assert (refused in rendered.fatal) is fatal, (value, rendered.messages)


def test_one_composites_changed_spec_changes_only_its_own_output(
    client: FunctionClient,
) -> None:
    first = _compose(client, "memo-one")
    second = _compose(client, "memo-two")
    changed = _compose(client, "memo-one", tags={"team": "payments"})
    again = _compose(client, "memo-two")
    assert again.response.SerializeToString(
        deterministic=True
    ) == second.response.SerializeToString(deterministic=True)
    assert changed.resources != first.resources
    assert _compose(client, "memo-one").resources == first.resources


@pytest.mark.parametrize(
    ("limit", "values"),
    [
        case("a memo of one keeps only the newest walk: it never grows past its limit", 1, 3),
        case("as many values as the limit: all kept, the newest still answered from memory", 3, 3),
        case(
            "more values than the limit: the oldest are dropped, so memory stays bounded "
            "on a long-lived server",
            3,
            10,
        ),
        case("the production limit with fewer values: nothing is dropped", 512, 40),
    ],
)
def test_walk_results_are_bounded_and_keyed_by_content(limit: int, values: int) -> None:
    memo = WalkResults(limit)
    calls: list[int] = []

    def walk(index: int) -> list[int]:
        calls.append(index)
        return [index]

    for index in range(values):
        assert memo.get("walk", dict, {"n": index}, (), lambda i=index: walk(i)) == [index]
    assert len(memo) == min(limit, values)
    newest = values - 1
    assert memo.get("walk", dict, {"n": newest}, (), lambda: walk(-1)) == [newest]
    assert calls.count(-1) == 0  # the newest is remembered
    assert memo.get("walk", dict, {"n": 1.0 * newest}, (), lambda: walk(-2)) == [-2]  # 1.0 != 1
    assert memo.get("walk", list, {"n": newest}, (), lambda: walk(-3)) == [-3]  # other model


def test_a_value_marshal_refuses_is_walked_every_time() -> None:
    memo = WalkResults()

    class Text(str):
        pass

    assert memo.get("walk", dict, {"k": Text("v")}, (), lambda: ["walked"]) == ["walked"]
    assert len(memo) == 0


def _observed(conditions: list[dict[str, Any]]) -> Any:
    request = fnv1.RunFunctionRequest()
    body = struct_pb2.Struct()
    body.update(
        {
            "apiVersion": "v1",
            "kind": "ConfigMap",
            "metadata": {"name": "x"},
            "status": {"conditions": conditions},
        }
    )
    request.observed.resources["thing"].resource.CopyFrom(body)
    return request.observed.resources


@pytest.mark.parametrize(
    ("conditions", "ready", "unsynced"),
    [
        case("no conditions: not Ready and nothing unsynced", [], False, []),
        case(
            "Ready True answers ready, and a resource without Synced=False is not unsynced",
            [{"type": "Ready", "status": "True"}],
            True,
            [],
        ),
        case(
            "a repeated Ready condition: the last entry wins, so an earlier stale one "
            "does not decide",
            [{"type": "Ready", "status": "False"}, {"type": "Ready", "status": "True"}],
            True,
            [],
        ),
        case(
            "Synced=False with reason and message is reported as unsynced with both, so "
            "the Composed condition can say why",
            [{"type": "Synced", "status": "False", "reason": "R", "message": "no"}],
            False,
            [("thing", "ConfigMap", "x", "R", "no")],
        ),
        case(
            "Synced=False without a reason or message is not reported: there is nothing "
            "to tell the user",
            [{"type": "Synced", "status": "False"}],
            False,
            [],
        ),  # no message: nothing to say
        case(
            "a condition whose type is not a string is ignored, never a crash on a "
            "malformed observed body",
            [{"type": 1, "status": "True"}],
            False,
            [],
        ),
    ],
)
def test_conditions_are_read_once_and_answer_both_questions(
    conditions: list[dict[str, Any]],
    ready: bool,
    unsynced: list[tuple[str, ...]],
) -> None:
    observed = ObservedResources(_observed(copy.deepcopy(conditions)))
    assert observed.unsynced() == unsynced
    assert observed.condition_true("thing") is ready  # after unsynced: from what it read
    assert ObservedResources(_observed(conditions)).condition_true("thing") is ready
    assert observed.condition_true("absent") is False


def test_settle_heap_freezes_what_start_up_loaded() -> None:
    before = gc.get_threshold()
    try:
        settle_heap()
        assert gc.get_freeze_count() > 0
        assert gc.get_threshold()[0] == GC_YOUNG_THRESHOLD
    finally:
        gc.unfreeze()
        gc.set_threshold(*before)


@pytest.mark.parametrize(
    ("conditions", "shortcut"),
    [
        case(
            "no False anywhere in the bytes: the byte scan may skip reading conditions, "
            "and skipping changes no answer",
            [{"type": "Ready", "status": "True"}, {"type": "Synced", "status": "True"}],
            True,
        ),
        case(
            "a Synced=False condition: the scan must find False, so the request is never skipped",
            [{"type": "Synced", "status": "False", "reason": "R", "message": "no"}],
            False,
        ),
        case(
            "Ready=False: False is in the bytes, no shortcut",
            [{"type": "Ready", "status": "False"}],
            False,
        ),  # any False: conditions are read
        case(
            "False only as a message: the scan is a byte search, so it says False is "
            "there (safe the one way it must be)",
            [{"type": "Ready", "status": "True", "message": "False"}],
            False,
        ),
        case(
            "a word that merely begins with False (Falsehood) is not a False status: the "
            "shortcut still holds",
            [{"type": "Ready", "status": "True", "message": "Falsehood"}],
            True,
        ),  # not the Value "False"
    ],
)
def test_no_false_anywhere_is_found_in_the_bytes_and_changes_no_answer(
    conditions: list[dict[str, Any]],
    shortcut: bool,
) -> None:
    """``none_false`` is exact one way: a request with a condition False is never skipped,
    whatever serializer wrote it; without one, unsynced has nothing to report anyway."""
    observed = _observed(conditions)
    request = fnv1.RunFunctionRequest()
    request.observed.resources["thing"].CopyFrom(observed["thing"])
    for raw in (request.SerializeToString(), request.SerializeToString(deterministic=True)):
        assert none_false(raw) is shortcut
        read = ObservedResources(request.observed.resources)
        read.none_false = none_false(raw)
        assert read.unsynced() == ObservedResources(request.observed.resources).unsynced()


def test_a_refused_resource_is_reported_through_the_served_bytes(
    client: FunctionClient,
) -> None:
    """Over gRPC (``compose_bytes`` passes the request's bytes): the warning still comes."""
    case = cluster_case("gcp").with_composite(cluster_composite("gcp", "memo-sync", pools=1))
    first = client.run(case.request())
    name = sorted(first.resources)[0]
    body = copy.deepcopy(first.resources[name])
    body["status"] = {
        "conditions": [
            {"type": "Synced", "status": "False", "reason": "ReconcileError", "message": "denied"}
        ]
    }
    refused = client.run(case.request(observed={name: body}))
    assert any(
        w.startswith(f"{name} (") and w.endswith("ReconcileError: denied") for w in refused.warnings
    ), refused.messages
    body["status"]["conditions"][0]["status"] = "True"
    assert not [
        w for w in client.run(case.request(observed={name: body})).warnings if "is not synced" in w
    ]
