"""A pass is reused only while every observed field it read answers the same
(fnplatform.engine.reuse).

Each module's case is converged to its steady state; then the observed state changes the way
providers change it between passes (``resourceVersion``, fields nothing reads, a field a
composer does read, a condition), and every answer must be byte for byte what composing from
nothing gives (the memo emptied). The whole suite also runs with ``FNPLATFORM_VERIFY_REUSE=1``
(tests/conftest.py): every reuse is composed again and compared.
"""

from __future__ import annotations

import copy
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import fnplatform
import pytest
from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from fnplatform.api.step_input import PhaseTTL
from fnplatform.engine.reuse import PASSES, RecordedReads, SettledResource, answers_same, digest_of
from fnplatform.observation.resources import ObservedResources
from fnplatform.request.structs import encode_entry

from function.dispatch import compose_bytes
from tests.support.cases import (
    ModuleCase,
    cluster_case,
    cluster_import_case,
    converge,
    in_both_forms,
    module_cases,
)
from tests.support.harness import FunctionClient, Rendered
from tests.support.harness import request as make_request
from tests.support.table import case

Body = dict[str, Any]
MAX_SEND = 4 * 1024 * 1024
TTL = PhaseTTL()


def _steady(case: ModuleCase) -> tuple[Body, dict[str, Body]]:
    """The composite (with a resourceVersion, as Crossplane sends it) and the observed state
    of ``case`` once everything exists and is Ready."""

    def run(req: fnv1.RunFunctionRequest) -> Rendered:
        return Rendered(
            fnv1.RunFunctionResponse.FromString(
                compose_bytes(req.SerializeToString(), MAX_SEND, TTL).response
            )
        )

    _, observed = converge(run, case)
    composite = copy.deepcopy(case.composite)
    composite["metadata"]["resourceVersion"] = "100"
    return composite, observed


def _request(case: ModuleCase, composite: Body, observed: dict[str, Body]) -> bytes:
    return case.request(composite=composite, observed=observed, tag="t").SerializeToString()


def _answer(payload: bytes) -> tuple[bytes, bool]:
    """The response to ``payload`` and whether its pass was reused."""
    answer = compose_bytes(payload, MAX_SEND, TTL)
    return answer.response, answer.record.reused


def _from_nothing(payload: bytes) -> bytes:
    """The response composed with no pass reused (what is remembered stays)."""
    limit, PASSES.limit_bytes = PASSES.limit_bytes, 0
    try:
        return compose_bytes(payload, MAX_SEND, TTL).response
    finally:
        PASSES.limit_bytes = limit


def _bumped(composite: Body, observed: dict[str, Body], step: int) -> tuple[Body, dict[str, Body]]:
    """Every resourceVersion moved on, as after any write: nothing a composer reads."""
    composite = copy.deepcopy(composite)
    composite["metadata"]["resourceVersion"] = str(200 + step)
    observed = copy.deepcopy(observed)
    for i, body in enumerate(observed.values()):
        body.setdefault("metadata", {})["resourceVersion"] = f"{step}-{i}"
    return composite, observed


CASES = in_both_forms([*module_cases(), cluster_import_case("aws", "manage")])


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_a_pass_whose_reads_are_unchanged_is_reused_byte_for_byte(case: ModuleCase) -> None:
    composite, observed = _steady(case)
    first, _ = _answer(_request(case, composite, observed))
    for step in range(3):
        bumped_composite, bumped = _bumped(composite, observed, step)
        payload = _request(case, bumped_composite, bumped)
        answer, reused = _answer(payload)
        assert reused, f"{case.xr_name}: a new resourceVersion alone was composed again"
        assert answer == first == _from_nothing(payload)


def _gcp_steady() -> tuple[ModuleCase, Body, dict[str, Body]]:
    case = cluster_case("gcp")
    composite, observed = _steady(case)
    return case, composite, observed


Change = Callable[[dict[str, Body]], None]


def _set_email(observed: dict[str, Body]) -> None:
    observed["cluster-nodes"]["status"]["atProvider"]["email"] = "other@p.iam.gserviceaccount.com"


def _not_ready(observed: dict[str, Body]) -> None:
    for condition in observed["cluster"]["status"]["conditions"]:
        if condition["type"] == "Ready":
            condition["status"] = "False"
            condition["reason"] = "Unavailable"


