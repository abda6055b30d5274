"""The multi-cloud cluster document's selectors, ported as written, select what the shipped ones do.

The document's own Composition (section "The Composition",
``tests/fixtures/design-documents/multi-cloud-cluster-python.composition.txt``, verbatim) picks
EnvironmentConfigs by ``metadata.labels[cloud]`` and ``metadata.labels[planeType]``: Crossplane's
field-path syntax. A user porting it keeps those paths in this function's step input. Here the
shipped cluster Composition gets the document's paths in place of its own dotted ones, and
every shipped cluster XR (``examples/cluster/``, both forms) is composed over gRPC against the
shipped EnvironmentConfigs, selected as Crossplane selects required resources: the response is
byte for byte the shipped Composition's.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.support.harness import FunctionClient, Rendered, request

ROOT = Path(__file__).resolve().parent.parent
DOCUMENT = ROOT / "tests/fixtures/design-documents/multi-cloud-cluster-python.composition.txt"
CONTEXT_KEY = "apiextensions.crossplane.io/environment"
CONFIGS = [
    yaml.safe_load(p.read_text())
    for p in sorted((ROOT / "examples/cluster/platform").glob("environment-*.yaml"))
]
FORMS = {  # composition, and the XRs a user applies with it
    "cluster-scoped": ("apis/cluster/composition.yaml", "examples/cluster/xr-*.yaml"),
    "namespaced": (
        "apis/cluster/namespaced/composition.yaml",
        "examples/cluster/namespaced/xr-*.yaml",
    ),
}
CASES = [
    (form, xr.relative_to(ROOT).as_posix())
    for form, (_, pattern) in FORMS.items()
    for xr in sorted(ROOT.glob(pattern))
]


def document_selectors() -> dict[str, str]:
    """Label key -> ``valueFromFieldPath`` of each ``FromCompositeFieldPath`` matcher of the
    document's Composition. Its text lost the YAML indentation, so it is read line by line."""
    lines = [line.strip() for line in DOCUMENT.read_text().splitlines()]
    return {
        line.removeprefix("- key: "): lines[at + 2].removeprefix("valueFromFieldPath: ")
        for at, line in enumerate(lines)
        if line.startswith("- key: ") and lines[at + 1] == "type: FromCompositeFieldPath"
    }


def step_input(composition: str, selectors: dict[str, str] | None = None) -> dict[str, Any]:
    """The shipped Composition's step input; with ``selectors``, each label read from the
    composite is read from the document's path for that label instead."""
    document = yaml.safe_load((ROOT / composition).read_text())
    step = copy.deepcopy(document["spec"]["pipeline"][0]["input"])
    replaced = set()
    for source in step["environment"]:
        for label, value in (source.get("matchLabels") or {}).items():
            if "fromFieldPath" in value and label in (selectors or {}):
                value["fromFieldPath"] = (selectors or {})[label]
                replaced.add(label)
    assert replaced == set(selectors or {}), "every document selector has a shipped twin"
    return step


def fetch(requirements: dict[str, dict[str, Any]]) -> dict[str, list[dict[str, Any]]]:
    """What Crossplane fetches for ``requirements`` from the shipped EnvironmentConfigs."""
    found = {}
    for key, selector in requirements.items():
        configs = [
            c
            for c in CONFIGS
            if (c["apiVersion"], c["kind"]) == (selector["apiVersion"], selector["kind"])
        ]
        if "matchName" in selector:
            found[key] = [c for c in configs if c["metadata"]["name"] == selector["matchName"]]
        else:
            wanted = selector["matchLabels"]["labels"].items()
            found[key] = [
                c for c in configs if wanted <= (c["metadata"].get("labels") or {}).items()
            ]
    return found


def compose(
    client: FunctionClient, composite: dict[str, Any], step: dict[str, Any]
) -> tuple[Rendered, dict[str, list[dict[str, Any]]]]:
    """Call as Crossplane does: again with what the requirements fetch, until they settle."""
    rendered, fetched = client.run(request(composite, step)), None
    for _ in range(4):
        if fetched is not None and set(fetched) == set(rendered.requirements):
            break
        fetched = fetch(rendered.requirements)
        rendered = client.run(request(composite, step, required=fetched))
    assert fetched is not None
    return rendered, fetched


def test_the_document_selects_with_crossplane_bracket_paths() -> None:
    """What the fixture holds: the paths this test is about (bracketed, unlike the shipped)."""
    assert document_selectors() == {
        "cloud": "metadata.labels[cloud]",
        "planeType": "metadata.labels[planeType]",
    }


@pytest.mark.parametrize(("form", "xr"), CASES, ids=[xr for _, xr in CASES])
def test_the_document_selectors_select_what_the_shipped_ones_do(client, form, xr) -> None:
    composite = yaml.safe_load((ROOT / xr).read_text())
    composition = FORMS[form][0]
    shipped, shipped_fetched = compose(client, composite, step_input(composition))
    ported, ported_fetched = compose(
        client, composite, step_input(composition, document_selectors())
    )
    assert ported.fatal == shipped.fatal == []
    assert ported_fetched == shipped_fetched
    assert ported.response.SerializeToString(
        deterministic=True
    ) == shipped.response.SerializeToString(deterministic=True)
    # The selections the document's paths make: the composite's labels, and what they match.
    labels = composite["metadata"]["labels"]
    selected = {
        label: (selector["matchLabels"]["labels"][label], ported_fetched[key])
        for key, selector in ported.requirements.items()
        for label in ("cloud", "planeType")
        if label in (selector.get("matchLabels") or {}).get("labels", {})
    }
    assert {label: value for label, (value, _) in selected.items()} == {
        "cloud": labels["cloud"],
        "planeType": labels["planeType"],
    }
    assert [c["metadata"]["name"] for c in selected["cloud"][1]] == [f"cloud-{labels['cloud']}"]
    planes = [c["metadata"]["name"] for c in selected["planeType"][1]]
    assert planes == (["plane-production"] if labels["planeType"] == "production" else [])
    if planes:
        assert ported.context[CONTEXT_KEY]["tags"]["plane-type"] == "production"
