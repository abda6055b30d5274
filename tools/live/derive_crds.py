"""Derive tests/live/crds/ from the upstream CRDs: the CRDs the live control plane installs so
that the composed resources (and the objects inside provider-kubernetes Objects and Helm
Releases' manifests) are accepted by its API server.

Which kinds: every apiVersion/kind in the golden renders (tests/golden/**), in the
manifests that composed provider-kubernetes Objects carry, in the openstack GitOps tree
(examples/openstack: Flux sources, Kustomizations, HelmReleases), and every kind a module
declares it may compose (fnplatform.kinds.registered(), with its namespaced twin): options no
golden shows (a CephFilesystem, Azure's DNS zones, access-log workspaces) must be accepted by
the live API server too. Each CRD is copied with its
`description` fields removed (they are most of the bytes and change no validation), so the
committed copy stays small; everything else is as upstream. Gardener publishes no CRD for
Shoot (it is served by an aggregated API server), so none is derived for it: the live tests
serve Shoot with a stand-in CRD (tests/live/standin_crds.py).

Usage: python tools/live/derive_crds.py --crds ../shared/crds [--check]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

import yaml

REPO = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(REPO / "platform")]
OUT = REPO / "tests/live/crds"
# served by Kubernetes or by Crossplane itself: no CRD to install
BUILTIN_GROUPS = {
    "",
    "apps",
    "batch",
    "rbac.authorization.k8s.io",
    "networking.k8s.io",
    "policy",
    "autoscaling",
    "storage.k8s.io",
    "apiextensions.crossplane.io",
    "protection.crossplane.io",
    "pkg.crossplane.io",
    "render.crossplane.io",  # the render engine's own output
    "kustomize.config.k8s.io",  # kustomization.yaml: read by kustomize, never applied
    # provider-kubernetes runs for real: its CRDs come from the same release as its binary
    # (tools/live/build.sh copies them to .bin/provider-kubernetes-<version>.package/crds)
    "kubernetes.crossplane.io",
    "kubernetes.m.crossplane.io",
}


def group_of(api_version: str) -> str:
    """The API group of an apiVersion ('' for the core group)."""
    return api_version.rsplit("/", 1)[0] if "/" in api_version else ""


def _walk_kinds(doc: Any, found: set[tuple[str, str]]) -> None:
    """Every (group, kind) of a document and of manifests nested in it (Object, Release)."""
    if isinstance(doc, dict):
        if isinstance(doc.get("apiVersion"), str) and isinstance(doc.get("kind"), str):
            found.add((group_of(doc["apiVersion"]), doc["kind"]))
        for v in doc.values():
            _walk_kinds(v, found)
    elif isinstance(doc, list):
        for v in doc:
            _walk_kinds(v, found)


def declared_kinds() -> set[tuple[str, str]]:
    """(group, kind) of every kind a module declares (fnplatform.kinds.register), and of its
    namespaced twin."""
    from fnplatform.composers import composers
    from fnplatform.kinds import Kind, namespaced_twin, registered

    composers()  # imports every cloud and composer: they declare their kinds on import
    found = set()
    for kind in registered():
        for each in (kind, namespaced_twin(kind)):
            if isinstance(each, Kind):
                found.add((group_of(each.api_version), each.kind))
    return found


def composed_kinds() -> set[tuple[str, str]]:
    """(group, kind) of everything the goldens compose, minus built-in and Crossplane kinds."""
    found: set[tuple[str, str]] = set()
    # the goldens, and the openstack GitOps tree (its Flux objects)
    files = sorted((REPO / "tests/golden").rglob("*.yaml"))
    files += sorted((REPO / "examples/openstack").rglob("*.yaml"))
    for f in files:
        for doc in yaml.safe_load_all(f.read_text()):
            _walk_kinds(doc, found)
    # the providers' ProviderConfigs (examples/install/20-provider-configs.yaml applies them)
    found |= {
        ("aws.upbound.io", "ProviderConfig"),
        ("gcp.upbound.io", "ProviderConfig"),
        ("azure.upbound.io", "ProviderConfig"),
        ("aws.m.upbound.io", "ProviderConfig"),
        ("gcp.m.upbound.io", "ProviderConfig"),
        ("azure.m.upbound.io", "ProviderConfig"),
        ("aws.m.upbound.io", "ClusterProviderConfig"),
        ("gcp.m.upbound.io", "ClusterProviderConfig"),
        ("azure.m.upbound.io", "ClusterProviderConfig"),
        ("helm.crossplane.io", "ProviderConfig"),
        ("helm.m.crossplane.io", "ProviderConfig"),
        ("helm.m.crossplane.io", "ClusterProviderConfig"),
    }
    found |= declared_kinds()
    xr_kinds = set()  # composites and claims: Crossplane makes their CRDs from the XRDs
    for f in (REPO / "apis").rglob("definition.yaml"):
        for doc in yaml.safe_load_all(f.read_text()):
            names = [doc["spec"]["names"], doc["spec"].get("claimNames") or {}]
            xr_kinds |= {(doc["spec"]["group"], n["kind"]) for n in names if n}
    return {(g, k) for g, k in found if g not in BUILTIN_GROUPS and (g, k) not in xr_kinds}


def strip_descriptions(node: Any) -> Any:
    """The schema without `description` keys (at any depth; a property named description,
    under `properties`, is kept)."""
    if isinstance(node, dict):
        return {
            k: (
                {pk: strip_descriptions(pv) for pk, pv in v.items()}
                if k == "properties" and isinstance(v, dict)
                else strip_descriptions(v)
            )
            for k, v in node.items()
            if k != "description"
        }
    if isinstance(node, list):
        return [strip_descriptions(v) for v in node]
    return node


def upstream_crds(root: Path) -> dict[tuple[str, str], dict[str, Any]]:
    """Every CRD under root, by (group, kind)."""
    crds: dict[tuple[str, str], dict[str, Any]] = {}
    for f in sorted(root.rglob("*.yaml")):
        for doc in yaml.safe_load_all(f.read_text()):
            if isinstance(doc, dict) and doc.get("kind") == "CustomResourceDefinition":
                crds[(doc["spec"]["group"], doc["spec"]["names"]["kind"])] = doc
    return crds


def derive(root: Path) -> tuple[dict[str, str], list[str]]:
    """{file name: content} of the derived CRDs, and the kinds with no upstream CRD."""
    # and the upstream CRDs the repository fetched itself because ../shared lacks them
    # (schemas/README.md: Azure's DNS record kinds)
    crds = upstream_crds(REPO / "schemas/crds/provider-upjet-azure-fetched") | upstream_crds(root)
    files: dict[str, str] = {}
    missing: list[str] = []
    for group, kind in sorted(composed_kinds()):
        crd = crds.get((group, kind))
        if crd is None:
            missing.append(f"{group}/{kind}")
            continue
        body = {
            "apiVersion": crd["apiVersion"],
            "kind": crd["kind"],
            "metadata": {"name": crd["metadata"]["name"]},
            "spec": strip_descriptions(crd["spec"]),
        }
        header = (
            "# Derived by tools/live/derive_crds.py from the upstream CRD "
            f"{crd['metadata']['name']} (descriptions removed). Do not edit.\n"
        )
        files[f"{crd['metadata']['name']}.yaml"] = header + yaml.safe_dump(body, sort_keys=False)
    return files, missing


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--crds", type=Path, default=REPO.parent / "shared/crds")
    parser.add_argument("--check", action="store_true", help="fail when tests/live/crds differs")
    args = parser.parse_args()
    files, missing = derive(args.crds)
    if args.check:
        have = {p.name: p.read_text() for p in OUT.glob("*.yaml")}
        if have != files:
            print("tests/live/crds is stale: run python tools/live/derive_crds.py", file=sys.stderr)
            return 1
        return 0
    OUT.mkdir(parents=True, exist_ok=True)
    for p in OUT.glob("*.yaml"):
        p.unlink()
    for name, text in files.items():
        (OUT / name).write_text(text)
    print(f"derive_crds: {len(files)} CRDs into {OUT.relative_to(REPO)}")
    if missing:
        print("derive_crds: no upstream CRD (served by a stand-in): " + ", ".join(missing))
    return 0


if __name__ == "__main__":
    sys.exit(main())
