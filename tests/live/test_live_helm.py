"""The asya-crossplane chart on the live control plane (issue 33 item 5): ``helm template`` of
deploy/helm-charts/asya-crossplane with the pinned Helm (tools/install-helm.sh), applied as
Helm would apply it; the async-actor XRD becomes Established (and Offered), and the module's
example reaches Ready through the chart's XRD, Compositions (the XRD's default,
``asyncactor-sqs``), settings EnvironmentConfig and runtime ConfigMap, then deletes.

Runs on the ``providers`` layer: with no platform form installed (``-k helm`` alone) the chart
is the only installer and everything it applied is removed at the end; inside a full run, on
the form the ``platform`` fixture installed, it installs the same form over it and restores
apis/'s XRD afterwards (the chart's differs in defaultCompositionRef only)."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.live.controlplane import REPO
from tests.live.kube import docs_of, is_true, xrd_serving
from tests.live.layers import Live

pytestmark = pytest.mark.live

CHART = REPO / "deploy/helm-charts/asya-crossplane"
#: What the async-actor example needs in its namespace; a stand-in for the Asya release's
#: script (the kubelet stand-in checks the ConfigMap and key, docs/live.md).
SCRIPT = "# stand-in for the Asya release's runtime script\n"
EXAMPLES = {
    "v1": REPO / "examples/async-actor/claim.yaml",
    "v2": REPO / "examples/async-actor/namespaced/xr.yaml",
}


def _helm() -> Path:
    out = subprocess.run(
        [str(REPO / "tools/install-helm.sh")],
        capture_output=True,
        text=True,
        check=True,
        timeout=3600,
    )
    return Path(out.stdout.strip().splitlines()[-1])


def _rendered(form: str, namespace: str, tmp_path: Path) -> list[dict[str, Any]]:
    """The chart as the async-actor document installs it, for the live form."""
    script = tmp_path / "asya_runtime.py"
    script.write_text(SCRIPT)
    settings = REPO / "examples/async-actor/platform/environment.yaml"
    env = yaml.safe_load(settings.read_text())["data"]
    result = subprocess.run(
        [
            str(_helm()),
            "template",
            "asya-crossplane",
            str(CHART),
            "--namespace",
            "crossplane-system",
            "--set",
            f"form={form}",
            "--set",
            f"awsRegion={env['aws']['region']}",
            "--set-string",
            f"awsAccountId={env['aws']['accountId']}",
            "--set",
            f"actorNamespace={namespace}",
            "--set-file",
            f"runtime.script={script}",
            "--set",
            "irsa.enabled=true",
            "--set",
            f"irsa.roleArnPattern={env['irsa']['roleArnPattern']}",
            "--set",
            f"irsa.serviceAccountName={env['irsa']['serviceAccountName']}",
            "--set",
            f"sidecar.image={env['sidecar']['image']}",
        ],
        check=False,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    return [d for d in yaml.safe_load_all(result.stdout) if d]


def test_the_chart_installs_async_actor_and_its_example_reaches_ready(
    providers: Live,
    tmp_path: Path,
) -> None:
    live, kube = providers, providers.kube
    form = "v2" if live.form == "v2-namespaced" else "v1"
    (example,) = docs_of(EXAMPLES[form])
    # without the Composition the example names (the namespaced one names the module's own):
    # the XRD's default, the chart's transport Composition, must pick it
    (example["spec"].get("crossplane") or example["spec"]).pop("compositionRef", None)
    name, namespace = example["metadata"]["name"], example["metadata"]["namespace"]
    kube.apply({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}})
    docs = _rendered(form, namespace, tmp_path)
    (xrd,) = [d for d in docs if d["kind"] == "CompositeResourceDefinition"]
    kube.apply(xrd)

    def established() -> bool:
        return xrd_serving(kube.get(xrd["apiVersion"], xrd["kind"], xrd["metadata"]["name"]), xrd)

    live.wait("the chart's XRD Established", established, 240)
    kube.invalidate()
    rest = [d for d in docs if d is not xrd]
    kube.apply_all(rest)
    settings = kube.get("apiextensions.crossplane.io/v1beta1", "EnvironmentConfig", "asya-settings")
    assert settings is not None and settings.to_dict()["data"]["transport"] == "sqs"
    runtime = kube.get("v1", "ConfigMap", "asya-runtime", namespace)
    assert runtime is not None and runtime.to_dict()["data"] == {"asya_runtime.py": SCRIPT}
    try:
        kube.apply(example)

        def ready() -> bool:
            return is_true(
                kube.get(example["apiVersion"], example["kind"], name, namespace), "Ready"
            )

        took = live.wait(f"{EXAMPLES[form].relative_to(REPO)} Ready through the chart", ready, 180)
        live.record(f"ready_async-actor_helm_{form}_s", took)
        obj = kube.get(example["apiVersion"], example["kind"], name, namespace).to_dict()
        composite = (
            obj
            if form == "v2"
            else kube.get(
                obj["spec"]["resourceRef"]["apiVersion"],
                obj["spec"]["resourceRef"]["kind"],
                obj["spec"]["resourceRef"]["name"],
            ).to_dict()
        )
        # the XRD's default, as the document's chart makes it
        ref = composite["spec"].get("compositionRef") or (
            composite["spec"].get("crossplane") or {}
        ).get("compositionRef")
        assert ref == {"name": "asyncactor-sqs"}
    finally:
        kube.delete(example["apiVersion"], example["kind"], name, namespace)
        live.wait(
            "the example deleted",
            lambda: kube.get(example["apiVersion"], example["kind"], name, namespace) is None,
            240,
        )
        _restore(live, form, docs, xrd)


def _restore(live: Live, form: str, docs: list[dict[str, Any]], xrd: dict[str, Any]) -> None:
    """Leave the control plane as the chart found it."""
    kube = live.kube
    if live.form:  # the platform fixture's form: its own XRD again, the chart's extras gone
        folder = REPO / "apis/async-actor" / ("namespaced" if form == "v2" else "")
        kube.apply_all(docs_of(folder / "definition.yaml"))
        kube.delete("apiextensions.crossplane.io/v1", "Composition", "asyncactor-sqs")
        return
    for doc in docs:
        if doc is not xrd:
            kube.delete(
                doc["apiVersion"],
                doc["kind"],
                doc["metadata"]["name"],
                doc["metadata"].get("namespace"),
            )
    kube.delete(xrd["apiVersion"], xrd["kind"], xrd["metadata"]["name"])
    live.wait(
        "the chart's XRD deleted",
        lambda: kube.get(xrd["apiVersion"], xrd["kind"], xrd["metadata"]["name"]) is None,
        240,
    )
