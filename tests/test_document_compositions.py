"""A claim written from a design document reaches this function's pipeline (issue 32 item 5).

The documents name Compositions this repository did not ship: the contact-center claim's
``compositionRef`` (``contactcenter-endpoint-aws-us-east-1``), the environment document's
Composition (``unifiedenvironment.aws.platform.acme.com``, label ``provider: aws``, which a
claim names or selects) and the asya chart's ``asyncactor-sqs`` (the default every composite it
made carries). Crossplane resolves a reference only to a Composition of that name or labels,
so ``tools/generate_apis.py`` ships each as a copy of the module's own Composition
(``apis/<module>/compositions/<name>.yaml`` and the namespaced twin). These tests apply
Crossplane v2.4's selection rules (``tests/support/composition_selection.py``, which cites
them) to the shipped files, with each document's reference taken verbatim from
``tests/fixtures/design-documents/``; ``tests/test_e2e_render.py`` renders the same
references (``reference:`` in ``tests/render-cases/``).
"""

from __future__ import annotations

import copy
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml
from fnplatform.api.step_input import Input
from fnplatform.api.xrd import ApiDefinition, CompositionAlias

from tests.support.composition_selection import (
    NO_COMPATIBLE,
    NOT_COMPATIBLE,
    NOT_FOUND,
    SelectionError,
    composite_of_claim,
    definition_of,
    select,
    shipped_compositions,
    with_reference,
)
from tests.support.namespaced import namespaced_composite
from tests.support.schemas import Catalog
from tests.support.tools import load_tool

ROOT = Path(__file__).resolve().parent.parent
FIXTURES = ROOT / "tests" / "fixtures" / "design-documents"
EXAMPLES = ROOT / "examples"


generate = load_tool("generate_apis")
render_tool = load_tool("render_examples")
APIS: dict[str, ApiDefinition] = generate.module_apis()


def _doc(path: Path) -> dict[str, Any]:
    (doc,) = [d for d in yaml.safe_load_all(path.read_text()) if d]
    return dict(doc)


# ---- what the documents say, read from the verbatim copies --------------------------------

#: contact-center.txt, "4. Claim Creation and Resource Binding".
CC_CLAIM = _doc(FIXTURES / "contact-center" / "claim-us-east-agent-cluster.yaml")
#: unified-environment.txt, "Phase 2: Implementing the Provisioning Logic with a Composition".
UE_COMPOSITION = _doc(FIXTURES / "unified-environment" / "composition.yaml")
#: asyncactor-crossplane.txt, "Example AsyncActor Claim".
AA_CLAIM = _doc(FIXTURES / "asyncactor-crossplane" / "claim-text-processor.yaml")
#: asyncactor-crossplane.txt, "Architecture": "Composition (asyncactor-sqs)".
_AA_TEXT = (FIXTURES / "asyncactor-crossplane" / "composition-name.txt").read_text()
AA_COMPOSITION = re.findall(r"Composition \(([a-z0-9-]+)\)", _AA_TEXT)[0]

#: Every composition reference a claim written from a document carries, in the v1 form.
DOCUMENT_REFERENCES: dict[str, dict[str, Any]] = {
    "contact-center claim's compositionRef": {"compositionRef": CC_CLAIM["spec"]["compositionRef"]},
    "environment Composition by name": {
        "compositionRef": {"name": UE_COMPOSITION["metadata"]["name"]}},
    "environment Composition by label": {
        "compositionSelector": {"matchLabels": UE_COMPOSITION["metadata"]["labels"]}},
    "asya chart's default Composition": {"compositionRef": {"name": AA_COMPOSITION}},
}  # fmt: skip


def _claim(name: str) -> dict[str, Any]:
    return _doc(EXAMPLES / name)


