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
BUILT_IN = {("rbac.authorization.k8s.io/v1", "ClusterRoleBinding"), ("v1", "ServiceAccount")}
#: Groups Crossplane itself serves.
CROSSPLANE_GROUPS = {"apiextensions.crossplane.io", "protection.crossplane.io"}
#: The provider releases whose CRDs schemas/crds holds (the versions composed bodies are
#: validated against); every provider installed must be one of them.
PINNED = {
    "aws": "v2.6.0",
    "gcp": "v3.0.0",
    "azure": "v2.7.0",
    "provider-kubernetes": "v1.2.1",
    "provider-helm": "v1.4.0",
}


#: The fallback, never applied by default (docs/install.md, "Static keys: the fallback").
STATIC_KEYS = INSTALL / "static-keys" / "20-provider-configs.yaml"


def _objects(*paths: Path) -> list[tuple[str, dict[str, Any]]]:
    return [
        (str(path.relative_to(INSTALL)), doc)
        for path in paths or sorted(INSTALL.glob("*.yaml"))
        for doc in yaml.safe_load_all(path.read_text())
        if doc
    ]


OBJECTS = _objects()
FALLBACK = _objects(STATIC_KEYS)


def test_the_install_set_is_numbered_in_apply_order():
    names = [p.name for p in sorted(INSTALL.glob("*.yaml"))]
    assert names == [
        "10-providers.yaml",
        "15-activation-policy.yaml",
        "20-provider-configs.yaml",
        "30-keda.yaml",
        "40-function.yaml",
        "50-monitoring.yaml",
    ]


@pytest.mark.parametrize(
    ("file", "obj"),
    [*OBJECTS, *FALLBACK],
    ids=[f"{f}:{o['kind']}/{o['metadata']['name']}" for f, o in [*OBJECTS, *FALLBACK]],
)
def test_every_object_validates_against_its_crd(catalog, file, obj):
    if (obj["apiVersion"], obj["kind"]) in BUILT_IN:
        assert obj["metadata"]["name"]
        assert obj["kind"] != "ClusterRoleBinding" or obj["roleRef"]["name"]
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
    result = subprocess.run(
        [sys.executable, "-c", script],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
        env={"PYTHONPATH": f"{ROOT / 'platform'}"},
    )
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
    runtime = next(
        o
        for _, o in OBJECTS
        if o["kind"] == "DeploymentRuntimeConfig"
        and o["metadata"]["name"] == function["spec"]["runtimeConfigRef"]["name"]
    )
    (container,) = runtime["spec"]["deploymentTemplate"]["spec"]["template"]["spec"]["containers"]
    assert container["name"] == "package-runtime"  # the container Crossplane runs the image in
    help_text = CliRunner().invoke(cli, ["--help"]).output
    for arg in container["args"]:
        assert arg.split("=")[0] in help_text, arg


def test_provider_runtime_configs_name_the_service_accounts_the_bindings_use():
    accounts = {
        o["spec"]["serviceAccountTemplate"]["metadata"]["name"]
        for _, o in OBJECTS
        if o["kind"] == "DeploymentRuntimeConfig" and "serviceAccountTemplate" in o["spec"]
    }
    bound = {
        s["name"] for _, o in OBJECTS if o["kind"] == "ClusterRoleBinding" for s in o["subjects"]
    }
    assert bound == accounts == {"provider-kubernetes", "provider-helm"}


#: What gives each family its cloud identity (docs/install.md, "Keyless provider identity"):
#: the service account's annotations, the pod labels, and the ProviderConfig's source.
IDENTITY = {
    "aws": ({"eks.amazonaws.com/role-arn"}, {}, "IRSA"),
    "gcp": ({"iam.gke.io/gcp-service-account"}, {}, "InjectedIdentity"),
    "azure": (
        {"azure.workload.identity/client-id"},
        {"azure.workload.identity/use": "true"},
        "OIDCTokenFile",
    ),
}


