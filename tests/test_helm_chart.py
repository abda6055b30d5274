"""The asya-crossplane chart (deploy/helm-charts/asya-crossplane/, issue 33 item 5): ``helm
template`` with the pinned Helm (tools/install-helm.sh) renders what the async-actor document's
install promises, every object valid against its CRD (schemas/crds); the XRD and Compositions
are apis/async-actor/'s own (one line apart: the transport's defaultCompositionRef); the
settings EnvironmentConfig is one the function takes (ActorSettings) and says what the values
say; the runtime script lands in each actor namespace."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml
from fnplatform.composers.async_actor.model import ActorSettings

from tests.support.table import case
from tests.support.tools import load_tool

ROOT = Path(__file__).resolve().parent.parent
CHART = ROOT / "deploy" / "helm-charts" / "asya-crossplane"
generate = load_tool("generate_helm_chart")
#: Kinds the API server knows itself.
BUILT_IN = {("v1", "ConfigMap")}
SCRIPT = "# the Asya release's asya_runtime.py\nprint('ready')\n"


def template(helm: Path, tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    script = tmp_path / "asya_runtime.py"
    script.write_text(SCRIPT)
    return subprocess.run(
        [
            str(helm),
            "template",
            "asya-crossplane",
            str(CHART),
            "--namespace",
            "crossplane-system",
            *[a.replace("@SCRIPT", str(script)) for a in args],
        ],
        check=False,
        capture_output=True,
        text=True,
        timeout=120,
    )


def rendered(helm: Path, tmp_path: Path, *args: str) -> list[dict[str, Any]]:
    result = template(helm, tmp_path, *args)
    assert result.returncode == 0, result.stderr
    return [d for d in yaml.safe_load_all(result.stdout) if d]


#: The async-actor document's install command, plus the runtime script and IRSA.
DOCUMENT = (
    "--set",
    "awsProviderConfig.credentialsSource=IRSA",
    "--set",
    "awsAccountId=123456789012",
    "--set",
    "actorNamespace=asya-e2e",
    "--set-file",
    "runtime.script=@SCRIPT",
    "--set",
    "irsa.enabled=true",
    "--set",
    "irsa.roleArnPattern=arn:aws:iam::{accountId}:role/asya-{namespace}",
)


def _one(docs: list[dict[str, Any]], kind: str, name: str | None = None) -> dict[str, Any]:
    (doc,) = [d for d in docs if d["kind"] == kind and name in (None, d["metadata"]["name"])]
    return doc


def test_the_api_templates_are_generated_from_apis():
    for relative, content in generate.generated_files().items():
        assert (ROOT / relative).read_text() == content, f"run make generate: {relative}"


@pytest.mark.parametrize("form", ["v1", "v2"])
def test_the_chart_installs_the_modules_own_apis(helm, tmp_path, form):
    docs = rendered(helm, tmp_path, "--set", f"form={form}", *DOCUMENT)
    folder = generate.FORMS[form]
    expected_xrd = yaml.safe_load((ROOT / folder / "definition.yaml").read_text())
    expected_xrd["spec"]["defaultCompositionRef"] = {"name": "asyncactor-sqs"}
    assert _one(docs, "CompositeResourceDefinition") == expected_xrd
    expected = [
        yaml.safe_load((ROOT / folder / name).read_text()) for name in generate.COMPOSITIONS
    ]
    assert [d for d in docs if d["kind"] == "Composition"] == expected
    # the XRD's default names a Composition the chart installs
    assert "asyncactor-sqs" in {c["metadata"]["name"] for c in expected}


@pytest.mark.parametrize("form", ["v1", "v2"])
def test_every_object_validates_against_its_crd(catalog, helm, tmp_path, form):
    docs = rendered(
        helm,
        tmp_path,
        "--set",
        f"form={form}",
        *DOCUMENT,
        "--set",
        "awsProviderConfig.create=true",
        "--set",
        "providers.install=true",
    )
    assert {d["kind"] for d in docs} == {
        "CompositeResourceDefinition",
        "Composition",
        "EnvironmentConfig",
        "ConfigMap",
        "Provider",
        "DeploymentRuntimeConfig",
        "ProviderConfig" if form == "v1" else "ClusterProviderConfig",
    }
    for doc in docs:
        if (doc["apiVersion"], doc["kind"]) in BUILT_IN:
            continue
        assert catalog.lookup(doc["apiVersion"], doc["kind"]) is not None, doc["kind"]
        assert catalog.validate(doc) == [], doc["kind"]


def test_the_settings_are_what_the_values_say_and_what_the_function_takes(helm, tmp_path):
    docs = rendered(
        helm,
        tmp_path,
        *DOCUMENT,
        "--set",
        "awsRegion=us-east-1",
        "--set",
        "keda.identityOwner=workload",
        "--set",
        "dlq.maxReceiveCount=5",
        "--set",
        "sidecar.image=ghcr.io/deliveryhero/asya-sidecar:0.4.0",
    )
    settings = _one(docs, "EnvironmentConfig", "asya-settings")["data"]
    parsed = ActorSettings.model_validate(settings)
    assert parsed.aws.region == "us-east-1" and parsed.aws.accountId == "123456789012"
    assert parsed.aws.providerConfig == "default" and parsed.transport == "sqs"
    assert parsed.irsa.enabled and parsed.irsa.role_arn("ml", parsed.aws.accountId) == (
        "arn:aws:iam::123456789012:role/asya-ml"
    )
    assert parsed.keda.identityOwner == "workload" and parsed.dlq.maxReceiveCount == 5
    assert parsed.sidecar.image.endswith(":0.4.0")
    # nothing the values leave unset is written: the function's own defaults apply
    assert "roleArn" not in settings["irsa"] and "secretRef" not in settings["keda"]


def test_the_account_id_stays_a_string_as_the_function_requires(helm, tmp_path):
    for flag in ("--set", "--set-string"):
        docs = rendered(helm, tmp_path, flag, "awsAccountId=012345678901")
        settings = _one(docs, "EnvironmentConfig")["data"]
        assert settings["aws"]["accountId"] == "012345678901", flag
    docs = rendered(helm, tmp_path)
    assert "accountId" not in _one(docs, "EnvironmentConfig")["data"]["aws"]


def test_the_runtime_script_goes_to_every_actor_namespace(helm, tmp_path):
    docs = rendered(helm, tmp_path, *DOCUMENT, "--set", "actorNamespaces={ml,asya-e2e}")
    maps = [d for d in docs if d["kind"] == "ConfigMap"]
    assert [m["metadata"]["namespace"] for m in maps] == ["asya-e2e", "ml"]
    for m in maps:
        assert m["metadata"]["name"] == "asya-runtime"
        assert m["data"] == {"asya_runtime.py": SCRIPT}
    # no script: no ConfigMap (the docs' kubectl command installs it instead)
    assert not [d for d in rendered(helm, tmp_path) if d["kind"] == "ConfigMap"]


def test_the_providers_are_pinned_as_the_install_set_pins_them(helm, tmp_path):
    docs = rendered(helm, tmp_path, "--set", "providers.install=true")
    install = {
        d["metadata"]["name"]: d["spec"]["package"]
        for d in yaml.safe_load_all((ROOT / "examples/install/10-providers.yaml").read_text())
        if d and d["kind"] == "Provider"
    }
    for provider in (d for d in docs if d["kind"] == "Provider"):
        assert provider["spec"]["package"] == install[provider["metadata"]["name"]]


@pytest.mark.parametrize(
    ("args", "says"),
    [
        case(
            "form is v1 or v2 only: an unknown form (v3) fails the install naming form, "
            "instead of rendering a composition for no Crossplane",
            ("--set", "form=v3"),
            "form",
        ),
        case(
            "sqs is the only transport the function composes: another (kafka) fails "
            "naming transport rather than installing a broken chart",
            ("--set", "transport=kafka"),
            "transport",
        ),
        case(
            "an AWS account id is twelve digits: a short one fails naming awsAccountId "
            "before it reaches IAM ARNs",
            ("--set", "awsAccountId=12345"),
            "awsAccountId",
        ),
        case(
            "KEDA authenticates by podIdentity or secret only: another provider (iam) "
            "fails naming authProvider",
            ("--set", "keda.authProvider=iam"),
            "authProvider",
        ),
        case(
            "a runtime script needs to know which actor namespace it goes to: without "
            "actorNamespace(s) the chart fails naming actorNamespace instead of dropping "
            "the ConfigMap nowhere",
            ("--set-file", "runtime.script=@SCRIPT"),
            "actorNamespace",
        ),
    ],
)
def test_bad_values_fail_naming_the_value(helm, tmp_path, args, says):
    result = template(helm, tmp_path, *args)
    assert result.returncode != 0
    assert says in result.stderr, result.stderr
