"""Bad input, property-based: whatever arrives, the function answers with a well-formed response.

For every module case (``tests/support/cases.py``) hypothesis replaces or deletes parts of the
composite, the step input, the observed resources and the fetched EnvironmentConfigs with wrong
types, nulls, empty, huge and unicode strings and deep nesting. Each response must come back
without a gRPC error, without a Python traceback or "internal error" in any message, and when
it is fatal the message must name a field (``field: reason``).
"""

from __future__ import annotations

import copy
import os
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.support.cases import (
    CASE_FACTORIES,
    Invalid,
    ModuleCase,
    environment_config,
    in_both_forms,
    module_cases,
    shipped_modules,
)
from tests.support.harness import Rendered
from tests.support.table import case

CASES = in_both_forms(module_cases())  # each case, and its v2 namespaced twin
CASE_IDS = [case.id for case in CASES]
PROPERTY = settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
        HealthCheck.function_scoped_fixture,
    ],
    database=None,
    # CI must be reproducible: the same examples every run. HYPOTHESIS_EXPLORE=1 draws new ones.
    derandomize=os.environ.get("HYPOTHESIS_EXPLORE") != "1",
)

# -- strategies ----------------------------------------------------------------------------

TEXT = st.one_of(
    st.text(max_size=12),
    st.just(""),
    st.text(alphabet="ÄßЖ漢字🙂\u200b\u202e\x00\t\n", min_size=1, max_size=20),
    st.sampled_from(["x" * 70_000, "a.b" * 30_000, "${{ }}{{ x }}{% if %}", "../../etc/passwd"]),
)
SCALARS = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**53), 2**53),
    st.floats(allow_nan=False, allow_infinity=False),
    TEXT,
)
JSON = st.recursive(
    SCALARS,
    lambda inner: st.one_of(
        st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=12,
)


def nested(depth: int, leaf: Any = "deep") -> Any:
    """A value nested ``depth`` maps deep."""
    value = leaf
    for level in range(depth):
        value = {f"l{level}": value} if level % 2 else [value]
    return value


VALUES = st.one_of(JSON, st.integers(1, 30).map(nested))  # deeper: protobuf refuses to build


def paths(value: Any, prefix: tuple[str, ...] = ()) -> Iterator[tuple[str, ...]]:
    """Every key path inside the maps of ``value``."""
    if isinstance(value, dict):
        for key, child in value.items():
            yield (*prefix, key)
            yield from paths(child, (*prefix, key))


def replaced(document: dict[str, Any], path: tuple[str, ...], value: Any, delete: bool) -> dict:
    """``document`` with ``path`` set to ``value`` (or removed)."""
    result = copy.deepcopy(document)
    target = result
    for part in path[:-1]:
        target = target[part]
    if delete:
        del target[path[-1]]
    else:
        target[path[-1]] = value
    return result


def mutations(document: dict[str, Any]) -> st.SearchStrategy[dict[str, Any]]:
    """``document`` with one to three of its paths replaced by bad values or removed."""
    every = sorted(paths(document))

    def apply(changes: list[tuple[tuple[str, ...], Any, bool]]) -> dict[str, Any]:
        result = document
        for path, value, delete in changes:
            if _exists(result, path):
                result = replaced(result, path, value, delete)
        return result

    change = st.tuples(st.sampled_from(every), VALUES, st.booleans())
    return st.lists(change, min_size=1, max_size=3).map(apply)


def _exists(document: Any, path: tuple[str, ...]) -> bool:
    for part in path:
        if not isinstance(document, dict) or part not in document:
            return False
        document = document[part]
    return True


# -- the property ----------------------------------------------------------------------------


def assert_well_formed(rendered: Rendered) -> None:
    """No traceback or internal error anywhere; a fatal result says ``field: reason``."""
    texts = [
        *rendered.messages,
        *(c.message for c in rendered.response.conditions),
        *(c.reason for c in rendered.response.conditions),
    ]
    for text in texts:
        assert "Traceback" not in text, text
        assert "internal error" not in text, text
    for message in rendered.fatal:
        assert ": " in message, f"fatal result names no field: {message!r}"
        assert len(message) < 20_000, "a fatal message must not echo huge input"


@pytest.mark.parametrize("case", CASES, ids=CASE_IDS)
def test_baseline_is_well_formed(client, case: ModuleCase):
    assert_well_formed(client.run(case.request()))


@pytest.mark.parametrize("case", CASES, ids=CASE_IDS)
@PROPERTY
@given(data=st.data())
def test_any_composite(client, case: ModuleCase, data):
    composite = data.draw(mutations(case.composite))
    assert_well_formed(client.run(case.request(composite=composite)))


@pytest.mark.parametrize("case", CASES, ids=CASE_IDS)
@PROPERTY
@given(data=st.data())
def test_any_step_input(client, case: ModuleCase, data):
    step = data.draw(
        st.one_of(
            mutations(case.step()),
            st.dictionaries(
                st.sampled_from(["apiVersion", "kind", "module", "environment", "ttl", "settings"]),
                VALUES,
            ).map(lambda extra: {**case.step(), **extra}),
        )
    )
    assert_well_formed(client.run(case.request(input=step)))


@pytest.mark.parametrize("case", CASES, ids=CASE_IDS)
@PROPERTY
@given(data=st.data())
def test_any_environment_config(client, case: ModuleCase, data):
    base = case.environment[0] if case.environment else environment_config("env", {"a": 1})
    items = data.draw(
        st.lists(
            st.one_of(
                mutations(base),
                st.dictionaries(st.text(max_size=10), VALUES, max_size=5).map(
                    lambda junk: environment_config("junk", junk)
                ),
                st.just({"apiVersion": "v1"}),
            ),
            max_size=3,
        )
    )
    step = case.step()
    step["environment"] = [{"name": "env-a"}]
    assert_well_formed(client.run(case.request(input=step, required={"environment-0": items})))


@pytest.mark.parametrize("case", CASES, ids=CASE_IDS)
@PROPERTY
@given(data=st.data())
def test_any_observed_state(client, case: ModuleCase, data):
    first = client.run(case.request())
    names = sorted(first.resources) or ["anything"]
    bodies = {
        name: data.draw(
            st.one_of(
                mutations(body) if (body := first.resources.get(name)) else st.nothing(),
                st.dictionaries(st.sampled_from(["status", "metadata", "spec", "kind"]), VALUES),
                st.builds(
                    lambda s: {"status": s},
                    st.dictionaries(st.sampled_from(["conditions", "atProvider", "url"]), VALUES),
                ),
            )
        )
        for name in data.draw(st.lists(st.sampled_from(names), max_size=4, unique=True))
    }
    assert_well_formed(client.run(case.request(observed=bodies)))


@pytest.mark.parametrize("case", CASES, ids=CASE_IDS)
@pytest.mark.parametrize("missing", ["metadata", "spec", "labels", "everything"])
def test_missing_sections(client, case: ModuleCase, missing: str):
    composite = copy.deepcopy(case.composite)
    if missing == "labels":
        composite["metadata"].pop("labels", None)
    elif missing == "everything":
        composite = {}
    else:
        composite.pop(missing, None)
    rendered = client.run(case.request(composite=composite))
    assert_well_formed(rendered)
    if (missing == "labels" and case.label_free) or composite == case.composite:
        # labels are optional for this module, or a namespaced twin has none to remove
        assert not rendered.fatal, rendered.fatal
        return
    assert rendered.fatal, "a composite without its sections cannot compose"


@pytest.mark.parametrize("case", CASES, ids=CASE_IDS)
def test_deep_nesting_is_answered(client, case: ModuleCase):
    composite = copy.deepcopy(case.composite)
    composite["spec"]["parameters"] = nested(90)
    assert_well_formed(client.run(case.request(composite=composite)))


def _invalid_variants() -> list[tuple[ModuleCase, Invalid]]:
    return [(case, variant) for case in CASES for variant in case.invalid]


@pytest.mark.parametrize(
    ("case", "variant"),
    _invalid_variants(),
    ids=[f"{c.id}-{v.name}" for c, v in _invalid_variants()],
)
def test_invalid_variant_names_its_field(client, case: ModuleCase, variant: Invalid):
    composite, step = copy.deepcopy(case.composite), case.step()
    variant.mutate(composite, step)
    rendered = client.run(case.request(composite=composite, input=step))
    assert_well_formed(rendered)
    assert rendered.fatal, f"{variant.name} composed: {sorted(rendered.resources)}"
    assert any(variant.field in m for m in rendered.fatal), rendered.fatal


def test_every_shipped_module_has_a_case():
    missing = [m for m in shipped_modules() if m not in CASE_FACTORIES]
    assert not missing, f"add a ModuleCase to tests/support/cases.py for {missing}"


@pytest.mark.parametrize(
    "junk",
    [
        case(
            "an empty request decodes to an empty RunFunctionRequest: answered, never a traceback",
            b"",
        ),
        case(
            "bytes that are no protobuf: a fatal result saying the request cannot be "
            "read, never a traceback",
            b"\x00\xff\xfe garbage",
        ),
        case(
            "a long run of truncated fields: the decoder fails part way and the answer is "
            "still a fatal result naming the request",
            b"\x0a\xff" * 50,
        ),
    ],
)
def test_garbage_bytes_are_a_fatal_result(junk: bytes):
    from crossplane.function.proto.v1 import run_function_pb2 as fnv1

    from function.dispatch import run_bytes

    rsp = fnv1.RunFunctionResponse.FromString(run_bytes(junk))
    messages = [r.message for r in rsp.results]
    assert all("Traceback" not in m for m in messages)
    if junk:
        assert any("request" in m for m in messages), messages
