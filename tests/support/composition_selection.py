"""Which Composition Crossplane v2.4 gives a composite: its selection rules, applied to files.

A claim or composite reaches this function only through the Composition Crossplane selects for
it, and nothing in the function can change that choice. So the tests check the choice the way
Crossplane core v2.4.0 makes it, on the Compositions this repository ships. For every
composite the definition reconciler chains three selectors
(``internal/controller/apiextensions/definition/reconciler.go`` L579-L583), all in
``internal/controller/apiextensions/composite/api.go``:

1. ``EnforcedCompositionSelector`` (L364-L382): the XRD's ``enforcedCompositionRef``, whatever
   the composite says.
2. ``APIDefaultCompositionSelector`` (L309-L327): a composite with neither ``compositionRef``
   nor ``compositionSelector`` gets the XRD's ``defaultCompositionRef``, if it has one.
3. ``APILabelSelectorResolver`` (L250-L291): a composite still without ``compositionRef``
   lists the Compositions carrying every label of ``compositionSelector.matchLabels`` (all of
   them without a selector; ``matchExpressions`` are not read), keeps those whose
   ``compositeTypeRef`` is the composite's apiVersion and kind, and takes one **at random**
   (L286-L288); none is ``no compatible Compositions found``.

A ``compositionRef`` is then fetched by name (``cannot get Composition``, L173-L175), and a v1
(legacy) composite's must have its ``compositeTypeRef`` (``referenced composition is not
compatible with this composite resource``, L419-L429). A v1 composite keeps the fields at
``spec.compositionRef``/``spec.compositionSelector``, a namespaced (v2) one under
``spec.crossplane`` (crossplane-runtime v2.4.0 ``pkg/resource/unstructured/composite/
composite.go`` L98-L146). A claim's ``compositionRef`` and ``compositionSelector`` are copied
to its composite (``claim/syncer_ssa.go`` L136-L145, the fields crossplane-runtime v2.4.0
``pkg/xcrd/schemas.go`` L38-L40 lists), and the composite's ``compositionRef`` back to a claim
without one (L184-L201).
"""

from __future__ import annotations

import copy
import hashlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parent.parent.parent
NAMESPACED = "namespaced"
#: Crossplane's composition-selection fields of a composite's spec (v1 form).
SELECTION_FIELDS = ("compositionRef", "compositionSelector")
NO_COMPATIBLE = "no compatible Compositions found"
NOT_FOUND = "cannot get Composition"
NOT_COMPATIBLE = "referenced composition is not compatible with this composite resource"


class SelectionError(Exception):
    """Crossplane's error for this composite: it selects no Composition and composes nothing."""


@dataclass(frozen=True)
class Shipped:
    """One Composition file of ``apis/`` and the Composition it holds."""

    path: Path
    body: Mapping[str, Any]

    @property
    def name(self) -> str:
        return str(self.body["metadata"]["name"])

    @property
    def labels(self) -> Mapping[str, str]:
        return self.body["metadata"].get("labels") or {}

    def composes(self, composite: Mapping[str, Any]) -> bool:
        """Whether its ``compositeTypeRef`` is the composite's apiVersion and kind."""
        ref = self.body["spec"]["compositeTypeRef"]
        return (ref["apiVersion"], ref["kind"]) == (composite["apiVersion"], composite["kind"])


def _documents(path: Path) -> list[dict[str, Any]]:
    return [doc for doc in yaml.safe_load_all(path.read_text()) if doc]


def shipped_compositions(*, namespaced: bool, root: Path = ROOT) -> list[Shipped]:
    """Every Composition of one form under ``apis/``: each API's own (``composition.yaml``)
    and the ones named in design documents (``compositions/<name>.yaml``), as a cluster has
    them with every file of the form installed."""
    paths = [*root.glob("apis/**/composition.yaml"), *root.glob("apis/**/compositions/*.yaml")]
    chosen = sorted(p for p in paths if (NAMESPACED in p.relative_to(root).parts) == namespaced)
    return [Shipped(path, doc) for path in chosen for doc in _documents(path)]


def definition_of(composite: Mapping[str, Any], *, root: Path = ROOT) -> dict[str, Any]:
    """The shipped XRD of the composite's kind, in the composite's form."""
    namespaced = bool((composite.get("metadata") or {}).get("namespace"))
    group, _, version = str(composite["apiVersion"]).rpartition("/")
    for path in sorted(root.glob("apis/**/definition.yaml")):
        if (NAMESPACED in path.relative_to(root).parts) != namespaced:
            continue
        (xrd,) = _documents(path)
        served = {v["name"] for v in xrd["spec"]["versions"] if v.get("served")}
        if (xrd["spec"]["group"], xrd["spec"]["names"]["kind"]) == (
            group,
            composite["kind"],
        ) and version in served:
            return xrd
    msg = f"no shipped XRD serves {composite['apiVersion']} {composite['kind']}"
    raise LookupError(msg)


