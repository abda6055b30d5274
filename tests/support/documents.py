"""The design documents' material with what this repository ships, put together as Crossplane
would: a claim becomes its composite, the shipped Composition's step input is read from its
file, and the function's EnvironmentConfig requirements are answered from a store of what a
user applied.

Why here and not inline: issue 32 asks that a document's claim and configuration work as a
new user combines them with ``examples/`` and the shipped Compositions, so the tests must not
hand-pick what the function is given. ``tests/fixtures/design-documents/<document>/`` holds the
document's material (copied verbatim, each file naming its section); nothing reads
``../shared`` at test time.
"""

from __future__ import annotations

import copy
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

import yaml

from tests.support.harness import FunctionClient, Rendered, observed_ready, request

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "tests" / "fixtures" / "design-documents"
#: Crossplane's own CRDs of the pinned release (schemas/README.md).
CROSSPLANE_CRDS = ROOT / "schemas" / "crds" / "crossplane"
#: The suffix Crossplane's claim reconciler would append at random: fixed, so names repeat.
COMPOSITE_SUFFIX = "d0c32"
Body = dict[str, Any]


def load(path: Path) -> list[Body]:
    """Every YAML document of ``path`` (comments, the fixtures' headers, are dropped)."""
    return [doc for doc in yaml.safe_load_all(path.read_text()) if doc is not None]


def document(name: str, file: str) -> list[Body]:
    """A design document's material: ``tests/fixtures/design-documents/<name>/<file>``."""
    return load(FIXTURES / name / file)


def shipped(*paths: str) -> list[Body]:
    """What the repository ships at ``paths`` (files, or folders read file by file in name
    order), relative to its root."""
    found: list[Body] = []
    for relative in paths:
        path = ROOT / relative
        files = sorted(path.glob("*.yaml")) if path.is_dir() else [path]
        for file in files:
            found.extend(load(file))
    return found


def step_of(composition: str) -> Body:
    """The function's step input of a shipped Composition (``apis/<module>/composition.yaml``),
    exactly as the file has it: the environment selection is the Composition's own."""
    (body,) = shipped(composition)
    steps = body["spec"]["pipeline"]
    assert len(steps) == 1, composition
    return copy.deepcopy(steps[0]["input"])


def composite_of(claim: Mapping[str, Any], kind: str, namespace: str = "default") -> Body:
    """The composite Crossplane makes for a v1 ``claim``, as ``crossplane xr generate`` shows
    it: the claim's labels plus the claim labels, its name with a suffix, its spec with a
    ``claimRef``. A claim without a namespace is in ``namespace`` (kubectl's default)."""
    metadata = claim["metadata"]
    claim_namespace = metadata.get("namespace", namespace)
    api_version = str(claim["apiVersion"])
    return {
        "apiVersion": api_version,
        "kind": kind,
        "metadata": {
            "name": f"{metadata['name']}-{COMPOSITE_SUFFIX}",
            "labels": {
                **(metadata.get("labels") or {}),
                "crossplane.io/claim-name": metadata["name"],
                "crossplane.io/claim-namespace": claim_namespace,
            },
        },
        "spec": {
            **copy.deepcopy(claim.get("spec") or {}),
            "claimRef": {
                "apiVersion": api_version,
                "kind": claim["kind"],
                "name": metadata["name"],
                "namespace": claim_namespace,
            },
        },
    }


def served_versions(group: str, plural: str) -> list[str]:
    """The versions Crossplane serves of one of its own kinds (``apiextensions.crossplane.io``,
    ``environmentconfigs``), from its CRD in ``schemas/crds/crossplane``."""
    (crd,) = load(CROSSPLANE_CRDS / f"{group}_{plural}.yaml")
    return [v["name"] for v in crd["spec"]["versions"] if v.get("served")]


def fetch(
    requirements: Mapping[str, Mapping[str, Any]], store: Iterable[Mapping[str, Any]]
) -> dict[str, list[Body]]:
    """What Crossplane answers each requirement with: the stored resources of its apiVersion
    and kind with its name, or with all its labels (none found: an empty list)."""
    answered: dict[str, list[Body]] = {}
    for key, selector in requirements.items():
        wanted = (selector.get("apiVersion"), selector.get("kind"))
        labels = (selector.get("matchLabels") or {}).get("labels") or {}
        found = []
        for item in store:
            meta = item.get("metadata") or {}
            if (item.get("apiVersion"), item.get("kind")) != wanted:
                continue
            if "matchName" in selector and meta.get("name") != selector["matchName"]:
                continue
            if "matchName" not in selector and any(
                (meta.get("labels") or {}).get(k) != v for k, v in labels.items()
            ):
                continue
            found.append(copy.deepcopy(dict(item)))
        answered[key] = found
    return answered


def play(
    client: FunctionClient,
    composite: Body,
    step: Body,
    store: Iterable[Mapping[str, Any]],
    *,
    passes: int = 10,
) -> Rendered:
    """Pass after pass as Crossplane runs them, every desired resource then observed Ready
    and every requirement answered from ``store``, until the desired set stops growing (or
    a fatal result): the composite once its resources exist."""
    store = list(store)
    observed: dict[str, Body] = {}
    rendered = client.run(request(composite, step))
    for _ in range(passes):
        required = fetch(rendered.requirements, store)
        now = {name: observed_ready(body) for name, body in rendered.resources.items()}
        if rendered.fatal or (observed and set(now) == set(observed)):
            break
        observed = now
        rendered = client.run(request(composite, step, observed=observed, required=required))
    return rendered
