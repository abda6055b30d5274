"""The Configuration packages of ``configurations/`` (issue 33, items 1 and 6).

Each module installs in one form from one package, which must depend on every provider whose
kinds the module composes (else Crossplane would install the module without them, or a user
following the dependencies would lack one) and activate every managed resource it composes (else
a safe-start provider's MRD stays Inactive and the composite never becomes Ready). What is
composed is read from the function itself: every module case of tests/support/cases.py is
converged in both forms, every pass's resources counted, and the goldens too.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.support.cases import cluster_import_case, converge_passes, in_both_forms, module_cases
from tests.support.harness import FunctionClient
from tests.support.schemas import Catalog
from tests.support.tools import load_tool
from tests.support.xpkg import xpkg_files

ROOT = Path(__file__).resolve().parent.parent
make_configurations = load_tool("make_configurations")
PACKAGES = make_configurations.packages()
CASES = in_both_forms(
    module_cases()
    + [
        cluster_import_case(cloud, mode)
        for cloud in ("aws", "gcp", "azure")
        for mode in ("observe", "manage")
    ]
)


def _shipped(package: Any, name: str) -> dict[str, Any]:
    doc: dict[str, Any] = yaml.safe_load((package.directory / name).read_text())
    return doc


def _depends_on(package: Any) -> dict[str, dict[str, str]]:
    """The shipped ``dependsOn`` by package name (the repository's last segment)."""
    deps = _shipped(package, "crossplane.yaml")["spec"]["dependsOn"]
    return {d["package"].rsplit("/", 1)[1]: d for d in deps}


def _activated(package: Any) -> set[str]:
    return set(_shipped(package, "activation-policy.yaml")["spec"]["activate"])


@pytest.fixture(scope="module")
def plurals(catalog: Catalog) -> dict[tuple[str, str], str]:
    """``(group, kind) -> plural`` of every CRD in schemas/crds."""
    return {(v.group, v.kind): v.plural for v in catalog.entries.values()}


def unmet(
    package: Any,
    composed: set[tuple[str, str]],
    depends: set[str],
    activated: set[str],
    plurals: dict[tuple[str, str], str],
) -> list[str]:
    """What ``package`` lacks for ``composed`` kinds: a provider it does not depend on, an MRD
    it does not activate, each named with the kind."""
    problems = []
    for api_version, kind in sorted(composed):
        doc = {"apiVersion": api_version, "kind": kind}
        group = make_configurations.group_of(api_version)
        provider = make_configurations.provider_of(group)
        if provider not in depends:
            problems.append(
                f"{package.name}: {api_version} {kind} is served by {provider}, "
                "which it does not depend on"
            )
        if make_configurations.is_managed(doc):
            mrd = f"{plurals.get((group, kind), '?')}.{group}"
            if mrd not in activated:
                problems.append(f"{package.name}: {api_version} {kind} ({mrd}) not activated")
    return problems


@pytest.fixture(scope="module")
def converged(client: FunctionClient) -> dict[tuple[str, bool], set[tuple[str, str]]]:
    """``(module, namespaced) -> (apiVersion, kind)`` of every provider kind any pass of any
    case of the module composes in that form."""
    found: dict[tuple[str, bool], set[tuple[str, str]]] = {}
    for case in CASES:
        kinds = found.setdefault((case.module, case.namespaced), set())
        for rendered in converge_passes(client.run, case):
            for body in rendered.resources.values():
                if make_configurations.is_provider_kind(body):
                    kinds.add((str(body["apiVersion"]), str(body["kind"])))
    return found


def test_the_packages_are_what_the_generator_writes() -> None:
    result = subprocess.run(
        [sys.executable, str(ROOT / "tools" / "make_configurations.py"), "--check"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr


def test_one_package_per_module_and_form() -> None:
    modules = sorted(p.name for p in (ROOT / "apis").iterdir() if p.is_dir())
    assert len(modules) == 5
    assert sorted(p.name for p in PACKAGES) == sorted(
        f"platform-{m}{suffix}" for m in modules for suffix in ("", "-namespaced")
    )
    for package in PACKAGES:
        files = package.api_files()
        xrds = [yaml.safe_load(p.read_text()) for p in files if p.name == "definition.yaml"]
        assert xrds, package.name
        # the v1 form's XRDs are apiextensions v1 with claims, the v2 form's namespaced
        for xrd in xrds:
            if package.namespaced:
                assert xrd["apiVersion"].endswith("/v2") and xrd["spec"]["scope"] == "Namespaced"
            else:
                assert xrd["apiVersion"].endswith("/v1") and "claimNames" in xrd["spec"]
        assert any(p.parent.name == "compositions" for p in files) == (
            (ROOT / "apis" / package.module / "compositions").is_dir()
        ), "the document-named Composition copies ship with their module"


@pytest.mark.parametrize("package", PACKAGES, ids=[p.name for p in PACKAGES])
def test_every_kind_the_module_composes_is_depended_on_and_activated(
    package: Any,
    converged: dict[tuple[str, bool], set[tuple[str, str]]],
    plurals: dict[tuple[str, str], str],
) -> None:
    composed = set(converged[(package.module, package.namespaced)])
    assert composed, f"no case composes {package.module}"
    for golden in package.goldens():
        composed |= {(av, k) for av, k, _ in make_configurations._golden_docs(golden)}
    assert unmet(package, composed, set(_depends_on(package)), _activated(package), plurals) == []


def test_a_provider_or_activation_missing_from_a_package_is_named(
    converged: dict[tuple[str, bool], set[tuple[str, str]]], plurals: dict[tuple[str, str], str]
) -> None:
    """The check above fails, naming the kind, when a package lacks what the module needs."""
    (package,) = [p for p in PACKAGES if p.name == "platform-async-actor"]
    composed = converged[("async-actor", False)]
    depends = set(_depends_on(package)) - {"provider-aws-sqs"}
    activated = _activated(package) - {"objects.kubernetes.crossplane.io"}
    problems = unmet(package, composed, depends, activated, plurals)
    assert (
        "platform-async-actor: sqs.aws.upbound.io/v1beta1 Queue is served by "
        "provider-aws-sqs, which it does not depend on"
    ) in problems
    assert (
        "platform-async-actor: kubernetes.crossplane.io/v1alpha2 Object "
        "(objects.kubernetes.crossplane.io) not activated"
    ) in problems


def test_together_the_packages_activate_what_the_install_policy_does() -> None:
    """Every managed kind the library declares is attributed to a module: the packages'
    policies together name exactly the MRDs examples/install/15-activation-policy.yaml names
    (derived from the kinds registry), so none is composed by no package's module."""
    install = yaml.safe_load((ROOT / "examples/install/15-activation-policy.yaml").read_text())[
        "spec"
    ]["activate"]
    together = set().union(*(_activated(p) for p in PACKAGES))
    assert sorted(together) == sorted(install)
    for package in PACKAGES:  # each form activates its own scope's kinds only
        names = _activated(package)
        assert all(".m." in n for n in names) == package.namespaced
        assert any(".m." in n for n in names) == package.namespaced


def test_dependencies_are_the_install_sets_releases() -> None:
    """The function as examples/install/40-function.yaml installs it, each provider as
    10-providers.yaml pins it (a family's own provider at its members' release): the pin is the
    floor of a caret range (that release or a later one of the same major)."""
    install = {}
    for doc in yaml.safe_load_all((ROOT / "examples/install/10-providers.yaml").read_text()):
        if doc and doc["kind"] == "Provider":
            repository, _, tag = doc["spec"]["package"].rpartition(":")
            install[repository] = tag
    (function,) = [
        d
        for d in yaml.safe_load_all((ROOT / "examples/install/40-function.yaml").read_text())
        if d and d["kind"] == "Function"
    ]
    fn_repository, _, fn_tag = function["spec"]["package"].rpartition(":")
    function_meta = yaml.safe_load((ROOT / "package/crossplane.yaml").read_text())
    crossplane = function_meta["spec"]["crossplane"]
    for package in PACKAGES:
        meta = _shipped(package, "crossplane.yaml")
        assert (meta["apiVersion"], meta["kind"]) == ("meta.pkg.crossplane.io/v1", "Configuration")
        assert meta["metadata"]["name"] == package.name
        assert meta["spec"]["crossplane"] == crossplane
        deps = meta["spec"]["dependsOn"]
        # Crossplane v2.4's form (apis/v2 pkg/meta/v1 meta.go Dependency): apiVersion, kind and
        # package (the repository, without tag: the lock's source), and a semver constraint
        assert all(set(d) == {"apiVersion", "kind", "package", "version"} for d in deps)
        assert deps[0] == {
            "apiVersion": "pkg.crossplane.io/v1",
            "kind": "Function",
            "package": fn_repository,
            "version": f"^{fn_tag}",
        }
        for dep in deps[1:]:
            assert (dep["apiVersion"], dep["kind"]) == ("pkg.crossplane.io/v1", "Provider")
            name = dep["package"].rsplit("/", 1)[1]
            if name.startswith("provider-family-"):
                cloud = name.removeprefix("provider-family-")
                members = {t for r, t in install.items() if f"/provider-{cloud}-" in r}
                assert dep["version"] == f"^{members.pop()}" and not members
            else:
                assert dep["version"] == f"^{install[dep['package']]}", dep


def test_the_policies_validate_against_crossplanes_crd(catalog: Catalog) -> None:
    for package in PACKAGES:
        policy = _shipped(package, "activation-policy.yaml")
        assert policy["metadata"]["name"] == package.name
        assert catalog.validate(policy) == [], package.name


@pytest.mark.e2e
def test_every_package_builds_with_its_apis_policy_and_examples(tmp_path: Path) -> None:
    """``make package``'s second half: each package holds its metadata, the form's XRDs and
    Compositions as apis/ has them, its policy, and the form's examples."""
    from tests.test_e2e_render import render_tool

    render_tool.ensure_cli()
    result = subprocess.run(
        [sys.executable, str(ROOT / "tools" / "make_configurations.py"), "--build", str(tmp_path)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    for package in PACKAGES:
        files = xpkg_files(tmp_path / f"{package.name}.xpkg")
        docs = [d for d in yaml.safe_load_all(files["package.yaml"]) if d]
        assert docs[0] == _shipped(package, "crossplane.yaml")
        shipped = sorted((d["kind"], d["metadata"]["name"]) for d in docs[1:])
        expected = sorted(
            [("ManagedResourceActivationPolicy", package.name)]
            + [
                (d["kind"], d["metadata"]["name"])
                for p in package.api_files()
                for d in yaml.safe_load_all(p.read_text())
                if d
            ]
        )
        assert shipped == expected, package.name
        examples = [d for d in yaml.safe_load_all(files.get(".up/examples.yaml", b"")) if d]
        assert len(examples) == sum(
            1 for p in package.example_files() for d in yaml.safe_load_all(p.read_text()) if d
        )
