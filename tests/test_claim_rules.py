"""The claim rules (``fnplatform.api.xrd.ClaimRule``): the XRDs' CEL rules are well-formed and
refuse each bad claim of ``tests/support/admission.py`` with their message, as the function's
own check does (celpy stands in for the API server; tests/live/test_live_admission.py asks the
real one, tests/test_e2e_admission.py ``crossplane resource validate``)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import celpy
import pytest
import yaml
from fnplatform.api.validation import parse
from fnplatform.api.xrd import PARAMETERS, nested_parameters_reason
from fnplatform.errors import InputError

from tests.support.admission import BAD_CLAIMS, BadClaim
from tests.support.schemas import Catalog, CRDVersion
from tools.generate_apis import module_apis

APIS = module_apis()


def _rules(node: Any) -> Iterator[dict[str, Any]]:
    if isinstance(node, dict):
        yield from node.get("x-kubernetes-validations", [])
        for value in node.values():
            yield from _rules(value)
    elif isinstance(node, list):
        for value in node:
            yield from _rules(value)


def _catalog(module: str) -> Catalog:
    api = APIS[module]
    schema = api.to_xrd()["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    return Catalog(
        [
            CRDVersion(
                api.group,
                api.version,
                api.claim_kind,
                api.claim_plural,
                "Namespaced",
                True,
                True,
                False,
                None,
                schema,
            )
        ]
    )


@pytest.mark.parametrize("module", sorted(APIS))
def test_every_rule_compiles_and_names_its_field(module: str) -> None:
    rules = list(_rules(APIS[module].to_xrd()))
    assert rules, f"{module}: no claim rules"
    for rule in rules:
        celpy.Environment().compile(rule["rule"])
        field = rule["fieldPath"].lstrip(".")
        assert rule["message"].startswith((field, f"spec.{field}")), rule


@pytest.mark.parametrize("bad", BAD_CLAIMS, ids=lambda b: b.id)
def test_the_rule_refuses_the_bad_claim_as_the_function_does(bad: BadClaim) -> None:
    claim = bad.claim()
    errors = _catalog(bad.module).validate(claim)
    assert any(bad.words in e for e in errors), errors
    spec = {
        k: v
        for k, v in claim["spec"].items()
        if k not in ("compositionRef", "writeConnectionSecretToRef")
    }
    api = APIS[bad.module]
    if PARAMETERS in spec and PARAMETERS not in api.spec_model.model_fields:
        # The function's own check of the v1 shape (function/composite.py), same words.
        ours = sorted(k for k in spec[PARAMETERS] if k in api.spec_model.model_fields)
        assert ours, spec
        assert "up one level" in nested_parameters_reason(api.kind, ours)
        return
    with pytest.raises(InputError) as raised:
        parse(api.spec_model, spec, "spec")
    assert f"{bad.field}: " in str(raised.value), raised.value
    assert bad.words in str(raised.value), raised.value


#: The bad claims made from a shipped example (the design document's claim is bad as written).
FROM_EXAMPLES = [b for b in BAD_CLAIMS if "fixtures" not in b.source.parts]


@pytest.mark.parametrize("bad", FROM_EXAMPLES, ids=lambda b: b.id)
def test_the_example_the_bad_claim_changes_passes(bad: BadClaim) -> None:
    claim = yaml.safe_load(bad.source.read_text())
    errors = [
        e
        for e in _catalog(bad.module).validate(claim)
        if "x-kubernetes-validations" in e or bad.words in e
    ]
    assert not errors, errors
