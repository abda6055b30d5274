"""The Composed condition's hold message reads back: ``fnplatform.holds``' grammar.

Every golden the real Crossplane CLI rendered through the function is read: each
``WaitingForDependencies`` message parses, and formatting what it parsed gives the message
back, byte for byte. The grammar's edges are pinned below: a Wait that would not read back is
refused where it is built, and a message the function can't have written is refused naming it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from fnplatform.holds import (
    CONNECTION_DETAILS,
    READY,
    WAITING,
    Hold,
    Wait,
    parse_wait,
    parse_waiting_summary,
    waiting_summary,
)

from tests.support.table import case

ROOT = Path(__file__).resolve().parents[2]
GOLDENS = sorted((ROOT / "tests" / "golden").glob("*/*.yaml")) + sorted(
    (ROOT / "tests" / "golden").glob("*/namespaced/*.yaml")
)


def _documents(golden: Path) -> list[dict[str, Any]]:
    return [d for d in yaml.safe_load_all(golden.read_text()) if d]


def _waiting(golden: Path) -> str | None:
    for condition in _documents(golden)[0]["status"].get("conditions", []):
        if condition["type"] == "Composed" and condition["reason"] == WAITING:
            return str(condition["message"])
    return None


WAITING_GOLDENS = [g for g in GOLDENS if _waiting(g) is not None]


def test_goldens_hold_things_back() -> None:
    """The round trip below reads real messages (both forms, outside waits among them)."""
    assert len(WAITING_GOLDENS) >= 40, "goldens with a WaitingForDependencies Composed condition"
    outside = [
        g
        for g in WAITING_GOLDENS
        if any(
            w.resource is None
            for h in parse_waiting_summary(_waiting(g) or "").values()
            for w in h.waits_for
        )
    ]
    assert any("namespaced" in g.parts for g in outside), "an outside wait in the namespaced form"
    assert any("namespaced" not in g.parts for g in outside), "an outside wait in the v1 form"


@pytest.mark.parametrize(
    "golden",
    WAITING_GOLDENS,
    ids=[str(g.relative_to(ROOT / "tests" / "golden")) for g in WAITING_GOLDENS],
)
def test_every_hold_message_of_every_golden_reads_back(golden: Path) -> None:
    message = _waiting(golden)
    assert message is not None
    held = parse_waiting_summary(message)
    assert waiting_summary(held) == message, "formatting the parsed holds gives the message"
    composed = {
        d["metadata"]["annotations"]["crossplane.io/composition-resource-name"]
        for d in _documents(golden)[1:]
        if d.get("kind") != "Result"
    }
    assert not set(held) & composed, "a held-back resource is not composed"
    # What a hold waits for may be neither composed nor held in this pass: a resource the
    # composer emits only once something else exists (cluster-crossplane-admin, once the
    # cluster is observed), so nothing is asserted about it here.


@pytest.mark.parametrize(
    ("wait", "reason"),
    [
        case("waits for the resource to exist", Wait("network"), "waits for the resource to exist"),
        case("a condition", Wait("pool-batch", READY), "a condition"),
        case(
            "a condition and why",
            Wait("shoot", "Ready (the garden serves no kubeconfig before)"),
            "a condition and why",
        ),
        case(
            "a Job's end",
            Wait("root-job", "complete (the generated administrator password)"),
            "a Job's end",
        ),
        case("connection details", Wait("database", CONNECTION_DETAILS), "connection details"),
        case(
            "a field with indexes",
            Wait("cluster", "status.atProvider.identity[0].oidc[0].issuer"),
            "a field with indexes",
        ),
        case(
            "a field and its value",
            Wait("certificate", "status.atProvider.status ISSUED"),
            "a field and its value",
        ),
        case(
            "only why",
            Wait("key-identity-access", "(the identity's grant on the key vault)"),
            "only why",
        ),
        case(
            "outside: begins with a word, not a name and a detail",
            Wait(None, "a node group"),
            "outside: begins with a word, not a name and a detail",
        ),
        case(
            "outside: begins with a capital",
            Wait(None, "ConfigMap asya-runtime in namespace asya (runtime.configMap)"),
            "outside: begins with a capital",
        ),
        case(
            "outside, with a comma a user wrote: reads back as two outside waits, same message",
            Wait(None, "key a, b.py in ConfigMap x (runtime.scriptPath names it)"),
            "outside, with a comma a user wrote: reads back as two outside waits, same message",
        ),
    ],
    ids=lambda v: v if isinstance(v, str) else None,
)
def test_a_hold_reads_back(wait: Wait, reason: str) -> None:
    message = waiting_summary({"held": Hold((wait, Wait("other", READY)))})
    assert waiting_summary(parse_waiting_summary(message)) == message, reason
    if ", " not in str(wait):
        assert parse_waiting_summary(message)["held"].waits_for[0] == wait, reason


@pytest.mark.parametrize(
    ("resource", "detail", "refusal", "reason"),
    [
        case(
            "a detail of no known form would read as something outside the composite",
            "a",
            "node group",
            "outside the Composed condition's grammar",
            "a detail of no known form would read as something outside the composite",
        ),
        case(
            "an outside wait that looks like a composed resource",
            None,
            "network",
            "reads as one on composed resource 'network'",
            "an outside wait that looks like a composed resource",
        ),
        case(
            "an outside wait that looks like a composed resource and a detail",
            None,
            "cluster Ready",
            "reads as one on composed resource 'cluster'",
            "an outside wait that looks like a composed resource and a detail",
        ),
        case(
            "an outside wait saying nothing",
            None,
            "",
            "needs a text",
            "an outside wait saying nothing",
        ),
        case(
            "not a composition name",
            "Network",
            "",
            "outside the Composed condition's grammar",
            "not a composition name",
        ),
    ],
)
def test_a_wait_that_would_not_read_back_is_refused_where_it_is_built(
    resource: str | None,
    detail: str,
    refusal: str,
    reason: str,
) -> None:
    with pytest.raises(ValueError, match=refusal):
        Wait(resource, detail)


@pytest.mark.parametrize(
    ("message", "refusal", "reason"),
    [
        case(
            "a parenthesis left open",
            "db (waits for key (unclosed)",
            "unmatched parentheses",
            "a parenthesis left open",
        ),
        case(
            "no hold's shape",
            "db waits for key",
            "is not '<resource> \\(waits for",
            "no hold's shape",
        ),
        case(
            "a trailing separator",
            "db (waits for key), ",
            "is not '<resource>",
            "a trailing separator",
        ),
    ],
)
def test_a_message_the_function_cannot_write_is_refused_naming_it(
    message: str,
    refusal: str,
    reason: str,
) -> None:
    with pytest.raises(ValueError, match=refusal) as refused:
        parse_waiting_summary(message)
    assert repr(message) in str(refused.value), reason


def test_no_holds_is_the_empty_message() -> None:
    assert waiting_summary({}) == ""
    assert parse_waiting_summary("") == {}
    assert parse_wait("network") == Wait("network")