#: The characters the API server appends to a ``generateName`` (k8s.io/apiserver
#: ``names.SimpleNameGenerator``, k8s.io/apimachinery ``util/rand.String``).
GENERATED_NAME_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"
#: What Crossplane never copies from a claim to its composite (the CLI leaves out the same).
NOT_COPIED_ANNOTATIONS = ("kubectl.kubernetes.io/last-applied-configuration",)


def generated_suffix(seed: str, length: int = 5) -> str:
    """A ``generateName`` suffix drawn from ``seed``, not at random: the same claim always
    gets the same composite name, so its renders are byte-identical."""
    digest = hashlib.sha256(seed.encode()).digest()
    return "".join(
        GENERATED_NAME_ALPHABET[b % len(GENERATED_NAME_ALPHABET)] for b in digest[:length]
    )


def composite_of_claim(claim: Mapping[str, Any], xrd: Mapping[str, Any]) -> dict[str, Any]:
    """The v1 composite Crossplane creates for ``claim``, as ``crossplane xr generate`` writes
    it (crossplane/cli v2.5 ``cmd/crossplane/xr/generate.go`` ``ConvertClaimToXR``): the
    claim's apiVersion, labels, annotations and spec (its composition fields included), the
    claim-name and claim-namespace labels and ``spec.claimRef``, named ``<claim>-<suffix>``.
    Two differences, both so a render is the same on every run: the kind is the XRD's
    ``names.kind`` (the CLI guesses ``X`` + the claim's kind unless given ``--kind``; wrong for
    ``EnvironmentClaim`` -> ``UnifiedEnvironment``), and the suffix is derived from the claim's
    namespace and name (:func:`generated_suffix`) instead of random."""
    metadata = claim.get("metadata") or {}
    name = str(metadata.get("name") or "claim")
    namespace = str(metadata.get("namespace") or "default")
    labels = {
        **(metadata.get("labels") or {}),
        "crossplane.io/claim-name": name,
        "crossplane.io/claim-namespace": namespace,
    }
    labels.pop("crossplane.io/composite", None)
    annotations = {
        k: v
        for k, v in (metadata.get("annotations") or {}).items()
        if k not in NOT_COPIED_ANNOTATIONS
    }
    composite_metadata: dict[str, Any] = {
        "name": f"{name}-{generated_suffix(f'{namespace}/{name}')}",
        "labels": labels,
    }
    if annotations:
        composite_metadata["annotations"] = annotations
    spec = copy.deepcopy(dict(claim.get("spec") or {}))
    spec["claimRef"] = {
        "apiVersion": claim["apiVersion"],
        "kind": claim["kind"],
        "name": name,
        "namespace": namespace,
    }
    return {
        "apiVersion": claim["apiVersion"],
        "kind": xrd["spec"]["names"]["kind"],
        "metadata": composite_metadata,
        "spec": spec,
    }


def with_reference(composite: Mapping[str, Any], reference: Mapping[str, Any]) -> dict[str, Any]:
    """``composite`` (v1 form) whose composition fields are ``reference``'s and no others."""
    out = copy.deepcopy(dict(composite))
    spec = out.setdefault("spec", {})
    for key in SELECTION_FIELDS:
        spec.pop(key, None)
    spec.update(copy.deepcopy(dict(reference)))
    return out


Reference = Mapping[str, Any] | None


def _selection(composite: Mapping[str, Any]) -> tuple[Reference, Reference]:
    """The composite's ``compositionRef`` and ``compositionSelector``, where its form keeps
    them: a namespaced composite under ``spec.crossplane``."""
    spec = composite.get("spec") or {}
    namespaced = bool((composite.get("metadata") or {}).get("namespace"))
    fields = (spec.get("crossplane") or {}) if namespaced else spec
    return fields.get("compositionRef"), fields.get("compositionSelector")


def select(
    composite: Mapping[str, Any], compositions: Iterable[Shipped], xrd: Mapping[str, Any]
) -> list[Shipped]:
    """The Compositions Crossplane may give ``composite`` (it takes one of them at random);
    :class:`SelectionError` with Crossplane's message when it gives none."""
    installed = list(compositions)
    ref, selector = _selection(composite)
    enforced = xrd["spec"].get("enforcedCompositionRef")
    if enforced:
        ref = enforced
    elif ref is None and selector is None and xrd["spec"].get("defaultCompositionRef"):
        ref = xrd["spec"]["defaultCompositionRef"]
    if ref is not None:
        named = [c for c in installed if c.name == ref.get("name")]
        if not named:
            msg = f'{NOT_FOUND}: compositions.apiextensions.crossplane.io "{ref.get("name")}"'
            raise SelectionError(msg)
        if not named[0].composes(composite):
            raise SelectionError(NOT_COMPATIBLE)
        return named
    labels = (selector or {}).get("matchLabels") or {}
    candidates = [
        c
        for c in installed
        if all(c.labels.get(k) == v for k, v in labels.items()) and c.composes(composite)
    ]
    if not candidates:
        raise SelectionError(NO_COMPATIBLE)
    return candidates
