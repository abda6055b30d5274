"""``examples/install/``: what a user applies, in order, to run this function (issue 13, item 7).

Every object validates against the pinned CRDs in ``schemas/crds`` (Crossplane's package CRDs
for Provider, Function and DeploymentRuntimeConfig and its ManagedResourceActivationPolicy; the
providers' ProviderConfig and Release CRDs; ``tests/test_activation_policy.py`` checks what the
policy activates). The providers cover every API group a module composes, each pinned to a version.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parent.parent
INSTALL = ROOT / "examples" / "install"
#: Kubernetes' own kinds: no CRD to validate against (the API server knows them).
BUILT_IN = {("rbac.authorization.k8s.io/v1", "ClusterRoleBinding")}
#: Groups Crossplane itself serves.
CROSSPLANE_GROUPS = {"apiextensions.crossplane.io", "protection.crossplane.io"}
#: The provider releases whose CRDs schemas/crds holds (the versions composed bodies are
#: validated against); every provider installed must be one of them.
PINNED = {"aws": "v2.6.0", "gcp": "v3.0.0", "azure": "v2.7.0",
          "provider-kubernetes": "v1.2.1", "provider-helm": "v1.4.0"}


def _objects() -> list[tuple[str, dict[str, Any]]]:
    return [
        (path.name, doc)
        for path in sorted(INSTALL.glob("*.yaml"))
        for doc in yaml.safe_load_all(path.read_text())
        if doc
    ]


OBJECTS = _objects()


def test_the_install_set_is_numbered_in_apply_order():
    names = [p.name for p in sorted(INSTALL.glob("*.yaml"))]
    assert names == ["10-providers.yaml", "15-activation-policy.yaml", "20-provider-configs.yaml",
                     "30-keda.yaml", "40-function.yaml", "50-monitoring.yaml"]


@pytest.mark.parametrize(("file", "obj"), OBJECTS,
                         ids=[f"{f}:{o['kind']}/{o['metadata']['name']}" for f, o in OBJECTS])
def test_every_object_validates_against_its_crd(catalog, file, obj):
    if (obj["apiVersion"], obj["kind"]) in BUILT_IN:
        assert obj["kind"] == "ClusterRoleBinding" and obj["roleRef"]["name"]
        return
    assert catalog.lookup(obj["apiVersion"], obj["kind"]) is not None, "no CRD in schemas/crds"
    assert catalog.validate(obj) == []


def _providers() -> dict[str, str]:
    providers = [o for _, o in OBJECTS if o["kind"] == "Provider"]
    return {o["metadata"]["name"]: o["spec"]["package"] for o in providers}


def test_every_provider_is_pinned_to_the_validated_release():
    for name, package in _providers().items():
        registry_name, _, tag = package.rpartition(":")
        assert registry_name.endswith(f"/{name}"), package
        assert re.fullmatch(r"v\d+\.\d+\.\d+", tag), f"{name} is not pinned: {package}"
        cloud = name.split("-")[1]
        assert tag == PINNED.get(name, PINNED.get(cloud)), f"{name}: {tag}"


def _composed_groups() -> set[str]:
    """API groups of every managed kind the shipped code registers (a fresh process: tests
    register kinds of their own in this one). Unmanaged kinds (a Namespace a provider-kubernetes
    Object wraps) need no provider of their own."""
    import json
    import subprocess
    import sys

    script = (
        "import importlib, json, pkgutil, fnplatform\n"
        "for m in pkgutil.walk_packages(fnplatform.__path__, 'fnplatform.'):\n"
        "    importlib.import_module(m.name)\n"
        "from fnplatform.kinds import _KINDS\n"
        "groups = {a.split('/')[0] for (a, _), k in _KINDS.items() if k.managed}\n"
        "print(json.dumps(sorted(groups)))\n"
    )
    result = subprocess.run([sys.executable, "-c", script], cwd=ROOT, capture_output=True,
                            text=True, check=True, env={"PYTHONPATH": f"{ROOT / 'platform'}"})
    return set(json.loads(result.stdout))


def test_the_providers_serve_every_api_group_a_module_composes():
    installed = set(_providers())
    missing = []
    # A namespaced twin (``*.m.upbound.io``) is served by the same provider as its kind.
    groups = {g.replace(".m.upbound.io", ".upbound.io") for g in _composed_groups()}
    for group in sorted(groups - CROSSPLANE_GROUPS):
        family = re.fullmatch(r"(aws|gcp|azure)\.upbound\.io", group)
        if family:  # served by provider-family-<cloud>, a dependency of every member provider
            assert any(p.startswith(f"provider-{family[1]}-") for p in installed), group
            continue
        upjet = re.fullmatch(r"(\w+)\.(aws|gcp|azure)\.upbound\.io", group)
        provider = f"provider-{upjet[2]}-{upjet[1]}" if upjet else f"provider-{group.split('.')[0]}"
        if provider not in installed:
            missing.append(f"{group} needs {provider}")
    assert missing == []


def test_the_function_uses_its_runtime_config_and_the_flags_exist():
    from click.testing import CliRunner

    from function.cli import cli

    function = next(o for _, o in OBJECTS if o["kind"] == "Function")
    runtime = next(o for _, o in OBJECTS if o["kind"] == "DeploymentRuntimeConfig"
                   and o["metadata"]["name"] == function["spec"]["runtimeConfigRef"]["name"])
    (container,) = runtime["spec"]["deploymentTemplate"]["spec"]["template"]["spec"]["containers"]
    assert container["name"] == "package-runtime"  # the container Crossplane runs the image in
    help_text = CliRunner().invoke(cli, ["--help"]).output
    for arg in container["args"]:
        assert arg.split("=")[0] in help_text, arg


def test_provider_runtime_configs_name_the_service_accounts_the_bindings_use():
    accounts = {o["spec"]["serviceAccountTemplate"]["metadata"]["name"]
                for _, o in OBJECTS if o["kind"] == "DeploymentRuntimeConfig"
                and "serviceAccountTemplate" in o["spec"]}
    bound = {s["name"] for _, o in OBJECTS if o["kind"] == "ClusterRoleBinding"
             for s in o["subjects"]}
    assert bound == accounts == {"provider-kubernetes", "provider-helm"}


def test_crossplane_is_installed_as_the_live_test_runs_it() -> None:
    """README's `helm install` of Crossplane, the GitOps tree's HelmRelease and the live test's
    `core start` arguments (tests/live/crossplane.py reads the HelmRelease) are one setting:
    the chart version the live test's core is, and the same `args`."""
    release = yaml.safe_load(
        (ROOT / "examples/openstack/apps/crossplane/helmrelease.yaml").read_text())
    args = release["spec"]["values"]["args"]
    version = release["spec"]["chart"]["spec"]["version"]
    core_mod = (ROOT / "tools/live/crossplane/go.mod").read_text()
    assert f"github.com/crossplane/crossplane/v2 v{version}" in core_mod
    readme = (ROOT / "README.md").read_text().replace("\\\n", " ")
    (command,) = re.findall(r"helm install crossplane crossplane-stable/crossplane [^\n]*", readme)
    assert f"--version {version}" in command
    (printed,) = re.findall(r"--set 'args=\{([^}]*)\}'", command)
    assert printed.split(",") == args
    assert any(a.startswith("--circuit-breaker-burst=") for a in args)
