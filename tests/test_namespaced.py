"""The namespaced form (Crossplane v2 namespaced XRs), for every module and as library rules.

Parametrized over every module case (``tests/support/cases.py``): the case as written and its
namespaced twin are converged side by side, and the twin must compose the namespaced twin of
every resource the cluster-scoped form composes (or name it in the ``NamespacedForm``
condition), in the composite's namespace, valid against the ``.m.`` CRDs. Then table-driven
rules of the switch itself: reading the composite both ways, ``providerConfigRef.kind``,
deletion policy, Secret references, Usages, kinds without a namespaced twin.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml
from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from fnplatform.api.step_input import Input
from fnplatform.composition import Composition
from fnplatform.engine.runner import finish
from fnplatform.errors import InputError
from fnplatform.kinds import namespaced_twin, register
from fnplatform.library import add_object
from fnplatform.library.kubernetes import add_cluster_provider_configs
from fnplatform.namespaced_kinds import NAMESPACED, NO_TWIN, TWINS
from fnplatform.rules.dependencies import add_usages

from tests.support.cases import (
    ModuleCase,
    baseline_unavailable,
    converge,
    module_cases,
)
from tests.support.cases import (
    namespaced_twin as twin_case,
)
from tests.support.harness import Rendered, request, step_input
from tests.support.namespaced import NAMESPACED_ONLY, namespaced_composite
from tests.support.schemas import Catalog
from tests.support.table import case

CASES = module_cases()
IDS = [case.id for case in CASES]
NAMESPACED_FORM = "NamespacedForm"


@pytest.fixture(scope="module")
def converged(client) -> dict[str, tuple[Rendered, dict[str, dict[str, Any]]]]:
    """Every case and its namespaced twin, composed until all their resources exist."""
    found = {}
    for module_case in CASES:
        for form in (module_case, twin_case(module_case)):
            found[form.id] = converge(client.run, form)
    return found


def _unexpressed(rendered: Rendered) -> str:
    condition = rendered.condition(NAMESPACED_FORM)
    return condition.message if condition is not None else ""


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_twin_composes_the_twin_of_every_resource(converged, case: ModuleCase) -> None:
    cluster, _ = converged[case.id]
    twin, _ = converged[twin_case(case).id]
    if reason := baseline_unavailable(cluster):
        pytest.fail(reason)
    assert not cluster.fatal and not twin.fatal, (cluster.fatal, twin.fatal)
    # Usages of fetched composites are named after them, and the namespaced form fetches
    # the namespaced twins (named like their claims): Usages are compared by count.
    usages = {n for n, b in cluster.resources.items() if b["kind"] == "ClusterUsage"}
    twin_usages = {n for n, b in twin.resources.items() if b["kind"] == "Usage"}
    missing = sorted(set(cluster.resources) - set(twin.resources) - usages)
    unexplained = [name for name in missing if f"{name}:" not in _unexpressed(twin)]
    assert not unexplained, f"dropped without a NamespacedForm condition: {unexplained}"
    named_usages = [n for n in usages - twin_usages if f"{n}:" in _unexpressed(twin)]
    assert len(twin_usages) + len(named_usages) >= len(usages)
    assert set(twin.resources) - twin_usages - NAMESPACED_ONLY <= set(cluster.resources)
    for name, body in twin.resources.items():
        if name not in cluster.resources and (name in twin_usages or name in NAMESPACED_ONLY):
            continue
        original = cluster.resources[name]
        key = (original["apiVersion"], original["kind"])
        expected = TWINS.get(key, key)
        assert (body["apiVersion"], body["kind"]) == expected, name


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_twin_bodies_are_namespaced_and_valid(
    converged, catalog: Catalog, case: ModuleCase
) -> None:
    twin = twin_case(case)
    rendered, _ = converged[twin.id]
    namespace = twin.composite["metadata"]["namespace"]
    assert rendered.resources
    for name, body in rendered.resources.items():
        assert (body["apiVersion"], body["kind"]) in NAMESPACED, f"{name} is cluster-scoped"
        assert body["metadata"]["namespace"] == namespace, name
        spec = body.get("spec") or {}
        assert "deletionPolicy" not in spec, name
        if "providerConfigRef" in spec:
            assert spec["providerConfigRef"]["kind"] in ("ProviderConfig", "ClusterProviderConfig")
        assert "namespace" not in (spec.get("writeConnectionSecretToRef") or {}), name
        assert catalog.validate(body) == [], (name, catalog.validate(body))


def _claim_tags(node: Any) -> list[str]:
    """Every ``crossplane-claim`` tag value inside ``node``."""
    if isinstance(node, dict):
        own = [str(node["crossplane-claim"])] if "crossplane-claim" in node else []
        return own + [t for v in node.values() for t in _claim_tags(v)]
    if isinstance(node, list):
        return [t for v in node for t in _claim_tags(v)]
    return []


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_twin_tags_name_the_namespaced_composite(converged, case: ModuleCase) -> None:
    twin = twin_case(case)
    metadata = twin.composite["metadata"]
    claim = f"{metadata['namespace']}.{metadata['name']}"
    cluster_tags = _claim_tags(converged[case.id][0].resources)
    twin_tags = _claim_tags(converged[twin.id][0].resources)
    assert len(twin_tags) == len(cluster_tags)  # tagged as much in both forms
    assert set(twin_tags) <= {claim, claim.replace(".", "_")}  # GCP labels: "." -> "_"


# -- reading the composite both ways ----------------------------------------------------------

V1 = {
    "apiVersion": "x.io/v1",
    "kind": "XThing",
    "metadata": {
        "name": "demo-x7k2p",
        "labels": {"crossplane.io/claim-name": "demo", "crossplane.io/claim-namespace": "team-a"},
    },
    "spec": {"compositionRef": {"name": "x"}, "claimRef": {"name": "demo"}},
}


def composition(composite: dict[str, Any], env: dict[str, Any] | None = None) -> Composition:
    req = request(composite, step_input("cluster"))
    return Composition(req, Input.model_validate(step_input("cluster")), env or {})


@pytest.mark.parametrize(
    ("composite", "namespaced", "namespace", "claim", "claim_tag"),
    [
        case(
            "a v1 composite made through a claim: cluster-scoped, its namespace and name "
            "are the claim's, tagged namespace.name",
            V1,
            False,
            "team-a",
            "demo",
            "team-a.demo",
        ),
        case(
            "the same composite in the v2 namespaced form: namespaced, with the same "
            "claim name and tag, so both forms tag resources alike",
            namespaced_composite(V1),
            True,
            "team-a",
            "demo",
            "team-a.demo",
        ),
        case(
            "a namespaced composite in another namespace: the namespace and tag follow "
            "the composite's own namespace",
            namespaced_composite(V1, "other"),
            True,
            "other",
            "demo",
            "other.demo",
        ),
        case(
            "a cluster-scoped composite without a claim: no namespace, no claim, no claim tag",
            {"metadata": {"name": "bare"}, "spec": {}},
            False,
            None,
            None,
            None,
        ),
    ],
    ids=["v1-claim", "v2-namespaced", "v2-other-namespace", "v1-without-claim"],
)
def test_reading_the_composite(
    composite: dict[str, Any],
    namespaced: bool,
    namespace: str | None,
    claim: str | None,
    claim_tag: str | None,
) -> None:
    comp = composition(composite)
    assert (comp.namespaced, comp.namespace, comp.claim_name) == (namespaced, namespace, claim)
    assert comp.tags().get("crossplane-claim") == claim_tag


def test_spec_crossplane_is_crossplanes_not_the_users() -> None:
    from fnplatform.api.xrspec import user_spec

    spec = namespaced_composite({"spec": {"actor": "a", "compositionRef": {"name": "x"}}})["spec"]
    assert spec["crossplane"]["compositionRef"] == {"name": "x"}
    assert user_spec(spec) == {"actor": "a"}


# -- the switch ---------------------------------------------------------------------------------

THING = register("ec2.aws.upbound.io/v1beta2", "Route")
OBJECT_KEY = ("kubernetes.m.crossplane.io/v1alpha1", "Object")


def namespaced(env: dict[str, Any] | None = None) -> Composition:
    return composition(namespaced_composite(V1), env)


@pytest.mark.parametrize(
    ("env", "kind"),
    [
        case(
            "without providerConfigKind, managed resources of a namespaced composite "
            "reference a ClusterProviderConfig, the default for shared cloud credentials",
            {},
            "ClusterProviderConfig",
        ),
        case(
            "providerConfigKind ProviderConfig makes every reference a namespaced ProviderConfig",
            {"providerConfigKind": "ProviderConfig"},
            "ProviderConfig",
        ),
        case(
            "a per-provider map applies to the provider it names (aws here)",
            {"providerConfigKind": {"aws": "ProviderConfig"}},
            "ProviderConfig",
        ),
        case(
            "a map naming another provider leaves this provider at the "
            "ClusterProviderConfig default",
            {"providerConfigKind": {"gcp": "ProviderConfig"}},
            "ClusterProviderConfig",
        ),
    ],
)
def test_provider_config_ref_has_a_kind(env: dict[str, Any], kind: str) -> None:
    comp = namespaced({**env, "providerConfigs": {"aws": "team-a-aws"}})
    body = comp.emit("route", THING.new({"routeTableId": "rtb-1"}))
    assert body["apiVersion"] == "ec2.aws.m.upbound.io/v1beta1"  # v1beta2 -> the .m. v1beta1
    assert body["metadata"]["namespace"] == "team-a"
    assert body["spec"]["providerConfigRef"] == {"kind": kind, "name": "team-a-aws"}


@pytest.mark.parametrize(
    "bad",
    [
        case(
            "a kind that is neither ProviderConfig nor ClusterProviderConfig is refused "
            "naming environment.providerConfigKind",
            "Cluster",
        ),
        case("a value of the wrong type is refused naming the field, not a crash", 3),
        case(
            "a per-provider map with an unknown kind is refused naming the field under "
            "the provider",
            {"aws": "providerconfig"},
        ),
    ],
)
def test_an_unknown_provider_config_kind_names_its_field(bad: Any) -> None:
    with pytest.raises(InputError) as err:
        namespaced({"providerConfigKind": bad}).emit("route", THING.new({}))
    assert err.value.field.startswith("environment.providerConfigKind")


def test_a_composed_provider_config_is_referenced_as_a_namespaced_one() -> None:
    comp = namespaced()
    cluster = comp.emit(
        "cluster",
        register("eks.aws.upbound.io/v1beta1", "ClusterAuth").new(
            {"clusterName": "c"},
            writeConnectionSecretToRef={"name": "kubeconfig", "namespace": "crossplane-system"},
        ),
    )
    helm, kube = add_cluster_provider_configs(
        comp, "providers", secret_name="kubeconfig", secret_namespace="crossplane-system"
    )
    obj = add_object(
        comp,
        "thing",
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}},
        provider_config=kube,
    )
    finish(comp)
    assert cluster["spec"]["writeConnectionSecretToRef"] == {"name": "kubeconfig"}
    for name in ("providers-helm", "providers-kubernetes"):
        secret_ref = comp.desired[name].body["spec"]["credentials"]["secretRef"]
        assert secret_ref["namespace"] == "team-a"  # the connection Secret now lives there
        assert name in comp.notes.unexpressed  # usable from one namespace only: said
    assert obj["spec"]["providerConfigRef"] == {"kind": "ProviderConfig", "name": kube}
    assert (obj["apiVersion"], obj["kind"]) == OBJECT_KEY
    assert helm.endswith("providers-helm")


def test_a_secret_in_another_namespace_is_named() -> None:
    comp = namespaced()
    add_cluster_provider_configs(
        comp, "providers", secret_name="admin", secret_namespace="crossplane-system"
    )
    finish(comp)
    ref = comp.desired["providers-helm"].body["spec"]["credentials"]["secretRef"]
    assert ref["namespace"] == "crossplane-system"  # kept: the schema still takes one
    assert (
        "crossplane-system/admin"
        in comp.notes.unexpressed["providers-helm spec.credentials.secretRef"]
    )


def test_secret_refs_the_namespaced_schema_lacks_are_dropped_and_named() -> None:
    release = register("helm.crossplane.io/v1beta1", "Release")
    comp = namespaced()
    body = comp.emit(
        "release",
        release.new(
            {
                "chart": {"name": "c", "pullSecretRef": {"name": "pull", "namespace": "team-a"}},
                "valuesFrom": [
                    {"secretKeyRef": {"name": "v", "key": "k", "namespace": "elsewhere"}}
                ],
            }
        ),
    )
    finish(comp)
    assert body["spec"]["forProvider"]["chart"]["pullSecretRef"] == {"name": "pull"}
    assert body["spec"]["forProvider"]["valuesFrom"][0]["secretKeyRef"] == {"name": "v", "key": "k"}
    assert list(comp.notes.unexpressed) == ["release spec.forProvider.valuesFrom[].secretKeyRef"]


@pytest.mark.parametrize(
    ("policies", "expected"),
    [
        case(
            "an orphaning resource without management policies gets every policy but "
            "Delete: the namespaced (.m.) APIs have no deletionPolicy, so Orphan is said "
            "through managementPolicies",
            None,
            ["Observe", "Create", "Update", "LateInitialize"],
        ),
        case(
            "an observe-only resource stays observe-only: nothing to remove",
            ["Observe"],
            ["Observe"],
        ),
        case(
            "the all-policies wildcard becomes every policy but Delete, so deletion still orphans",
            ["*"],
            ["Observe", "Create", "Update", "LateInitialize"],
        ),
    ],
)
def test_orphaning_becomes_management_policies(
    policies: list[str] | None, expected: list[str]
) -> None:
    comp = namespaced()
    spec: dict[str, Any] = {"deletionPolicy": "Orphan"}
    if policies is not None:
        spec["managementPolicies"] = policies
    body = comp.emit("route", THING.new({}, **spec))
    assert "deletionPolicy" not in body["spec"]
    assert body["spec"]["managementPolicies"] == expected


def test_an_orphaned_object_keeps_its_object_when_deleted() -> None:
    comp = namespaced()
    body = add_object(
        comp,
        "ns",
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "x"}},
        orphan=True,
    )
    assert body["spec"]["managementPolicies"] == ["Observe", "Create", "Update", "LateInitialize"]


def test_usages_become_namespaced_usages() -> None:
    comp = namespaced()
    comp.emit("used", THING.new({}))
    comp.emit("user", THING.new({}), uses=["used"])
    add_usages(comp)
    usage = comp.desired["usage-used-by-user"].body
    assert (usage["apiVersion"], usage["kind"]) == ("protection.crossplane.io/v1beta1", "Usage")
    assert usage["metadata"]["namespace"] == "team-a"
    assert usage["spec"]["of"]["apiVersion"] == "ec2.aws.m.upbound.io/v1beta1"


@pytest.mark.parametrize(
    ("fetched_namespace", "by", "outcome"),
    [
        case(
            "a fetched resource in the composite's own namespace: a plain Usage protects it",
            "team-a",
            None,
            "same",
        ),
        case(
            "a resource in another namespace used by a named resource: a Usage with the "
            "namespace of what it protects",
            "pools",
            "user",
            "cross",
        ),
        case(
            "a resource in another namespace with no user named: no Usage can say it, so "
            "it is named as unexpressed instead of dropped silently",
            "pools",
            None,
            "named",
        ),
        case(
            "a cluster-scoped fetched resource cannot be the target of a namespaced "
            "Usage: named as unexpressed",
            None,
            "user",
            "named",
        ),
    ],
)
def test_protecting_a_fetched_resource_from_a_namespaced_composite(
    fetched_namespace: str | None, by: str | None, outcome: str
) -> None:
    comp = namespaced()
    comp.emit("user", THING.new({}))
    fetched: dict[str, Any] = {
        "apiVersion": "x.io/v1",
        "kind": "XPool",
        "metadata": {"name": "pool"},
    }
    if fetched_namespace:
        fetched["metadata"]["namespace"] = fetched_namespace
    comp.protect(fetched, by=by, reason="in use")
    add_usages(comp)
    usages = [e.body for n, e in comp.desired.items() if n.startswith("usage-")]
    if outcome == "named":
        assert not usages
        assert any("XPool pool" in why for why in comp.notes.unexpressed.values())
        return
    (usage,) = usages
    ref = usage["spec"]["of"]["resourceRef"]
    assert ref.get("namespace") == (fetched_namespace if outcome == "cross" else None)


def test_a_kind_without_a_namespaced_twin_is_named_not_dropped_silently() -> None:
    legacy = register("ec2.aws.upbound.io/v1beta1", "Route")  # .m. Route takes the v1beta2 body
    comp = namespaced()
    comp.emit("old-route", legacy.new({}))
    comp.emit("new-route", THING.new({}), uses=["old-route"])
    finish(comp)
    assert "old-route" not in comp.desired
    assert "takes a different body" in comp.notes.unexpressed["old-route"]
    conditions = {c.type: c for c in comp.notes.conditions}
    assert conditions[NAMESPACED_FORM].status == fnv1.STATUS_CONDITION_FALSE
    assert "old-route" in conditions[NAMESPACED_FORM].message
    assert "new-route" in comp.notes.held  # its dependent waits, and says for what


def test_the_cluster_scoped_form_is_untouched() -> None:
    comp = composition(V1)
    body = comp.emit("route", THING.new({}, deletionPolicy="Orphan"))
    finish(comp)
    assert body["apiVersion"] == "ec2.aws.upbound.io/v1beta2"
    assert "namespace" not in body["metadata"]
    assert body["spec"]["providerConfigRef"] == {"name": "default"}
    assert body["spec"]["deletionPolicy"] == "Orphan"
    assert not comp.notes.unexpressed


def test_every_twin_in_the_table_is_a_served_namespaced_kind(catalog: Catalog) -> None:
    """The derived table and the derived CRDs agree: each twin is served and namespaced."""
    problems = []
    for key, twin in sorted(TWINS.items()):
        entry = catalog.lookup(*twin)
        if entry is None or not entry.served or twin not in NAMESPACED or key in NO_TWIN:
            problems.append((key, twin))
    assert not problems
    assert len(TWINS) > 150  # every upjet, kubernetes and helm kind collected, both versions


def test_registered_kinds_all_have_a_namespaced_twin() -> None:
    import fnplatform.clouds
    import fnplatform.library.kubernetes  # noqa: F401
    from fnplatform.kinds import _KINDS

    lacking = {
        key: twin
        for key, kind in _KINDS.items()
        if key[0].split("/")[0].split(".")[0] != "test"
        and isinstance(twin := namespaced_twin(kind), str)
        and key != ("ec2.aws.upbound.io/v1beta1", "Route")  # registered above to prove NO_TWIN
    }
    assert not lacking


def test_a_claims_composite_is_required_by_name_in_the_namespaced_form() -> None:
    from fnplatform.request.requirements import Requirement, claim_requirement

    wanted = claim_requirement("pool", "x.io/v1", "XPool", "shared", "pools")
    env = Requirement(
        "env",
        "apiextensions.crossplane.io/v1beta1",
        "EnvironmentConfig",
        match_labels=(("a", "b"),),
    )
    v1, v2 = composition(V1), namespaced()
    for comp in (v1, v2):
        comp.require(wanted)
        comp.require(env)
    assert v1.requirements == [wanted, env]
    by_name, same = v2.requirements
    assert (by_name.match_name, by_name.namespace, by_name.match_labels) == (
        "shared",
        "pools",
        None,
    )
    assert same == env


ROOT = Path(__file__).resolve().parent.parent
NAMESPACED_EXAMPLES = sorted(ROOT.glob("examples/*/namespaced/*.yaml"))


@pytest.mark.parametrize(
    "path",
    NAMESPACED_EXAMPLES,
    ids=[str(p.relative_to(ROOT / "examples")) for p in NAMESPACED_EXAMPLES],
)
def test_namespaced_example_is_the_twin_of_its_v1_composite(path: Path) -> None:
    """What a team applies in the namespaced form is exactly what the render proof renders."""
    v1 = yaml.safe_load((path.parent.parent / path.name).read_text())
    twin = namespaced_composite(v1)
    twin["metadata"].pop("uid", None)  # the render's stand-in for the uid the API server gives
    assert yaml.safe_load(path.read_text()) == twin
