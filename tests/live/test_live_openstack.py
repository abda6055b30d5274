"""The openstack GitOps tree (examples/openstack) builds with `kubectl kustomize`, and the API
server (with the XRDs Established and the Flux CRDs installed) accepts every object it would
apply: the Flux sources, Kustomizations and HelmReleases, the Crossplane packages and the
openstack claims/composites (issue 21, 6). Server-side dry run: validated and admitted
(webhooks included) but not stored."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.live.conftest import Live
from tests.live.controlplane import REPO
from tests.live.kube import docs_of

pytestmark = pytest.mark.live

TREE = REPO / "examples/openstack"


def _kustomize(directory: Path) -> list[dict[str, Any]]:
    kubectl = shutil.which("kubectl")
    assert kubectl, "kubectl (for kubectl kustomize) is not on PATH"
    out = subprocess.run(
        [kubectl, "kustomize", str(directory)], check=True, capture_output=True, text=True
    ).stdout
    return [d for d in yaml.safe_load_all(out) if d]


def _tree_objects() -> list[dict[str, Any]]:
    """What Flux would apply: each kustomization directory built, every other file as is."""
    built = sorted({p.parent for p in TREE.rglob("kustomization.yaml")})
    docs: list[dict[str, Any]] = []
    for d in built:
        docs += _kustomize(d)
    for f in sorted(TREE.rglob("*.yaml")):
        if not any(d in f.parents for d in built) and f.name != "kustomization.yaml":
            docs += docs_of(f)
    return docs


# the tree applies the v1 form (claims of the openstack XRDs)
@pytest.mark.parametrize("platform", ["v1-claims"], indirect=True)
def test_gitops_tree_builds_and_is_accepted(platform: Live) -> None:
    kube = platform.kube
    docs = _tree_objects()
    assert any(d["kind"] == "Kustomization" for d in docs), "Flux Kustomizations"
    refused: dict[str, str] = {}
    for doc in docs:
        ns = doc["metadata"].get("namespace")
        if ns:
            kube.apply({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
        res = kube.resource(doc["apiVersion"], doc["kind"])
        try:
            res.server_side_apply(
                body=doc,
                name=doc["metadata"]["name"],
                namespace=ns if res.namespaced else None,
                field_manager="live-tests",
                force_conflicts=True,
                dry_run="All",
            )
        except Exception as e:  # collected: every refusal is reported
            refused[f"{doc['kind']}/{doc['metadata']['name']}"] = str(e)[:600]
    assert refused == {}
