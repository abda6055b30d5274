"""``examples/install/15-activation-policy.yaml``: the ManagedResourceActivationPolicy (issue 30,
item 4).

A safe-start provider installs its ManagedResourceDefinitions Inactive; on Crossplane v2.4 a
kind the policy does not name has no CRD and no controller, so a composite composing it never
becomes Ready, and nothing before a live cluster would say so. These tests close that gap
offline: the file is what ``tools/make_activation_policy.py`` derives from the kinds registry,
it validates against Crossplane's MRAP CRD, and it activates every managed kind any golden
render composes, in both forms (the goldens are what the function really emits, so a kind
emitted without being declared managed is caught too).
"""

from __future__ import annotations

import functools
import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml

from tests.support.schemas import Catalog
from tests.support.tools import load_tool

ROOT = Path(__file__).resolve().parent.parent
POLICY = ROOT / "examples" / "install" / "15-activation-policy.yaml"
GOLDEN = ROOT / "tests" / "golden"
#: The rendered-document predicates the Configuration packages' policies use too: a composed
#: provider kind (not the composite, a function result or a Usage) that is a managed resource
#: (not a ProviderConfig).
make_configurations = load_tool("make_configurations")

try:
    _Loader: Any = yaml.CSafeLoader
except AttributeError:  # pragma: no cover
    _Loader = yaml.SafeLoader


def _policy() -> dict[str, Any]:
    policy: dict[str, Any] = yaml.safe_load(POLICY.read_text())
    return policy


def _activated() -> list[str]:
    return list(_policy()["spec"]["activate"])


def _group(api_version: str) -> str:
    group, _, version = api_version.rpartition("/")
    return group if version else ""


def _is_composed_managed(doc: dict[str, Any]) -> bool:
    """Whether a rendered document is a composed managed resource: one with a
    ``spec.forProvider``, or of a kind the registry declares managed; never the composite, a
    function result, a Usage or a ProviderConfig."""
    return make_configurations.is_provider_kind(doc) and make_configurations.is_managed(doc)


@functools.cache
def _golden_kinds() -> dict[tuple[str, str], str]:
    """``(apiVersion, kind)`` of every composed managed resource of every golden (both forms:
    ``tests/golden/<module>/`` and ``.../namespaced/``) -> the first golden composing it."""
    found: dict[tuple[str, str], str] = {}
    for path in sorted(GOLDEN.rglob("*.yaml")):
        for doc in yaml.load_all(path.read_text(), Loader=_Loader):
            if isinstance(doc, dict) and _is_composed_managed(doc):
                key = (str(doc["apiVersion"]), str(doc["kind"]))
                found.setdefault(key, str(path.relative_to(ROOT)))
    return found


def _unactivated(activated: set[str], catalog: Catalog) -> list[str]:
    """Every golden-composed kind whose MRD (``<plural>.<group>``, the plural read from its
    CRD) ``activated`` does not name, as ``apiVersion kind (mrd) in golden``."""
    problems = []
    for (api_version, kind), golden in sorted(_golden_kinds().items()):
        crd = catalog.lookup(api_version, kind)
        if crd is None:
            problems.append(f"{api_version} {kind}: no CRD in schemas/crds ({golden})")
            continue
        mrd = f"{crd.plural}.{crd.group}"
        if mrd not in activated:
            problems.append(f"{api_version} {kind} ({mrd}) in {golden}")
    return problems


def test_the_policy_is_what_the_generator_writes() -> None:
    # A fresh process: tests register kinds of their own in this one.
    result = subprocess.run(
        [sys.executable, str(ROOT / "tools" / "make_activation_policy.py"), "--check"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_the_policy_validates_against_crossplanes_crd(catalog: Catalog) -> None:
    policy = _policy()
    crd = catalog.lookup(policy["apiVersion"], policy["kind"])
    assert crd is not None and crd.source.startswith("crossplane/"), "no MRAP CRD in schemas/crds"
    assert crd.scope == "Cluster"
    assert catalog.validate(policy) == []


def test_the_policy_names_exact_mrds_sorted_in_both_forms(catalog: Catalog) -> None:
    names = _activated()
    assert names == sorted(set(names)), "sorted, each once"
    assert not [n for n in names if "*" in n], "exact names: a wildcard activates what we don't use"
    mrds = {f"{v.plural}.{v.group}": v.kind for v in catalog.entries.values()}
    assert [n for n in names if n not in mrds] == [], "not <plural>.<group> of a CRD"
    not_managed = [
        n
        for n in names
        if mrds[n].endswith("ProviderConfig")
        or n.split(".", 1)[1] in make_configurations.CROSSPLANE_GROUPS
    ]
    assert not_managed == [], "ProviderConfigs and Usages are no MRDs"
    # The namespaced APIs compose the twins: every cluster-scoped name has its `.m.` twin and
    # every twin its cluster-scoped kind.
    twins = {
        n.replace(".upbound.io", ".m.upbound.io").replace(".crossplane.io", ".m.crossplane.io")
        for n in names
        if ".m." not in n
    }
    assert twins == {n for n in names if ".m." in n}
    for required in (
        "objects.kubernetes.crossplane.io",
        "objects.kubernetes.m.crossplane.io",
        "releases.helm.crossplane.io",
        "releases.helm.m.crossplane.io",
    ):
        assert required in names


def test_the_policy_activates_every_kind_the_goldens_compose(catalog: Catalog) -> None:
    kinds = _golden_kinds()
    # The goldens are read as meant: both forms, every cloud, Objects and Releases.
    groups = {_group(api_version) for api_version, _ in kinds}
    assert {
        "ec2.aws.upbound.io",
        "ec2.aws.m.upbound.io",
        "compute.gcp.upbound.io",
        "network.azure.m.upbound.io",
        "kubernetes.crossplane.io",
        "helm.m.crossplane.io",
    } <= groups
    assert len(kinds) > 100
    assert _unactivated(set(_activated()), catalog) == []


def test_a_kind_missing_from_the_policy_is_named(catalog: Catalog) -> None:
    """The check above fails, naming the kind, when the policy lacks one a golden composes."""
    activated = set(_activated()) - {"vpcs.ec2.aws.upbound.io", "releases.helm.m.crossplane.io"}
    problems = _unactivated(activated, catalog)
    assert len(problems) == 2, problems
    assert problems[0].startswith("ec2.aws.upbound.io/v1beta1 VPC (vpcs.ec2.aws.upbound.io) in ")
    assert problems[1].startswith(
        "helm.m.crossplane.io/v1beta1 Release (releases.helm.m.crossplane.io) in tests/golden/"
    )
