"""A module installed from its Configuration package, as README "Installing one module" installs
it (issue 33, item 1): the package is built by `make package`'s tool, pushed to the local
registry, installed as a ``Configuration``; it becomes Healthy, its XRDs Established, its
ManagedResourceActivationPolicy is there as shipped, and the module's example reaches Ready
through the Compositions the package installed. Both forms of async-actor (quick: Ready in
seconds), one after the other.

The providers here run as processes with their CRDs applied directly (tests/live/layers.py),
not as packages, so the Configuration is installed with ``skipDependencyResolution: true``:
with resolution, Crossplane's package manager finds none of the provider packages the
Configuration depends on in its lock, reports the revision Unhealthy ("missing dependencies")
and establishes none of its objects (core v2.4.0
internal/controller/pkg/revision/reconciler.go, dependency.go). docs/live.md says why a user's
cluster needs no such thing.

These tests install the module's XRDs themselves, which the ``platform`` fixture would apply
from apis/ too (the same names): they are marked ``own_apis`` and run before it, and each
uninstalls its form (the Configuration, then its XRDs and their CRDs gone) and restarts
Crossplane, as the platform fixture does between forms.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.live import crossplane as xp
from tests.live.controlplane import REPO
from tests.live.kube import condition, docs_of, is_true, xrd_serving
from tests.live.layers import XRD, Live
from tests.live.test_live_examples import EXAMPLES, READY_WITHIN_S

pytestmark = [pytest.mark.live, pytest.mark.own_apis]

MODULE = "async-actor"
#: The package of each form (tools/make_configurations.py Package.name).
PACKAGES = {"v1-claims": f"platform-{MODULE}", "v2-namespaced": f"platform-{MODULE}-namespaced"}
CONFIGURATION = xp.CONFIGURATION
MRAP = ("apiextensions.crossplane.io/v1alpha1", "ManagedResourceActivationPolicy")
configuration = xp.configuration


@pytest.fixture(scope="module")
def published(providers: Live) -> dict[str, str]:
    """Both forms' packages built as `make package` builds them and pushed to the registry."""
    t = time.monotonic()
    refs = xp.publish_configurations(
        providers.cp, REPO / ".bin/crossplane", list(PACKAGES.values())
    )
    providers.record("configurations_published_s", time.monotonic() - t)
    return refs


def _shipped(package: str, name: str) -> list[dict[str, Any]]:
    return docs_of(REPO / "configurations" / package / name)


def _package_xrds(package: str) -> list[dict[str, Any]]:
    """The XRDs the package ships: the form's definition files of apis/<module>/."""
    return xp.package_xrds(MODULE, namespaced=package.endswith("-namespaced"))


def _ensure_namespace(live: Live, doc: dict[str, Any]) -> None:
    ns = doc["metadata"].get("namespace")
    if ns:
        live.kube.apply({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})


def _uninstall(live: Live, package: str, xrds: list[dict[str, Any]]) -> None:
    """Delete the Configuration; its revision and what it established go with it (owner
    references: the garbage collector), the XRDs' CRDs once Crossplane lets the XRDs go; then
    restart Crossplane, as between the platform fixture's forms (tests/live/conftest.py)."""
    kube = live.kube
    kube.delete(*CONFIGURATION, package)
    crds = [d["metadata"]["name"] for d in xrds] + [
        f"{d['spec']['claimNames']['plural']}.{d['spec']['group']}"
        for d in xrds
        if "claimNames" in d["spec"]
    ]

    def gone() -> bool:
        return (
            kube.get(*CONFIGURATION, package) is None
            and all(kube.get(*XRD, d["metadata"]["name"]) is None for d in xrds)
            and all(
                kube.get("apiextensions.k8s.io/v1", "CustomResourceDefinition", n) is None
                for n in crds
            )
            and kube.get(*MRAP, package) is None
        )

    live.wait(f"Configuration {package}, its XRDs, their CRDs and its policy deleted", gone, 240)
    live.record(f"crossplane_restart_after_configuration_{package}_s", xp.restart(live.cp))
    kube.invalidate()