#: (reference, the composite a user has, the Composition file Crossplane must select). The
#: contact-center claim and the environment document's (implied) claim fail for reasons of their
#: own (their shape: other items of issue 32), so their references ride on the shipped claim
#: that is the document's claim in this API's shape.
CASES: list[tuple[str, Callable[[], dict[str, Any]], str]] = [
    ("contact-center claim's compositionRef",
     lambda: _claim("contact-center/claim-us-east-agent-cluster.yaml"),
     "contact-center/compositions/contactcenter-endpoint-aws-us-east-1.yaml"),
    ("environment Composition by name", lambda: _claim("environment/claim-aws.yaml"),
     "environment/compositions/unifiedenvironment.aws.platform.acme.com.yaml"),
    ("environment Composition by label", lambda: _claim("environment/claim-aws.yaml"),
     "environment/compositions/unifiedenvironment.aws.platform.acme.com.yaml"),
    ("asya chart's default Composition", lambda: copy.deepcopy(AA_CLAIM),
     "async-actor/compositions/asyncactor-sqs.yaml"),
]  # fmt: skip
FORMS = [False, True]
FORM_IDS = ["v1", "namespaced"]


def _in_form(path: str, namespaced: bool) -> Path:
    """``apis/<module>/<rest>`` of one form."""
    module, _, rest = path.partition("/")
    return ROOT / "apis" / module / ("namespaced" if namespaced else "") / rest


def _composite(
    claim: dict[str, Any], reference: dict[str, Any] | None, namespaced: bool
) -> dict[str, Any]:
    """The composite of ``claim`` carrying ``reference`` (None: as the claim is), in a form:
    the v1 composite Crossplane makes of the claim, or the namespaced composite its user
    writes instead (the reference under ``spec.crossplane``)."""
    (api,) = [
        a
        for a in APIS.values()
        if (a.api_version, a.claim_kind) == (claim["apiVersion"], claim["kind"])
    ]
    xrd = api.to_xrd()
    composite = composite_of_claim(claim, xrd)
    if reference is not None:
        composite = with_reference(composite, reference)
    return namespaced_composite(composite) if namespaced else composite


def _selected(composite: dict[str, Any], namespaced: bool) -> list[Path]:
    installed = shipped_compositions(namespaced=namespaced)
    return [c.path for c in select(composite, installed, definition_of(composite))]


# ---- (a) each document's reference resolves to exactly the shipped Composition -------------


@pytest.mark.parametrize("namespaced", FORMS, ids=FORM_IDS)
@pytest.mark.parametrize(("reference", "claim", "expected"), CASES, ids=[c[0] for c in CASES])
def test_the_documents_reference_selects_exactly_the_shipped_composition(
    reference: str, claim: Callable[[], dict[str, Any]], expected: str, namespaced: bool
) -> None:
    """With every Composition of the form installed, Crossplane can pick only one: the
    document's, which composes the claim's kind."""
    composite = _composite(claim(), DOCUMENT_REFERENCES[reference], namespaced)
    assert _selected(composite, namespaced) == [_in_form(expected, namespaced)]


@pytest.mark.parametrize("namespaced", FORMS, ids=FORM_IDS)
@pytest.mark.parametrize(("reference", "claim", "expected"), CASES, ids=[c[0] for c in CASES])
def test_without_the_documents_composition_crossplane_selects_nothing(
    reference: str, claim: Callable[[], dict[str, Any]], expected: str, namespaced: bool
) -> None:
    """Why it ships: with only the module's own Composition installed the document's claim
    stops at Crossplane's selection (the function is never called)."""
    composite = _composite(claim(), DOCUMENT_REFERENCES[reference], namespaced)
    own = [
        c for c in shipped_compositions(namespaced=namespaced) if "compositions" not in c.path.parts
    ]
    with pytest.raises(SelectionError, match=f"{NOT_FOUND}|{NO_COMPATIBLE}"):
        select(composite, own, definition_of(composite))


@pytest.mark.parametrize("namespaced", FORMS, ids=FORM_IDS)
def test_the_async_actor_documents_claim_as_written_gets_the_modules_own_composition(
    namespaced: bool,
) -> None:
    """The document's claim names no Composition (its chart set the XRD's default): this
    XRD's defaultCompositionRef gives it the module's own, even with asyncactor-sqs installed
    beside it, where Crossplane would otherwise pick one of the two at random."""
    composite = _composite(copy.deepcopy(AA_CLAIM), None, namespaced)
    assert _selected(composite, namespaced) == [
        _in_form("async-actor/composition.yaml", namespaced)
    ]
    undefaulted = definition_of(composite)
    del undefaulted["spec"]["defaultCompositionRef"]
    both = select(composite, shipped_compositions(namespaced=namespaced), undefaulted)
    assert {c.name for c in both} == {"xasyncactors.asya.sh", AA_COMPOSITION}