def _runtime(name: str) -> dict[str, Any]:
    (runtime,) = [
        o
        for _, o in OBJECTS
        if o["kind"] == "DeploymentRuntimeConfig" and o["metadata"]["name"] == name
    ]
    return runtime


@pytest.mark.parametrize("cloud", sorted(IDENTITY))
def test_every_cloud_provider_runs_with_its_familys_workload_identity(cloud):
    """Every member of the family names the family's runtime config, which runs its pods with
    one pre-created service account carrying the cloud's identity annotation (and Azure's pod
    label): Crossplane creates no per-revision account then."""
    annotations, labels, _ = IDENTITY[cloud]
    members = [
        o
        for _, o in OBJECTS
        if o["kind"] == "Provider" and o["metadata"]["name"].startswith(f"provider-{cloud}-")
    ]
    assert members
    assert {m["spec"].get("runtimeConfigRef", {}).get("name") for m in members} == {
        f"provider-{cloud}"
    }
    template = _runtime(f"provider-{cloud}")["spec"]["deploymentTemplate"]["spec"]["template"]
    assert "serviceAccountTemplate" not in _runtime(f"provider-{cloud}")["spec"]
    account_name = template["spec"]["serviceAccountName"]
    (account,) = [
        o
        for _, o in OBJECTS
        if o["kind"] == "ServiceAccount" and o["metadata"]["name"] == account_name
    ]
    assert account["metadata"]["namespace"] == "crossplane-system"
    assert set(account["metadata"]["annotations"]) == annotations
    assert (template.get("metadata") or {}).get("labels", {}) == labels


def _cloud_configs(objects: list[tuple[str, dict[str, Any]]]) -> dict[tuple[str, str], Any]:
    return {
        (o["apiVersion"].split(".")[0], o["kind"]): o["spec"]
        for _, o in objects
        if re.fullmatch(r"(aws|gcp|azure)(\.m)?\.upbound\.io/v1beta1", o["apiVersion"])
    }


def test_the_default_install_set_is_keyless_on_every_cloud():
    """Both forms' cloud ProviderConfigs use the workload identity, with the fields each
    provider requires for it; no Secret holds a cloud key by default."""
    configs = _cloud_configs(OBJECTS)
    assert set(configs) == {
        (c, k) for c in IDENTITY for k in ("ProviderConfig", "ClusterProviderConfig")
    }
    for (cloud, kind), spec in configs.items():
        assert spec["credentials"] == {"source": IDENTITY[cloud][2]}, (cloud, kind)
        if cloud == "azure":  # provider-upjet-azure internal/clients/azure.go oidcAuth
            assert all(spec.get(f) for f in ("clientID", "tenantID", "subscriptionID"))
        if cloud == "gcp":
            assert spec["projectID"]
    # the cluster-scoped and the namespaced form's configs are the same
    for cloud in IDENTITY:
        assert configs[(cloud, "ProviderConfig")] == configs[(cloud, "ClusterProviderConfig")]
    assert not [o for _, o in OBJECTS if o["kind"] == "Secret"]


def test_static_keys_are_only_the_fallback_for_the_same_configs():
    fallback = _cloud_configs(FALLBACK)
    assert set(fallback) == set(_cloud_configs(OBJECTS))
    assert all(spec["credentials"]["source"] == "Secret" for spec in fallback.values())
    assert "FALLBACK ONLY" in STATIC_KEYS.read_text()


def test_crossplane_is_installed_as_the_live_test_runs_it() -> None:
    """README's `helm install` of Crossplane, the GitOps tree's HelmRelease and the live test's
    `core start` arguments (tests/live/crossplane.py reads the HelmRelease) are one setting:
    the chart version the live test's core is, and the same `args`."""
    release = yaml.safe_load(
        (ROOT / "examples/openstack/apps/crossplane/helmrelease.yaml").read_text()
    )
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