@pytest.mark.parametrize("form", list(PACKAGES))
def test_a_module_installs_from_its_configuration_and_composes(
    providers: Live, published: dict[str, str], form: str
) -> None:
    live, kube = providers, providers.kube
    package = PACKAGES[form]
    xrds = _package_xrds(package)
    assert xrds, f"no XRD of {package} in apis/{MODULE}"
    t = time.monotonic()
    kube.apply(configuration(package, published[package]))
    try:

        def healthy() -> bool:
            obj = kube.get(*CONFIGURATION, package)
            return is_true(obj, "Healthy") and is_true(obj, "Installed")

        try:
            live.wait(f"Configuration {package} Healthy", healthy, 180)
        except TimeoutError:
            obj = kube.get(*CONFIGURATION, package)
            revisions = [
                (r.metadata.name, (r.to_dict().get("status") or {}).get("conditions"))
                for r in kube.list("pkg.crossplane.io/v1", "ConfigurationRevision")
            ]
            pytest.fail(
                f"Configuration {package}: Healthy={condition(obj, 'Healthy')} "
                f"Installed={condition(obj, 'Installed')}; revisions: {revisions}"
            )
        live.record(f"configuration_healthy_{form}_s", time.monotonic() - t)

        def established() -> bool:
            return all(xrd_serving(kube.get(*XRD, doc["metadata"]["name"]), doc) for doc in xrds)

        live.wait(f"{package} XRDs Established", established, 180)
        live.record(f"configuration_xrds_established_{form}_s", time.monotonic() - t)
        kube.invalidate()
        # what the package installed is the form apis/ holds, owned by its revision
        for doc in xrds:
            obj = kube.get(*XRD, doc["metadata"]["name"])
            assert obj.to_dict()["spec"]["group"] == doc["spec"]["group"]
            owners = [o["kind"] for o in obj.to_dict()["metadata"].get("ownerReferences") or []]
            assert "ConfigurationRevision" in owners, owners
        (policy,) = _shipped(package, "activation-policy.yaml")
        installed = kube.get(*MRAP, package)
        assert installed is not None, f"the package's ManagedResourceActivationPolicy {package}"
        assert installed.to_dict()["spec"]["activate"] == policy["spec"]["activate"]

        _example_reaches_ready_and_deletes(live, form)
    finally:
        _uninstall(live, package, xrds)


def _example_reaches_ready_and_deletes(live: Live, form: str) -> None:
    """The module's example, as test_live_examples applies it, Ready through the package's
    Composition, then deleted with everything it composed."""
    (example,) = [e for e in EXAMPLES if e.module == MODULE]
    kube = live.kube
    for doc in [d for need in example.needs for d in docs_of(REPO / need)] + list(example.prepared):
        _ensure_namespace(live, doc)
        kube.apply(doc)
    path = example.v1 if form == "v1-claims" else str(example.v2)
    (claim,) = docs_of(Path(REPO / path))
    _ensure_namespace(live, claim)
    name, ns = claim["metadata"]["name"], claim["metadata"].get("namespace")
    kube.apply(claim)
    try:

        def ready() -> bool:
            return is_true(kube.get(claim["apiVersion"], claim["kind"], name, ns), "Ready")

        try:
            took = live.wait(f"{path} Ready through the package", ready, READY_WITHIN_S)
        except TimeoutError:
            obj = kube.get(claim["apiVersion"], claim["kind"], name, ns)
            pytest.fail(
                f"{path} not Ready within {READY_WITHIN_S} s through {PACKAGES[form]}: "
                f"{yaml.safe_dump((obj.to_dict().get('status') or {}) if obj else {})}"
            )
        live.record(f"configuration_ready_{MODULE}_{form}_s", took)
        spec = kube.get(claim["apiVersion"], claim["kind"], name, ns).to_dict()["spec"]
        ref = (spec.get("crossplane") or {}).get("compositionRef") or spec.get("compositionRef")
        assert ref, f"{path} selected no Composition"
        composition = kube.get("apiextensions.crossplane.io/v1", "Composition", ref["name"])
        owners = [o["kind"] for o in composition.to_dict()["metadata"].get("ownerReferences") or []]
        assert "ConfigurationRevision" in owners, f"Composition {ref['name']}: {owners}"
    finally:
        kube.delete(claim["apiVersion"], claim["kind"], name, ns)
        live.wait(
            f"{path} deleted",
            lambda: kube.get(claim["apiVersion"], claim["kind"], name, ns) is None,
            240,
        )
