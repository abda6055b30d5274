"""``imported``: nothing is created inside imported infrastructure unless asked for.

Each row composes a small tree (a network with a subnet and a router, a cluster with a node
pool and its role), imports part of it, runs
:func:`~fnplatform.rules.inside_imported.leave_imported_alone`
as the runner does after the composer, and says what is still desired.
"""

from __future__ import annotations

from typing import Any

import pytest
from fnplatform.composition import Composition
from fnplatform.holds import Wait
from fnplatform.kinds import register
from fnplatform.rules.inside_imported import leave_imported_alone

from tests.library.support import composition
from tests.support.table import case

THING = register("test.imported.io/v1", "Thing")


def tree(comp: Composition) -> None:
    """network <- network-subnet <- cluster <- pool (+ cluster-role, a helper of cluster;
    network-router references the network). ``pool`` uses the cluster."""
    comp.emit("network", THING.new({}))
    comp.emit("network-subnet", THING.new({"networkRef": comp.ref("network")}))
    comp.emit("network-router", THING.new({"networkRef": comp.ref("network")}))
    comp.emit("cluster-role", THING.new({}))
    comp.emit(
        "cluster",
        THING.new(
            {"subnetIdRefs": [comp.ref("network-subnet")], "roleRef": comp.ref("cluster-role")}
        ),
    )
    comp.emit("pool", THING.new({}), uses=("cluster",))


def importing(resources: list[str], include: list[str] | None = None) -> Composition:
    comp = composition()
    comp.import_from(
        {
            "enabled": True,
            "resources": {r: {"externalName": r} for r in resources},
            "include": include or [],
        },
        field="spec.parameters.import",
    )
    tree(comp)
    return comp


ALL = {"network", "network-subnet", "network-router", "cluster-role", "cluster", "pool"}


@pytest.mark.parametrize(
    ("imported", "include", "kept"),
    [
        case("nothing imported: everything stays", [], [], ALL),
        case(
            (
                "an imported network: its subnet and router are inside it, and so"
                " is the cluster on the subnet (and what the cluster needs and "
                "what uses it)"
            ),
            ["network"],
            [],
            {"network"},
        ),
        case(
            ("the network too, but the cluster opted in (by pattern): it stays with what it needs"),
            ["network"],
            ["cluster*", "network-subnet", "pool"],
            {"network", "network-subnet", "cluster", "cluster-role", "pool"},
        ),
        case(
            (
                "an imported cluster: its pool would be created inside, its own "
                "helper (role) and the subnet only it used are not built beside "
                "it; the network stays (its router needs it)"
            ),
            ["cluster"],
            [],
            {"cluster", "network", "network-router"},
        ),
        case(
            "an imported cluster with its pool opted in: the pool stays",
            ["cluster"],
            ["pool"],
            {"cluster", "pool", "network", "network-router"},
        ),
    ],
    ids=["none", "network", "network-include", "cluster", "cluster-include-pool"],
)
def test_leave_imported_alone(imported: list[str], include: list[str], kept: set[str]) -> None:
    comp = importing(imported, include)
    leave_imported_alone(comp)
    assert set(comp.desired) == kept


def test_refs_to_what_is_gone_are_dropped_from_the_adopted() -> None:
    # the adopted cluster must not wait to resolve a subnet that will never be composed
    comp = importing(["cluster"])
    leave_imported_alone(comp)
    for_provider = comp.desired["cluster"].body["spec"]["forProvider"]
    assert "subnetIdRefs" not in for_provider
    assert "roleRef" not in for_provider


def test_the_event_names_what_was_left_out() -> None:
    # a user reads which resources were not composed and how to opt in
    comp = importing(["network"])
    leave_imported_alone(comp)
    messages = [r.message for r in comp.notes.results]
    assert messages == [
        "Not composed inside or for imported resources (network): cluster, cluster-role, "
        "network-router, network-subnet, pool. List any of them in "
        "spec.parameters.import.include to create it anyway."
    ]


def test_a_held_resource_waiting_inside_goes_too() -> None:
    # held (not emitted) because it waits for the imported cluster: it would go inside
    comp = importing(["cluster"], ["pool"])
    comp.hold("release", Wait("cluster", "Ready"))
    leave_imported_alone(comp)
    assert "release" not in comp.notes.held


def test_an_unmatched_include_is_a_warning() -> None:
    # a misspelt opt-in would leave its resource out without a word
    comp = importing(["cluster"], ["pools"])
    leave_imported_alone(comp)
    warnings = [r.message for r in comp.notes.results if r.severity == 2]
    assert len(warnings) == 1
    assert warnings[0].startswith(
        "spec.parameters.import.include[0]: 'pools' names no composed resource"
    )


def test_nothing_imported_changes_nothing() -> None:
    # import disabled: no event, the bodies untouched
    comp = composition()
    tree(comp)
    before: dict[str, Any] = {n: e.body for n, e in comp.desired.items()}
    leave_imported_alone(comp)
    assert {n: e.body for n, e in comp.desired.items()} == before
    assert not comp.notes.results