def test_the_documents_name_what_this_repository_ships() -> None:
    """The documents' Compositions are of this repository's composite types, so their names
    and labels, not their kinds, are all a claim needs."""
    assert UE_COMPOSITION["spec"]["compositeTypeRef"] == {
        "apiVersion": APIS["environment"].api_version,
        "kind": APIS["environment"].kind,
    }
    assert (CC_CLAIM["kind"], AA_CLAIM["kind"]) == (
        APIS["contact-center"].claim_kind,
        APIS["async-actor"].claim_kind,
    )
    assert AA_CLAIM["apiVersion"] == APIS["async-actor"].api_version
    # The contact-center claim's apiVersion is the group without its version: Kubernetes reads
    # it as a version of the core group and finds no such kind (the claim must say
    # contact-center.infra/v1alpha1), and no Composition's compositeTypeRef matches it.
    assert CC_CLAIM["apiVersion"] == APIS["contact-center"].group
    with pytest.raises(LookupError):
        definition_of(
            {"apiVersion": CC_CLAIM["apiVersion"], "kind": "ContactCenterEndpoint", "metadata": {}}
        )


def test_a_reference_to_a_composition_of_another_kind_is_refused() -> None:
    """The rules the tests rely on refuse what Crossplane refuses (a v1 composite)."""
    composite = _composite(
        _claim("environment/claim-aws.yaml"),
        DOCUMENT_REFERENCES["contact-center claim's compositionRef"],
        False,
    )
    with pytest.raises(SelectionError, match=NOT_COMPATIBLE):
        _selected(composite, False)
    unmatched = with_reference(
        composite, {"compositionSelector": {"matchLabels": {"provider": "gcp"}}}
    )
    with pytest.raises(SelectionError, match=NO_COMPATIBLE):
        _selected(unmatched, False)


# ---- the shipped aliases: the module's own Composition, renamed ----------------------------

ALIASES: list[tuple[str, CompositionAlias]] = [
    (api_id, alias) for api_id, api in sorted(APIS.items()) for alias in api.aliases
]


def test_every_document_reference_has_an_alias() -> None:
    names = {alias.name for _, alias in ALIASES}
    assert {
        CC_CLAIM["spec"]["compositionRef"]["name"],
        UE_COMPOSITION["metadata"]["name"],
        AA_COMPOSITION,
    } == names


@pytest.mark.parametrize("namespaced", FORMS, ids=FORM_IDS)
@pytest.mark.parametrize(("api_id", "alias"), ALIASES, ids=[a.name for _, a in ALIASES])
def test_an_alias_is_the_modules_composition_under_the_documents_name_and_labels(
    api_id: str, alias: CompositionAlias, namespaced: bool, catalog: Catalog
) -> None:
    folder = ROOT / "apis" / api_id / ("namespaced" if namespaced else "")
    own = _doc(folder / "composition.yaml")
    shipped = _doc(folder / "compositions" / f"{alias.name}.yaml")
    assert shipped["metadata"] == {
        "name": alias.name,
        "labels": {**own["metadata"]["labels"], **alias.labels},
    }
    assert {k: v for k, v in shipped.items() if k != "metadata"} == {
        k: v for k, v in own.items() if k != "metadata"
    }
    assert catalog.validate(shipped) == []
    (step,) = shipped["spec"]["pipeline"]
    assert Input.model_validate(step["input"]).module == api_id.partition("/")[0]


def test_the_live_install_and_the_readme_install_only_each_apis_own_composition() -> None:
    """The aliases are optional (installed where claims name them): ``apis/**/composition.yaml``,
    what the README's install steps and the live test apply, does not match them."""
    own = sorted(ROOT.glob("apis/**/composition.yaml"))
    assert not [p for p in own if "compositions" in p.parts]
    assert len([p for p in own if "namespaced" not in p.parts]) == 8


# ---- (b) the render cases render exactly the documents' references -------------------------