def _unsynced(observed: dict[str, Body]) -> None:
    name = sorted(observed)[0]
    observed[name]["status"]["conditions"].append(
        {"type": "Synced", "status": "False", "reason": "ReconcileError", "message": "quota"}
    )


def _gone(observed: dict[str, Body]) -> None:
    del observed[sorted(name for name in observed if name.startswith("pool-"))[0]]


def _unread(observed: dict[str, Body]) -> None:
    observed["cluster"]["status"]["atProvider"]["nothingReadsThis"] = "x"


@pytest.mark.parametrize(
    ("change", "reused"),
    [
        case(
            "a changed field the composers read (the node service account's email) must "
            "compose again: reusing would keep a stale reference",
            _set_email,
            False,
        ),
        case(
            "readiness is read every pass and never part of what is reused: a not-Ready "
            "cluster changes the answer either way",
            _not_ready,
            None,
        ),
        case(
            "a Synced=False condition is read (it feeds the Composed condition): the pass "
            "is composed again",
            _unsynced,
            False,
        ),
        case("an observed resource gone changes what is composed: never reused", _gone, False),
        case(
            "a status field no composer reads changes nothing: the pass is reused and the "
            "answer is byte for byte the same",
            _unread,
            True,
        ),
    ],
    ids=["read-field", "ready-condition", "synced-false", "resource-gone", "unread-field"],
)
def test_what_a_pass_reads_decides_and_readiness_is_always_read_again(
    change: Change, reused: bool | None
) -> None:
    """A changed read composes again; an unread change is reused; either way the answer is
    composing's, readiness included (read every pass, never part of what is reused)."""
    case, composite, observed = _gcp_steady()
    before, _ = _answer(_request(case, composite, observed))
    changed = copy.deepcopy(observed)
    change(changed)
    payload = _request(case, composite, changed)
    answer, was_reused = _answer(payload)
    if reused is not None:
        assert was_reused is reused
    assert answer == _from_nothing(payload)
    assert (answer == before) is (change is _unread)


def test_a_refused_input_is_refused_again_when_reused(client: FunctionClient) -> None:
    case = cluster_case("gcp")
    composite = copy.deepcopy(case.composite)
    composite["spec"]["pools"] = "three"
    answers = []
    for version in ("1", "2", "3"):
        composite["metadata"]["resourceVersion"] = version
        answers.append(client.run(case.request(composite=composite)))
    fatal = answers[0].fatal
    assert fatal and fatal[0].startswith("spec.pools"), fatal
    assert all(a.response == answers[0].response for a in answers)


def test_the_digest_leaves_out_only_what_no_pass_reads() -> None:
    case = cluster_case("gcp")
    base = case.request(tag="a")
    digest = digest_of(base)
    assert digest is not None

    def changed(edit: Callable[[Body], None], **parts: Any) -> bytes | None:
        composite = copy.deepcopy(case.composite)
        edit(composite)
        return digest_of(case.request(composite=composite, **parts))

    def nothing(_: Body) -> None:
        return None

    def meta(field: str, value: Any) -> Callable[[Body], None]:
        return lambda c: c["metadata"].__setitem__(field, value)

    # What every write changes, and the call's tag: the same digest.
    assert changed(nothing, tag="b") == digest
    assert changed(meta("resourceVersion", "7")) == digest
    assert changed(meta("generation", 3)) == digest
    assert changed(meta("managedFields", [{"manager": "crossplane"}])) == digest
    # Everything else a pass may read: another digest.
    assert changed(meta("uid", "1234")) != digest
    assert changed(meta("labels", {"a": "b"})) != digest
    assert changed(lambda c: c["spec"]["parameters"].__setitem__("region", "x")) != digest
    assert changed(lambda c: c.__setitem__("status", {"phase": "Ready"})) != digest
    assert changed(nothing, input={**case.step(), "settings": {"x": 1}}) != digest
    assert changed(nothing, required={"other": [{"apiVersion": "v1", "kind": "X"}]}) != digest
    with_context = make_request(case.composite, case.step(), context={"k": "v"})
    assert digest_of(with_context) != digest_of(make_request(case.composite, case.step()))
    # An earlier step's desired resources are updated in place: never reused.
    earlier = make_request(case.composite, case.step(), desired={"x": {"kind": "X"}})
    assert digest_of(earlier) is None


