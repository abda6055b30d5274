"""Table-driven unit tests of the library's shared helpers, one table per concern.

Naming, tag forms, merging and layering, holding, Usages (composed and fetched), readiness,
placement, spec-error mapping, ``needs``/``needs_connection``, the non-fatal "not yet", the
Object helper and the stateful guard. The composers' behaviour over gRPC is tested per module;
these pin the rules every module shares, case by case, like function-patch-and-transform's
``*_test.go`` tables.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

import pytest
from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from fnplatform.api.layering import Layer, merge_layers
from fnplatform.api.step_input import Input
from fnplatform.cloud import cloud_profile
from fnplatform.composition import Composition
from fnplatform.engine.runner import Call, compose
from fnplatform.errors import InputError, NotYet, SpecError
from fnplatform.holds import Hold, Wait
from fnplatform.kinds import Readiness, register
from fnplatform.library import Capability, ObjectReadiness, add_object
from fnplatform.merge import deep_merge, get_path
from fnplatform.naming import dns_label
from fnplatform.request.requirements import claim_requirement
from fnplatform.request.structs import struct_to_dict
from fnplatform.rules.dependencies import add_usages, hold_unmet, needed_pairs
from fnplatform.rules.guard import dropped_stateful
from fnplatform.rules.readiness import is_ready
from fnplatform.tagging import KUBERNETES, render_tags

from tests.support.harness import request, step_input
from tests.support.table import case

BUCKETISH = register("test.fn.crossplane.io/v1", "Thing", stateful=True)
CONFIGISH = register(
    "test.fn.crossplane.io/v1", "Config", managed=False, readiness=Readiness.EXISTS
)
WRAPPED_STATEFUL = register(
    "test.wrapped.io/v1",
    "Pool",
    managed=False,
    stateful=True,
    object_readiness=(("policy", "DeriveFromCelQuery"), ("celQuery", "object.ok")),
)
XR = {"apiVersion": "x.io/v1", "kind": "XThing", "metadata": {"name": "demo"}, "spec": {}}


def composition(
    *,
    observed: dict[str, dict[str, Any]] | None = None,
    connection: dict[str, dict[str, bytes]] | None = None,
    composite: dict[str, Any] | None = None,
    env: dict[str, Any] | None = None,
) -> Composition:
    req = request(
        composite or XR, step_input("cluster"), observed=observed, observed_connection=connection
    )
    return Composition(req, Input.model_validate(step_input("cluster")), env or {})


def thing(name: str | None = None) -> dict[str, Any]:
    body = BUCKETISH.new({"size": 1})
    if name:
        body["metadata"] = {"name": name}
    return body


def ready_thing(name: str) -> dict[str, Any]:
    body = thing(name)
    body["status"] = {"conditions": [{"type": "Ready", "status": "True"}]}
    return body


# -- naming ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("parts", "max_length", "expected"),
    [
        case(
            "parts join with hyphens when they fit",
            ("my-cluster", "pool", "gpu"),
            63,
            "my-cluster-pool-gpu",
        ),
        case(
            ("upper case and underscores become a DNS label's lower case and hyphens"),
            ("My_Cluster", "Pool"),
            63,
            "my-cluster-pool",
        ),
        case("runs of hyphens collapse, and none leads or trails", ("a--b", "-c-"), 63, "a-b-c"),
        case("nothing left still gives a valid label", ("",), 63, "x"),
        case(
            "too long: cut, with a hash of the whole so names stay unique",
            ("a" * 70,),
            63,
            "a" * 54 + "-" + hashlib.sha256(b"a" * 70).hexdigest()[:8],
        ),
        case(
            "a shorter limit cuts the same way, hash of the joined parts",
            ("a" * 30, "b"),
            20,
            "a" * 11 + "-" + hashlib.sha256(b"a" * 30 + b"-b").hexdigest()[:8],
        ),
    ],
    ids=["joined", "lowercased", "dashes-collapsed", "empty", "hash-suffixed", "max-length"],
)
def test_dns_label(parts: tuple[str, ...], max_length: int, expected: str) -> None:
    assert dns_label(*parts, max_length=max_length) == expected


def test_long_names_stay_distinct() -> None:
    assert dns_label("a" * 70, "x") != dns_label("a" * 70, "y")


# -- tag forms -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("style", "tags", "expected"),
    [
        case(
            "AWS keeps keys and values as written",
            "aws",
            {"costCenter": "CC-1"},
            {"costCenter": "CC-1"},
        ),
        case(
            "AWS cuts keys at 128 and values at 256 characters",
            "aws",
            {"k" * 200: "v" * 300},
            {"k" * 128: "v" * 256},
        ),
        case(
            "GCP labels are lower case, spaces become underscores",
            "gcp",
            {"costCenter": "CC 1"},
            {"costcenter": "cc_1"},
        ),
        case(
            ("GCP label keys can't hold periods or slashes: they become underscores"),
            "gcp",
            {"crossplane.io/claim": "a.b"},
            {"crossplane_io_claim": "a_b"},
        ),
        case(
            "a GCP label key must start with a letter: the tag is dropped",
            "gcp",
            {"1bad": "x"},
            {},
        ),
        case(
            "Azure tag keys can't hold < or >: they become underscores",
            "azure",
            {"a<b>c": "v"},
            {"a_b_c": "v"},
        ),
        case(
            "Kubernetes label values can't hold spaces or slashes",
            "kubernetes",
            {"k": "a b/c"},
            {"k": "a_b_c"},
        ),
    ],
    ids=[
        "aws",
        "aws-truncated",
        "gcp-lowercase",
        "gcp-key-chars",
        "gcp-needs-letter",
        "azure-key-chars",
        "kubernetes-value",
    ],
)
def test_render_tags(style: str, tags: dict[str, str], expected: dict[str, str]) -> None:
    # each cloud's style is the one its profile declares (clouds/<cloud>/tags.py)
    chosen = KUBERNETES if style == KUBERNETES.name else cloud_profile(style).tag_style
    assert render_tags(chosen, tags) == expected


def test_tag_layers_platform_then_environment_then_user() -> None:
    comp = composition(env={"tags": {"team": "env", "tier": "gold"}})
    comp.tag_with({"team": "user"}, "spec.tags")
    assert comp.tags() == {
        "crossplane-composite": "demo",
        "platform-module": "cluster",
        "team": "user",
        "tier": "gold",
    }


@pytest.mark.parametrize(
    ("where", "bad", "field"),
    [
        case("a user's tags that are not a map: an error on spec.tags", "user", ["x"], "spec.tags"),
        case(
            ("the environment's tags that are not a map: an error on environment.tags"),
            "environment",
            "x",
            "environment.tags",
        ),
    ],
)
def test_tags_that_are_not_a_map_name_their_field(where: str, bad: Any, field: str) -> None:
    comp = composition(env={"tags": bad} if where == "environment" else {})
    with pytest.raises(InputError) as err:
        comp.tag_with(bad, "spec.tags") if where == "user" else comp.tags()
    assert err.value.field == field


# -- merging and layering ----------------------------------------------------------------------


@pytest.mark.parametrize(
    ("base", "overlay", "expected"),
    [
        case("keys of both maps are kept", {"a": 1}, {"b": 2}, {"a": 1, "b": 2}),
        case(
            "nested maps merge key by key, the overlay winning",
            {"a": {"x": 1, "y": 1}},
            {"a": {"y": 2}},
            {"a": {"x": 1, "y": 2}},
        ),
        case("lists are replaced whole, never merged", {"a": [1, 2]}, {"a": [3]}, {"a": [3]}),
        case("a scalar replaces a map", {"a": {"x": 1}}, {"a": "flat"}, {"a": "flat"}),
    ],
    ids=["disjoint", "maps-merge", "lists-replaced", "scalar-wins"],
)
def test_deep_merge(base: dict, overlay: dict, expected: dict) -> None:
    assert deep_merge(base, overlay) == expected


def test_two_layers_setting_one_leaf_is_an_error_naming_both() -> None:
    with pytest.raises(InputError) as err:
        merge_layers([Layer("small", {"cpu": 1}), Layer("large", {"cpu": 4})], {})
    assert "small" in str(err.value) and "large" in str(err.value) and "cpu" in str(err.value)


# -- holding and Usages ------------------------------------------------------------------------


@dataclass(frozen=True)
class HoldCase:
    id: str
    uses: dict[str, tuple[str, ...]]  # emitted name -> what it uses
    observed: tuple[str, ...]
    held: set[str]


HOLD_CASES = [
    case(
        "nothing observed: whatever needs another is held",
        HoldCase("nothing-observed", {"a": (), "b": ("a",)}, (), {"b"}),
    ),
    case(
        "the need observed: nothing held",
        HoldCase("need-observed", {"a": (), "b": ("a",)}, ("a",), set()),
    ),
    case(
        "a held resource holds what needs it in turn",
        HoldCase("cascade", {"a": (), "b": ("a",), "c": ("b",)}, (), {"b", "c"}),
    ),
    case(
        "what already exists is never held back (it would be deleted)",
        HoldCase("existing-never-held", {"a": (), "b": ("a",)}, ("b",), set()),
    ),
    case(
        "a need no longer desired but not observed still holds",
        HoldCase("need-not-desired", {"b": ("gone",)}, ("gone",), {"b"}),
    ),
]


@pytest.mark.parametrize("case", HOLD_CASES, ids=lambda c: c.id)
def test_hold_unmet(case: HoldCase) -> None:
    comp = composition(observed={n: thing(f"demo-{n}") for n in case.observed})
    for name, uses in case.uses.items():
        comp.emit(name, thing(), uses=uses)
    hold_unmet(comp)
    assert set(comp.notes.held) == case.held
    assert set(comp.desired) == set(case.uses) - case.held


def test_usages_are_cluster_usages_from_user_to_used_with_reasons() -> None:
    comp = composition(observed={"a": thing("demo-a"), "b": thing("demo-b")})
    comp.emit("a", thing())
    comp.emit("b", thing(), uses=["a"], reasons={"a": "b stores into a"})
    add_usages(comp)
    usage = comp.desired["usage-a-by-b"].body
    assert usage["apiVersion"] == "protection.crossplane.io/v1beta1"
    assert usage["kind"] == "ClusterUsage"
    assert usage["spec"] == {
        "of": {
            "apiVersion": BUCKETISH.api_version,
            "kind": "Thing",
            "resourceRef": {"name": "demo-a"},
        },
        "by": {
            "apiVersion": BUCKETISH.api_version,
            "kind": "Thing",
            "resourceRef": {"name": "demo-b"},
        },
        "reason": "b stores into a",
        "replayDeletion": True,
    }


@dataclass(frozen=True)
class ReductionCase:
    id: str
    pairs: tuple[tuple[str, str], ...]  # (used, user), in emission order
    needed: tuple[tuple[str, str], ...]  # what deletion order needs, in the same order
    exists: tuple[str, ...] | None = None  # the observed resources (None: all)


REDUCTION_CASES = [
    case("one pair is its own reduction", ReductionCase("single", (("b", "a"),), (("b", "a"),))),
    case(
        "a pair implied through a chain is dropped",
        ReductionCase("chain", (("b", "a"), ("c", "b"), ("c", "a")), (("b", "a"), ("c", "b"))),
    ),
    case(
        "a longer chain keeps only its links",
        ReductionCase(
            "long-chain",
            (("d", "a"), ("b", "a"), ("c", "b"), ("d", "c"), ("c", "a")),
            (("b", "a"), ("c", "b"), ("d", "c")),
        ),
    ),
    case(
        ("a uses b and c, both use d: a's own Usage of d is implied through either"),
        ReductionCase(
            "diamond",
            (("b", "a"), ("c", "a"), ("d", "a"), ("d", "b"), ("d", "c")),
            (("b", "a"), ("c", "a"), ("d", "b"), ("d", "c")),
        ),
    ),
    case(
        "independent needs are both kept",
        ReductionCase("independent-needs", (("b", "a"), ("c", "a")), (("b", "a"), ("c", "a"))),
    ),
    case(
        ("b held back this pass: its pairs are missing, so a keeps its own Usage of c"),
        ReductionCase("intermediate-held-back", (("c", "a"),), (("c", "a"),)),
    ),
    case(
        ("a cycle's reduction isn't unique: keep every pair (deletion order never loses one)"),
        ReductionCase(
            "cycle",
            (("b", "a"), ("a", "b"), ("c", "a"), ("c", "b")),
            (("b", "a"), ("a", "b"), ("c", "a"), ("c", "b")),
        ),
    ),
    case(
        "a self-pair is kept as it is",
        ReductionCase("self", (("a", "a"), ("b", "a")), (("a", "a"), ("b", "a"))),
    ),
    case(
        (
            "b is desired again but doesn't exist (deleted from under a): its"
            " Usage holds nothing yet"
        ),
        ReductionCase(
            "intermediate-missing",
            (("b", "a"), ("c", "b"), ("c", "a")),
            (("b", "a"), ("c", "b"), ("c", "a")),
            exists=("a", "c"),
        ),
    ),
    case(
        ("an intermediate missing deeper in the chain: the implied pair stays too"),
        ReductionCase(
            "deep-intermediate-missing",
            (("b", "a"), ("d", "b"), ("c", "d"), ("c", "a")),
            (("b", "a"), ("d", "b"), ("c", "d"), ("c", "a")),
            exists=("a", "b", "c"),
        ),
    ),
    case("no pairs, no Usages", ReductionCase("empty", (), ())),
]


@pytest.mark.parametrize("case", REDUCTION_CASES, ids=lambda c: c.id)
def test_needed_pairs_is_the_transitive_reduction(case: ReductionCase) -> None:
    needed = needed_pairs(case.pairs, case.exists)
    assert needed == list(case.needed)
    assert _closure(needed) == _closure(case.pairs)  # deletion order is unchanged


def _closure(pairs: Any) -> set[tuple[str, str]]:
    closure = set(pairs)
    while True:
        more = {(c, a) for (b, a) in closure for (c, b2) in closure if b == b2} - closure
        if not more:
            return closure
        closure |= more


def test_needed_pairs_on_a_few_hundred_pairs_is_cheap() -> None:
    """Every pool uses every shared resource below it: quadratic pairs, linear Usages."""
    chain = [f"n{i}" for i in range(300)]
    pairs = [(chain[j], chain[i]) for i in range(len(chain)) for j in range(i + 1, len(chain))]
    needed = needed_pairs(pairs)
    assert needed == [(chain[i + 1], chain[i]) for i in range(len(chain) - 1)]


@pytest.mark.parametrize(
    ("observed", "usages", "held"),
    [
        case(
            "everything observed: one Usage per link of the reduction",
            ("a", "b", "c", "x"),
            {"usage-b-by-a", "usage-c-by-b", "usage-x-by-b"},
            set(),
        ),
        case(
            (
                "b waits for x, so isn't desired this pass: a's own Usage of c "
                "orders deletion meanwhile"
            ),
            ("a", "c"),
            {"usage-c-by-a"},
            {"b"},
        ),
        case(
            (
                "b was deleted from under a and is desired again: until it "
                "exists, so is a's own Usage"
            ),
            ("a", "c", "x"),
            {"usage-b-by-a", "usage-c-by-b", "usage-x-by-b", "usage-c-by-a"},
            set(),
        ),
    ],
    ids=["implied-usage-dropped", "intermediate-held-back", "intermediate-missing"],
)
def test_usages_are_only_those_deletion_order_needs(
    observed: tuple[str, ...],
    usages: set[str],
    held: set[str],
) -> None:
    comp = composition(observed={n: thing(f"demo-{n}") for n in observed})
    comp.emit("c", thing())
    comp.emit("x", thing())
    comp.emit("b", thing(), uses=["c", "x"])
    comp.emit("a", thing(), uses=["b", "c"], reasons={"c": "a reads c"})
    hold_unmet(comp)
    add_usages(comp)
    assert {n for n in comp.desired if n.startswith("usage-")} == usages
    assert set(comp.notes.held) == held
    if "usage-c-by-a" in comp.desired:  # kept: its own reason stays on it
        assert comp.desired["usage-c-by-a"].body["spec"]["reason"] == "a reads c"


@pytest.mark.parametrize(
    ("by", "expect_by"),
    [
        case(
            ("a user of a fetched resource gets a Usage protecting it by that user"), "user", True
        ),
        case("no user: the Usage protects it with nothing named", None, False),
        case("a held user gets no Usage yet", "held-user", None),
    ],
    ids=["by-a-composed-resource", "reason-only", "user-not-desired"],
)
def test_protecting_a_fetched_resource(by: str | None, expect_by: bool | None) -> None:
    pool = {"apiVersion": "p.io/v1", "kind": "XPool", "metadata": {"name": "pool-x1"}}
    comp = composition()
    comp.emit("user", thing())
    comp.protect(pool, by=by, reason="consumed by demo")
    add_usages(comp)
    usages = {n: e.body for n, e in comp.desired.items() if e.body["kind"] == "ClusterUsage"}
    if expect_by is None:
        assert usages == {}
        return
    (usage,) = usages.values()
    assert usage["spec"]["of"] == {
        "apiVersion": "p.io/v1",
        "kind": "XPool",
        "resourceRef": {"name": "pool-x1"},
    }
    assert usage["spec"]["reason"] == "consumed by demo"
    assert ("by" in usage["spec"]) is expect_by


# -- readiness ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("body", "observed", "forced", "expected"),
    [
        case("not observed: not ready", thing(), None, None, False),
        case(
            "observed without a Ready condition: not ready", thing(), thing("demo-x"), None, False
        ),
        case("observed Ready: ready", thing(), ready_thing("demo-x"), None, True),
        case(
            "a kind without conditions (config-like) is ready once observed",
            CONFIGISH.new(),
            CONFIGISH.new(),
            None,
            True,
        ),
        case("forced ready by the composer, whatever is observed", thing(), None, True, True),
    ],
    ids=["absent", "no-ready-condition", "ready-condition", "exists-rule", "forced"],
)
def test_readiness(body: dict, observed: dict | None, forced: bool | None, expected: bool) -> None:
    comp = composition(observed={"x": observed} if observed else None)
    emitted = comp.emit("x", body, ready=forced)
    assert emitted is body
    assert is_ready(comp, comp.desired["x"]) is expected


# -- placement and spec errors ---------------------------------------------------------------


def test_region_and_scope_are_errors_on_the_users_field_when_missing() -> None:
    comp = composition()
    comp.place(
        "aws",
        cloud_field="spec.cloud",
        region=None,
        region_field="spec.where",
        scope=None,
        scope_field="environment.aws.accountId",
    )
    with pytest.raises(InputError) as region:
        _ = comp.region
    with pytest.raises(InputError) as scope:
        _ = comp.scope
    assert region.value.field == "spec.where"
    assert scope.value.field == "environment.aws.accountId"


add_widget = Capability[dict[str, Any]]("test_widget", home="widget")


@add_widget.on("aws")
def _widget(comp: Composition, name: str, spec: dict[str, Any]) -> None:
    if spec.get("cidr") == "bad":
        raise SpecError("cidr", "not a CIDR range")
    comp.emit(name, thing())


@pytest.mark.parametrize(
    ("cloud", "spec", "field", "says"),
    [
        case(
            "an invalid CIDR is an error on the user's field",
            "aws",
            {"cidr": "bad"},
            "spec.network.cidr",
            "not a CIDR range",
        ),
        case(
            (
                "a cloud without the capability is an error on spec.provider "
                "listing the clouds that have it"
            ),
            "gcp",
            {},
            "spec.provider",
            "gcp cannot provide test_widget; supported clouds: aws",
        ),
    ],
    ids=["spec-error-mapped", "cloud-lacks-capability"],
)
def test_capability_errors_name_the_users_field(
    cloud: str, spec: dict, field: str, says: str
) -> None:
    comp = composition()
    comp.place(cloud, cloud_field="spec.provider", region="eu-west-1")
    with pytest.raises(InputError) as err:
        add_widget(comp, "widget", spec, fields={"cidr": "spec.network.cidr"})
    assert (err.value.field, err.value.reason) == (field, says)
    assert add_widget.provided_on("aws")
    assert add_widget.provided_on(cloud) == (cloud == "aws")
    assert add_widget.clouds() == ["aws"]


@pytest.mark.parametrize(
    ("declare", "message"),
    [
        case(
            (
                "a cloud no composite is placed on: the typo fails at import, not"
                " at a user's request"
            ),
            lambda: add_widget.on("aws-eu"),
            "test_widget: unknown cloud 'aws-eu'; one of aws, azure, gcp",
        ),
        case(
            "a second builder for one cloud would silently replace the first",
            lambda: add_widget.on("aws"),
            "aws already provides test_widget",
        ),
        case(
            ("a capability without its home has no file every cloud implements it in"),
            lambda: Capability[dict[str, Any]]("homeless"),
            "homeless: say its home, the file clouds/<cloud>/<home>.py",
        ),
    ],
    ids=["unknown-cloud", "twice", "no-home"],
)
def test_a_registration_is_checked_when_it_is_made(declare: Any, message: str) -> None:
    with pytest.raises(ValueError) as err:
        declare()(_widget)
    assert str(err.value) == message


def test_a_call_attaches_uses_to_the_main_resource() -> None:
    comp = composition()
    comp.place("aws", cloud_field="spec.cloud", region="eu-west-1")
    add_widget(comp, "widget", {}, uses=["network"])
    assert comp.desired["widget"].uses == ("network",)


# -- needs -------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("observed", "remembered", "expected", "held"),
    [
        case("nothing observed: held", None, None, None, True),
        case(
            "observed with an empty value: still held",
            {"status": {"atProvider": {"endpoint": ""}}},
            None,
            None,
            True,
        ),
        case(
            "the value observed: read, not held",
            {"status": {"atProvider": {"endpoint": "db:5432"}}},
            None,
            "db:5432",
            False,
        ),
        case(
            ("not observed but remembered from before: the remembered value, not held"),
            None,
            "old:5432",
            "old:5432",
            False,
        ),
    ],
    ids=["unobserved", "empty", "observed", "remembered"],
)
def test_needs(
    observed: dict | None, remembered: str | None, expected: str | None, held: bool
) -> None:
    xr = {**XR, "status": {"databaseHost": remembered}} if remembered else XR
    body = {**thing("demo-db"), **(observed or {})}
    comp = composition(observed={"db": body} if observed else None, composite=xr)
    value = comp.needs("db", "status.atProvider.endpoint", by="app", remember="databaseHost")
    assert value == expected
    assert ("app" in comp.notes.held) is held
    if held:
        assert comp.notes.held["app"] == Hold((Wait("db", "status.atProvider.endpoint"),))
        assert str(comp.notes.held["app"]) == "db status.atProvider.endpoint"
    else:
        assert comp.notes.status["databaseHost"] == expected


@pytest.mark.parametrize(
    ("details", "held"),
    [
        case("no connection details yet: held", {}, True),
        case("connection details published: not held", {"password": b"s3cret"}, False),
    ],
)
def test_needs_connection(details: dict[str, bytes], held: bool) -> None:
    comp = composition(observed={"db": thing("demo-db")}, connection={"db": details})
    got = comp.needs_connection("db", by="app")
    assert (got is None) is held
    assert ("app" in comp.notes.held) is held


# -- requirements ------------------------------------------------------------------------------


def test_claim_requirement_selects_by_claim_labels_and_namespaced_selectors_carry_one() -> None:
    selector = claim_requirement("pool", "p.io/v1", "XPool", "hv-a", "infra").selector()
    assert dict(selector.match_labels.labels) == {
        "crossplane.io/claim-name": "hv-a",
        "crossplane.io/claim-namespace": "infra",
    }
    from fnplatform.request.requirements import Requirement

    namespaced = Requirement("c", "p.io/v1", "Pool", match_name="a", namespace="infra")
    assert namespaced.selector().namespace == "infra"


# -- not yet -----------------------------------------------------------------------------------


def _not_yet_after(emit: tuple[str, ...]) -> Any:
    def composer(comp: Composition) -> None:
        for name in emit:
            comp.emit(name, thing())
        comp.set_status("phase", "Pending")
        comp.not_yet("PoolsNotReady", "pool hv-a is not ready")

    return composer


@pytest.mark.parametrize(
    ("observed", "emitted", "fatal"),
    [
        case("nothing observed, nothing emitted: no fatal", (), (), False),
        case("observed and emitted: no fatal", ("a",), ("a",), False),
        case("observed but not emitted (would be deleted): fatal", ("a",), (), True),
    ],
    ids=["nothing-exists", "existing-kept", "would-drop-existing"],
)
def test_not_yet(observed: tuple[str, ...], emitted: tuple[str, ...], fatal: bool) -> None:
    xr = {**XR, "status": {"endpoint": "https://kept"}}
    req = request(xr, step_input("cluster"), observed={n: thing(f"demo-{n}") for n in observed})
    step = Input.model_validate(step_input("cluster"))
    if fatal:
        with pytest.raises(InputError, match="would remove a"):
            compose(Call.of(req, step, _not_yet_after(emitted)))
        return
    rsp = compose(Call.of(req, step, _not_yet_after(emitted))).response
    assert sorted(rsp.desired.resources) == sorted(emitted)
    status = struct_to_dict(rsp.desired.composite.resource)["status"]
    assert status == {"endpoint": "https://kept", "phase": "Pending"}
    composed = [c for c in rsp.conditions if c.type == "Composed"]
    assert len(composed) == 1
    assert composed[0].status == fnv1.STATUS_CONDITION_FALSE
    assert composed[0].reason == "PoolsNotReady"
    assert not [r for r in rsp.results if r.severity == fnv1.SEVERITY_FATAL]
    assert rsp.desired.composite.ready == fnv1.READY_FALSE


def test_not_yet_defaults_to_the_composed_condition() -> None:
    assert NotYet("R", "m").condition == "Composed"


# -- Objects and the stateful guard ------------------------------------------------------------


def test_object_takes_the_wrapped_kinds_readiness_and_statefulness() -> None:
    manifest = {"apiVersion": "test.wrapped.io/v1", "kind": "Pool", "metadata": {"name": "p"}}
    body = add_object(composition(), "pool", manifest)
    assert body["spec"]["readiness"] == {"policy": "DeriveFromCelQuery", "celQuery": "object.ok"}
    assert body["spec"]["watch"] is True  # its readiness reads the live object
    comp = composition(observed={"pool": body})
    assert dropped_stateful(comp) == ["pool"]


@pytest.mark.parametrize(
    ("options", "spec_fields"),
    [
        case("no options: a plain Object spec", {}, {}),
        case(
            ("readiness read from the live object: watched by default (watches_by_default)"),
            {"readiness": ObjectReadiness.AVAILABLE},
            {"readiness": ObjectReadiness.AVAILABLE, "watch": True},
        ),
        case(
            "derived readiness is watched by default too",
            {"readiness": ObjectReadiness.DERIVED},
            {"readiness": ObjectReadiness.DERIVED, "watch": True},
        ),
        case(
            "watching can be turned off",
            {"readiness": ObjectReadiness.AVAILABLE, "watch": False},
            {"readiness": ObjectReadiness.AVAILABLE},
        ),
        case(
            "readiness on successful create needs no watch",
            {"readiness": ObjectReadiness.SUCCESSFUL_CREATE},
            {"readiness": ObjectReadiness.SUCCESSFUL_CREATE},
        ),
        case(
            "orphaning sets the Object's deletion policy",
            {"watch": True, "orphan": True},
            {"watch": True, "deletionPolicy": "Orphan"},
        ),
    ],
    ids=[
        "plain",
        "deployment-available",
        "derived",
        "available-unwatched",
        "successful-create",
        "watched-orphaned",
    ],
)
def test_object_options(options: dict[str, Any], spec_fields: dict[str, Any]) -> None:
    manifest = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}}
    body = add_object(
        composition(env={"providerConfigs": {"kubernetes": "apps"}}), "cm", manifest, **options
    )
    extra = {k: v for k, v in body["spec"].items() if k not in ("forProvider", "providerConfigRef")}
    assert extra == spec_fields
    assert body["spec"]["providerConfigRef"] == {"name": "apps"}


def test_object_app_labels_sit_under_the_manifests_own() -> None:
    manifest = {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": "c", "labels": {"app.kubernetes.io/component": "mine"}},
    }
    body = add_object(composition(), "cm", manifest, component="web", resource_name="custom")
    labels = body["spec"]["forProvider"]["manifest"]["metadata"]["labels"]
    assert labels == {
        "app.kubernetes.io/managed-by": "crossplane",
        "app.kubernetes.io/part-of": "demo",
        "app.kubernetes.io/component": "mine",
    }
    assert body["metadata"]["name"] == "custom"


def test_provider_config_rule_composer_then_environment_then_default() -> None:
    comp = composition(env={"providerConfigs": {"aws": "env-aws", "kubernetes": "env-k8s"}})
    comp.use_provider_configs(aws="module-aws")
    assert comp.provider_config(BUCKETISH.__class__("x.aws.upbound.io/v1", "X")) == "module-aws"
    assert (
        comp.provider_config(BUCKETISH.__class__("kubernetes.crossplane.io/v1alpha2", "Object"))
        == "env-k8s"
    )
    assert comp.provider_config(BUCKETISH.__class__("x.gcp.upbound.io/v1", "X")) == "default"


# -- import: what manage mode takes over ----------------------------------------------------


def _adopted(manage: list[str]) -> dict[str, Any]:
    from fnplatform.importing import ImportSpec, apply_import

    spec = ImportSpec.model_validate(
        {
            "enabled": True,
            "mode": "manage",
            "resources": {"thing": {"externalName": "legacy", "manage": manage}},
        }
    )
    body = {
        "metadata": {},
        "spec": {
            "forProvider": {
                "region": "eu-west-1",
                "clusterNameRef": {"name": "c"},
                "size": 3,
                "network": {"range": "10.0.0.0/16", "ipv6": False},
            },
            "initProvider": {"network": {"serviceRange": "10.96.0.0/16"}, "seed": 1},
        },
    }
    apply_import(spec, "thing", body, True, "spec.parameters.import")
    return body


@pytest.mark.parametrize(
    ("manage", "for_provider", "init_provider"),
    [
        case(
            ("nothing managed: identity fields in forProvider, the rest in initProvider"),
            [],
            {"region": "eu-west-1", "clusterNameRef": {"name": "c"}},
            {
                "size": 3,
                "seed": 1,
                "network": {"range": "10.0.0.0/16", "ipv6": False, "serviceRange": "10.96.0.0/16"},
            },
        ),
        case(
            ("named paths stay managed in forProvider, their siblings move to initProvider"),
            ["size", "network.ipv6", "region"],
            {
                "region": "eu-west-1",
                "clusterNameRef": {"name": "c"},
                "size": 3,
                "network": {"ipv6": False},
            },
            {"seed": 1, "network": {"range": "10.0.0.0/16", "serviceRange": "10.96.0.0/16"}},
        ),
        case(
            "a managed map takes its nested paths with it",
            ["network", "network.range"],
            {
                "region": "eu-west-1",
                "clusterNameRef": {"name": "c"},
                "network": {"range": "10.0.0.0/16", "ipv6": False},
            },
            {"size": 3, "seed": 1, "network": {"serviceRange": "10.96.0.0/16"}},
        ),
    ],
)
def test_manage_mode_keeps_identity_and_named_paths_and_moves_the_rest_to_init(
    manage, for_provider, init_provider
):
    body = _adopted(manage)
    assert body["spec"]["forProvider"] == for_provider
    assert body["spec"]["initProvider"] == init_provider
    assert body["spec"]["managementPolicies"] == ["*"]
    assert body["spec"]["deletionPolicy"] == "Orphan"
    assert body["metadata"]["annotations"]["crossplane.io/external-name"] == "legacy"


@pytest.mark.parametrize(
    ("path", "says"),
    [
        case(
            "a path through a scalar is refused: take the field over whole",
            "size.count",
            "'size' is not a map (paths go through maps only): take it over whole",
        ),
        case(
            "a misspelt path suggests the composed one",
            "network.rnage",
            "did you mean network.range?",
        ),
        case(
            "an unknown path lists what is composed",
            "zzz",
            "composed here: clusterNameRef, network, region, size",
        ),
    ],
)
def test_manage_mode_refuses_a_path_not_composed_naming_the_entry(path, says):
    with pytest.raises(InputError) as refused:
        _adopted(["size", path])
    assert refused.value.field == "spec.parameters.import.resources.thing.manage[1]"
    assert says in refused.value.reason


@pytest.mark.parametrize(
    ("hold", "resources", "shown"),
    [
        case(
            "a field wait names the resource and the field",
            Hold((Wait("db", "status.atProvider.endpoint"),)),
            {"db"},
            "db status.atProvider.endpoint",
        ),
        case(
            "several waits, each named in order",
            Hold((Wait("key", "Ready"), Wait("grant", "Ready"))),
            {"key", "grant"},
            "key Ready, grant Ready",
        ),
        case(
            ('Outside the composite: waits for no composed resource (a parsed note read "a").'),
            Hold((Wait(None, "a node group"),)),
            set(),
            "a node group",
        ),
        case(
            "existence waits name only the resources",
            Hold((Wait("network"), Wait("subnet"))),
            {"network", "subnet"},
            "network, subnet",
        ),
    ],
    ids=["observed-field", "two-ready", "outside-the-composite", "uses-only"],
)
def test_a_hold_knows_what_it_waits_for(hold: Hold, resources: set[str], shown: str) -> None:
    assert hold.resources == resources
    assert str(hold) == shown


def test_pending_parts_are_the_unready_composed_or_held_ones() -> None:
    ready = {
        "db": {**thing("demo-db"), "status": {"conditions": [{"type": "Ready", "status": "True"}]}}
    }
    comp = composition(observed=ready)
    comp.emit("db", thing())
    comp.emit("bucket", thing())
    comp.hold("app", Wait("db", "Ready"))
    parts = {
        "database": ["db"],
        "assets": ["bucket"],
        "backend": ["app"],
        "cdn": ["cdn"],
    }  # cdn: neither composed nor held (a cloud gap), not waited for
    assert comp.pending(parts) == ["assets", "backend"]


def test_a_pattern_has_one_description() -> None:
    """Two descriptions of one pattern would silently change every field's message."""
    from fnplatform.api.validation import describe_pattern

    pattern = r"^test-[0-9]+$"
    assert describe_pattern(pattern, "test- then digits") == pattern
    assert describe_pattern(pattern, "test- then digits") == pattern  # the same words: fine
    with pytest.raises(ValueError, match="already described"):
        describe_pattern(pattern, "something else")