REFERENCED = [c for c in render_tool.load_cases() if c.reference is not None]


def test_render_cases_render_each_documents_reference() -> None:
    """``tests/render-cases`` render every document reference (both forms), each one a
    document gives, verbatim, not a copy that could drift."""
    assert sorted(REFERENCED, key=lambda c: c.id)  # found
    rendered = [c.reference for c in REFERENCED if not c.namespaced]
    assert all(reference in DOCUMENT_REFERENCES.values() for reference in rendered)
    # every reference but the environment Composition's name (the same file as its label)
    assert len({yaml.safe_dump(r) for r in rendered}) == len(DOCUMENT_REFERENCES) - 1


@pytest.mark.parametrize("case", REFERENCED, ids=[c.id for c in REFERENCED])
def test_a_referenced_render_case_renders_with_the_composition_crossplane_selects(
    case: Any, tmp_path: Path
) -> None:
    """The render tool hands the CLI the Composition the rules select for the case's
    composite as rendered, and that composite carries the document's reference."""
    xr_path, _ = case.inputs(tmp_path)
    composite = _doc(xr_path)
    assert _selected(composite, case.namespaced) == [case.composition]
    assert "compositions" in case.composition.parts


def _comparable(golden: Path) -> list[str]:
    """A golden's documents without Crossplane's composition fields (set by the engine to the
    Composition rendered with) and with the engine's events in a stable order (it records
    them in Go map order: "Composed resource ... is not yet ready")."""
    documents = [d for d in yaml.safe_load_all(golden.read_text()) if d]
    events, resources = [], []
    for doc in documents:
        spec = doc.get("spec") if isinstance(doc.get("spec"), dict) else {}
        for fields in (spec, spec.get("crossplane") or {}):
            for key in ("compositionRef", "compositionSelector"):
                fields.pop(key, None)
        if doc.get("kind") == "Result":
            if doc.get("reason") != "SelectComposition":
                events.append(yaml.safe_dump(doc))
        else:
            resources.append(yaml.safe_dump(doc))
    return resources + sorted(events)


def _base_case(case: Any) -> Any:
    """The unreferenced case of the same inputs, if there is one."""
    same = [
        c
        for c in render_tool.load_cases()
        if c.reference is None
        and (c.module, c.form, c.xr, c.environment, c.observed, c.required)
        == (case.module, case.form, case.xr, case.environment, case.observed, case.required)
    ]
    return same[0] if same else None


BASED = [c for c in REFERENCED if _base_case(c) is not None]


@pytest.mark.parametrize("case", BASED, ids=[c.id for c in BASED])
def test_the_documents_composition_renders_what_the_modules_own_does(case: Any) -> None:
    """Same pipeline, same output: the golden of a referenced case is its unreferenced twin's
    but for the composition the composite names."""
    assert _comparable(case.golden) == _comparable(_base_case(case).golden)


def test_the_async_actor_documents_composite_is_its_claims() -> None:
    """The render case's composite is the verbatim claim's: its spec, claim labels, kind."""
    xr = _doc(ROOT / "tests" / "render-cases" / "async-actor" / "xr-document-text-processor.yaml")
    assert (xr["apiVersion"], xr["kind"]) == (AA_CLAIM["apiVersion"], APIS["async-actor"].kind)
    assert {k: v for k, v in xr["spec"].items() if k != "claimRef"} == AA_CLAIM["spec"]
    assert xr["metadata"]["labels"] == {
        "crossplane.io/claim-name": AA_CLAIM["metadata"]["name"],
        "crossplane.io/claim-namespace": AA_CLAIM["metadata"]["namespace"],
    }


@pytest.mark.parametrize("case", REFERENCED, ids=[c.id for c in REFERENCED])
def test_the_golden_shows_the_documents_composition_composing(case: Any) -> None:
    """The render engine composed with the document's Composition: the composite names it, or
    the engine's event says it selected it (for a selector)."""
    name = case.composition.stem
    text = case.golden.read_text()
    assert (
        f"compositionRef:\n{'  ' * (3 if case.namespaced else 2)}name: {name}\n" in text
        or f"'Successfully selected composition: {name}'" in text
    )
