"""The API files agree with the pydantic models they are generated from, and with each other.

* ``apis/*/definition.yaml`` and the Input CRD are exactly what ``tools/generate_apis.py`` writes;
* the XRD's spec schema accepts and rejects the same specs the composer's model does;
* the XRDs, Input CRD and Compositions are valid against Crossplane's own CRDs;
* every Composition's step input parses with ``fnplatform.api.step_input.Input`` and its CRD;
* every example XR and claim is accepted by both the model and the XRD schema.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
import yaml
from fnplatform.api.step_input import Input
from fnplatform.api.xrd import ApiDefinition
from jsonschema import Draft4Validator
from pydantic import BaseModel, ValidationError

from tests.support.schemas import Catalog, translate_schema
from tests.support.tools import load_tool

ROOT = Path(__file__).resolve().parent.parent


generate = load_tool("generate_apis")
APIS: dict[str, ApiDefinition] = generate.module_apis()
COMPOSITIONS = sorted(ROOT.glob("apis/**/composition.yaml"))
# Spec fields Crossplane adds to every composite/claim CRD itself (not part of our schemas).
CROSSPLANE_SPEC_FIELDS = frozenset({
    "claimRef", "compositionRef", "compositionRevisionRef", "compositionRevisionSelector",
    "compositionSelector", "compositionUpdatePolicy", "crossplane", "environmentConfigRefs",
    "publishConnectionDetailsTo", "resourceRef", "resourceRefs", "writeConnectionSecretToRef",
})  # fmt: skip


def _yaml_docs(path: Path) -> list[dict[str, Any]]:
    return [doc for doc in yaml.safe_load_all(path.read_text()) if doc]


def _spec_validator(api: ApiDefinition) -> Draft4Validator:
    """A JSON Schema validator of ``spec`` as the API server would apply the XRD."""
    return Draft4Validator(translate_schema(api.spec_schema()))


def _model_accepts(model: type[BaseModel], data: Any) -> bool:
    try:
        model.model_validate(data)
    except ValidationError:
        return False
    return True


def test_cluster_api_is_found() -> None:
    assert "cluster" in APIS


@pytest.mark.parametrize("relative", sorted(generate.generated_files()), ids=str)
def test_generated_file_is_up_to_date(relative: Path) -> None:
    expected = generate.generated_files()[relative]
    path = ROOT / relative
    assert path.exists(), f"{relative} missing: run python tools/generate_apis.py"
    assert path.read_text() == expected, f"{relative} stale: run python tools/generate_apis.py"


@pytest.mark.parametrize("namespaced", [False, True], ids=["v1", "namespaced"])
@pytest.mark.parametrize("module", sorted(APIS))
def test_xrd_is_a_valid_crossplane_xrd(module: str, namespaced: bool, catalog: Catalog) -> None:
    xrd = APIS[module].to_xrd(namespaced=namespaced)
    assert catalog.validate(xrd) == []
    assert xrd["metadata"]["name"] == f"{xrd['spec']['names']['plural']}.{xrd['spec']['group']}"


@pytest.mark.parametrize("module", sorted(APIS))
def test_namespaced_xrd_is_the_v1_api_as_a_namespaced_composite(module: str) -> None:
    v1, v2 = APIS[module].to_xrd(), APIS[module].to_xrd(namespaced=True)
    assert v2["apiVersion"] == "apiextensions.crossplane.io/v2"
    assert v2["spec"]["scope"] == "Namespaced" and "claimNames" not in v2["spec"]
    assert (v2["metadata"], v2["spec"]["names"], v2["spec"]["versions"]) == (
        v1["metadata"],
        v1["spec"]["names"],
        v1["spec"]["versions"],
    )
    on_disk = ROOT / "apis" / module / "namespaced"
    assert _yaml_docs(on_disk / "definition.yaml") == [v2]
    if (ROOT / "apis" / module / "composition.yaml").exists():
        (composition,) = _yaml_docs(on_disk / "composition.yaml")
        (original,) = _yaml_docs(ROOT / "apis" / module / "composition.yaml")
        assert composition["spec"]["compositeTypeRef"] == original["spec"]["compositeTypeRef"]


@pytest.mark.parametrize("namespaced", [False, True], ids=["v1", "namespaced"])
@pytest.mark.parametrize("module", sorted(APIS))
def test_xrd_defaults_to_the_modules_own_composition(module: str, namespaced: bool) -> None:
    """A composite naming no Composition gets the one shipped beside its XRD, so installing
    another Composition of its type (a design document's alias) never changes what it gets."""
    folder = ROOT / "apis" / module / ("namespaced" if namespaced else "")
    (xrd,) = _yaml_docs(folder / "definition.yaml")
    (composition,) = _yaml_docs(folder / "composition.yaml")
    assert xrd["spec"]["defaultCompositionRef"] == {"name": composition["metadata"]["name"]}
    ref = composition["spec"]["compositeTypeRef"]
    assert (ref["apiVersion"], ref["kind"]) == (APIS[module].api_version, APIS[module].kind)


@pytest.mark.parametrize("module", sorted(APIS))
def test_xrd_schema_is_structural(module: str) -> None:
    """Kubernetes rejects schemas with refs or untyped nodes that do not preserve fields."""

    def walk(node: dict[str, Any], path: str) -> list[str]:
        problems = [f"{path}: {k}" for k in ("$ref", "anyOf", "oneOf", "allOf") if k in node]
        if "type" not in node and not node.get("x-kubernetes-preserve-unknown-fields"):
            problems.append(f"{path}: no type")
        for name, sub in (node.get("properties") or {}).items():
            problems += walk(sub, f"{path}.{name}")
        for key in ("items", "additionalProperties"):
            if isinstance(node.get(key), dict):
                problems += walk(node[key], f"{path}[{key}]")
        return problems

    schema = APIS[module].to_xrd()["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    assert walk(schema, "") == []


def _example_specs(folder: str) -> list[tuple[str, Any]]:
    """Specs of every example XR or claim of the API at ``apis/<folder>``, found by kind
    anywhere under ``examples/<module>`` (a multi-API module keeps several kinds there)."""
    api = APIS[folder]
    kinds = {(api.api_version, api.kind), (api.api_version, api.claim_kind)}
    out = []
    for path in sorted((ROOT / "examples" / folder.partition("/")[0]).rglob("*.yaml")):
        for doc in _yaml_docs(path):
            if not isinstance(doc, dict) or (doc.get("apiVersion"), doc.get("kind")) not in kinds:
                continue
            spec = doc.get("spec", {})
            ours = {k: v for k, v in spec.items() if k not in CROSSPLANE_SPEC_FIELDS}
            out.append((path.name, ours))
    return out


@pytest.mark.parametrize("module", sorted(APIS))
def test_examples_pass_model_and_xrd(module: str) -> None:
    api = APIS[module]
    specs = _example_specs(module)
    assert specs, f"examples/{module.partition('/')[0]} has no XR or claim of {APIS[module].kind}"
    validator = _spec_validator(api)
    for name, spec in specs:
        assert _model_accepts(api.spec_model, spec), name
        assert list(validator.iter_errors(spec)) == [], name


def _cluster_spec() -> dict[str, Any]:
    return yaml.safe_load((ROOT / "examples" / "cluster" / "xr-gcp.yaml").read_text())["spec"]


def _mutations() -> list[tuple[str, Any]]:
    """Cluster specs, some valid, some not: model and XRD must give the same verdict."""
    cases: list[tuple[str, Any]] = [("example", lambda s: s)]

    def setter(path: list[str], value: Any) -> Any:
        def apply(spec: dict[str, Any]) -> dict[str, Any]:
            node = spec
            for key in path[:-1]:
                node = node.setdefault(key, {})
            node[path[-1]] = value
            return spec

        return apply

    cases += [
        ("no forProvider", lambda s: {k: v for k, v in s.items() if k != "forProvider"}),
        ("empty location", setter(["forProvider", "location"], "")),
        ("bad domain", setter(["parameters", "domain"], "Not A Domain")),
        ("good domain", setter(["parameters", "domain"], "a.example.com")),
        ("bad version", setter(["parameters", "kubernetesVersion"], "v1.33")),
        ("negative min", setter(["pools", "general", "autoscaling", "minNodeCount"], -1)),
        ("huge max", setter(["pools", "general", "autoscaling", "maxNodeCount"], 5000)),
        ("string count", setter(["pools", "general", "autoscaling", "minNodeCount"], "two")),
        ("unknown parameter", setter(["parameters", "colour"], "blue")),
        ("bad import mode", setter(["parameters", "import", "mode"], "steal")),
        ("import entry", setter(["parameters", "import", "resources", "network"], {
            "externalName": "vpc-1"})),
        ("empty external name", setter(["parameters", "import", "resources", "network"], {
            "externalName": ""})),
        ("tag not string", setter(["parameters", "tags", "team"], 7)),
        ("empty machine type", setter(["pools", "general", "nodeConfig", "machineType"], "")),
    ]  # fmt: skip
    return [(name, mutate(copy.deepcopy(_cluster_spec()))) for name, mutate in cases]


@pytest.mark.parametrize(("name", "spec"), _mutations(), ids=[n for n, _ in _mutations()])
def test_cluster_xrd_and_model_agree(name: str, spec: Any) -> None:
    """Where the XRD can express a rule, it gives the model's verdict (one direction each)."""
    api = APIS["cluster"]
    model_ok = _model_accepts(api.spec_model, spec)
    schema_ok = not list(_spec_validator(api).iter_errors(spec))
    assert model_ok == schema_ok, f"{name}: model {model_ok}, XRD {schema_ok}"


def test_input_crd_matches_model(catalog: Catalog) -> None:
    crd = generate.input_crd()
    schema = crd["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    aliases = {f.alias or n for n, f in Input.model_fields.items()}
    assert set(schema["properties"]) == aliases | {"metadata"}
    assert set(schema["required"]) == {
        f.alias or n for n, f in Input.model_fields.items() if f.is_required()
    }
    assert schema["properties"]["module"]["enum"] == list(generate.MODULES)
    assert crd["metadata"]["name"] == "inputs.platform.fn.crossplane.io"


@pytest.mark.parametrize("path", COMPOSITIONS, ids=lambda p: str(p.parent.relative_to(ROOT)))
def test_composition_step_input_is_valid(path: Path, catalog: Catalog) -> None:
    (composition,) = _yaml_docs(path)
    assert catalog.validate(composition) == []
    assert composition["spec"]["mode"] == "Pipeline"
    steps = composition["spec"]["pipeline"]
    ours = [s for s in steps if s["functionRef"]["name"] == "function-platform"]
    assert len(ours) == 1
    step_input = ours[0]["input"]
    parsed = Input.model_validate(step_input)
    folder = path.parent.relative_to(ROOT / "apis").as_posix()  # <module>[/<api>][/namespaced]
    folder = folder.removesuffix("/namespaced")
    assert parsed.module == folder.split("/")[0]
    crd_schema = generate.input_crd()["spec"]["versions"][0]["schema"]["openAPIV3Schema"]
    assert list(Draft4Validator(translate_schema(crd_schema)).iter_errors(step_input)) == []
    if folder in APIS:
        api = APIS[folder]
        ref = composition["spec"]["compositeTypeRef"]
        assert (ref["apiVersion"], ref["kind"]) == (api.api_version, api.kind)


def test_functions_example_is_development_runtime() -> None:
    (function,) = _yaml_docs(ROOT / "examples" / "functions.yaml")
    assert function["kind"] == "Function"
    assert function["metadata"]["name"] == "function-platform"
    assert function["metadata"]["annotations"]["render.crossplane.io/runtime"] == "Development"


def test_package_metadata() -> None:
    (meta,) = _yaml_docs(ROOT / "package" / "crossplane.yaml")
    assert meta["apiVersion"] == "meta.pkg.crossplane.io/v1"
    assert meta["kind"] == "Function"
    assert meta["metadata"]["name"] == "function-platform"
    assert not meta["spec"].get("dependsOn")