@pytest.mark.parametrize(
    "path",
    [
        "spec.forProvider.nodeConfig.spot",
        "spec.forProvider.missing",
        "status.atProvider.ids[1]",
        "spec.forProvider.subnetIdRefs",
        "spec.forProvider.subnetIdRefs.0.name",
        "metadata.name",
        "status.atProvider.empty",
        "spec.forProvider[nodeConfig].spot",
        "metadata['name']",
        "spec.forProvider.subnetIdRefs[1].name",
    ],
)
def test_an_observed_field_reads_as_the_converted_body_does(path: str) -> None:
    """``observed.field`` (what ``observed_value`` reads) gives what get_path gives on the
    converted body, and reads a path of field names (Crossplane's syntax, brackets included)
    without converting it."""
    from fnplatform import fieldpath
    from fnplatform.observation.resources import ObservedResources
    from fnplatform.request.structs import dict_to_struct

    body = {
        "metadata": {"name": "pool"},
        "spec": {
            "forProvider": {
                "nodeConfig": {"spot": False},
                "subnetIdRefs": [{"name": "a"}, {"name": "b"}],
            }
        },
        "status": {"atProvider": {"ids": ["x", "y"], "empty": None}},
    }
    request = fnv1.RunFunctionRequest()
    request.observed.resources["pool"].resource.CopyFrom(dict_to_struct(body))
    observed = ObservedResources(request.observed.resources)
    assert observed.field("pool", path, "unset") == get_path(body, path, "unset")
    if all(isinstance(segment, str) for segment in fieldpath.parse(path)):
        assert observed._bodies == {}  # read from the protobuf, nothing converted
    assert observed.field("absent", path, "unset") == "unset"