@pytest.mark.parametrize(
    "body",
    [
        case(
            "a plain ConfigMap body: the Ready byte is the entry's last, so readiness can "
            "be swapped without encoding the body again",
            {
                "apiVersion": "v1",
                "kind": "ConfigMap",
                "metadata": {"name": "a"},
                "data": {"k": "v"},
            },
        ),
        case(
            "floats, booleans, null and nested empty strings encode before the Ready "
            "byte, which stays the last byte",
            {"apiVersion": "x/v1", "kind": "Y", "spec": {"n": 1.5, "l": [True, None, {"z": ""}]}},
        ),
    ],
)
def test_an_entrys_readiness_is_its_last_byte(body: Body) -> None:
    true_entry = encode_entry("some-name", body, fnv1.READY_TRUE)
    resource = SettledResource("some-name", true_entry, None, False)
    assert resource.entry_with(fnv1.READY_TRUE) == true_entry
    assert resource.entry_with(fnv1.READY_FALSE) == encode_entry(
        "some-name", body, fnv1.READY_FALSE
    )


#: What would make a pass depend on more than reuse compares: the request read around
#: ObservedResources and Composition.require, a clock, the environment, randomness.
UNSEEN_INPUTS = re.compile(
    r"\bcomp\.request\b|\.request\.observed\b|\bimport (time|random|datetime|uuid)\b"
    r"|\bfrom (time|random|datetime|uuid) import\b|\bos\.environ\b|\bos\.getenv\b"
)


def test_composing_reads_nothing_reuse_does_not_compare() -> None:
    """docs/architecture.md, "Passes reused while their reads are unchanged": what makes a
    reused pass exact. (fnplatform.engine.reuse itself reads FNPLATFORM_VERIFY_REUSE at import;
    fnplatform.upgrade, the upgrade preview, starts processes and is never on the request path.)"""
    root = Path(fnplatform.__file__).parent
    offenders = [
        f"{path.relative_to(root)}:{number}: {line.strip()}"
        for path in sorted(root.rglob("*.py"))
        if path.name != "reuse.py" and path.relative_to(root).parts[0] != "upgrade"
        for number, line in enumerate(path.read_text().splitlines(), 1)
        if UNSEEN_INPUTS.search(line.split("#")[0])
    ]
    assert offenders == []


def test_a_read_that_cannot_be_compared_is_never_reused() -> None:
    """A default that is not hashable (or an answer marshal refuses) leaves the pass
    unremembered rather than guessed."""
    req = make_request(
        {"apiVersion": "x/v1", "kind": "X", "metadata": {"name": "a"}},
        {"apiVersion": "v1", "kind": "Input", "module": "cluster"},
        observed={"r": {"apiVersion": "v1", "kind": "R", "spec": {"n": 1}}},
    )
    reads = RecordedReads(ObservedResources(req.observed.resources))
    assert reads.field("r", "spec.n") == 1
    assert not reads.unhashable
    assert reads.field("r", "spec.missing", []) == []
    assert reads.unhashable


def test_a_read_of_something_absent_is_compared_too() -> None:
    req = make_request(
        {"apiVersion": "x/v1", "kind": "X", "metadata": {"name": "a"}},
        {"apiVersion": "v1", "kind": "Input", "module": "cluster"},
    )
    reads = RecordedReads(ObservedResources(req.observed.resources))
    with pytest.raises(KeyError):
        reads["r"]
    assert reads.get("r") is None
    assert not reads.unhashable
    later = make_request(
        {"apiVersion": "x/v1", "kind": "X", "metadata": {"name": "a"}},
        {"apiVersion": "v1", "kind": "Input", "module": "cluster"},
        observed={"r": {"apiVersion": "v1", "kind": "R"}},
    )
    assert answers_same(reads.reads, ObservedResources(req.observed.resources))
    assert not answers_same(reads.reads, ObservedResources(later.observed.resources))


MAPPING_READS = {"__getitem__", "__contains__", "__iter__", "__len__"}


def test_every_read_of_observed_resources_is_recorded() -> None:
    """A public read of ObservedResources that RecordedReads does not note would be an input
    of the pass that reuse never compares."""

    def reads(cls: type) -> set[str]:
        return {
            name
            for name, value in vars(cls).items()
            if callable(value) and (not name.startswith("_") or name in MAPPING_READS)
        }

    assert reads(ObservedResources) <= reads(RecordedReads) | {"__init__"}
