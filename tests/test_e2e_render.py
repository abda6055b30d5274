"""End-to-end proof: the real Crossplane CLI renders every example through this function.

For each case of each ``tests/render-cases/<module>.yaml``, and its namespaced twin (the XR
as a Crossplane v2 namespaced XR against ``apis/<module>/namespaced/``): ``crossplane
composition render`` (CLI v2.5, engine Crossplane core v2.4.0 through ``--crossplane-binary``,
Development runtime pointed at the function served by this session) must succeed, its output
must equal ``tests/golden/<module>/<case>.yaml`` byte for byte (the engine's events, which it
records in Go map order, sorted among themselves by ``render_tool.stable_events``;
``UPDATE_GOLDEN=1`` rewrites the goldens), ``crossplane resource validate`` must accept the
output against the provider CRDs and the form's XRDs, and every composed resource must pass
the offline CRD+CEL validator too, and so must every manifest an Object wraps whose kind has
a schema.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.support.namespaced import NAMESPACED_ONLY
from tests.support.schemas import Catalog
from tests.support.tools import load_tool

pytestmark = pytest.mark.e2e

ROOT = Path(__file__).resolve().parent.parent
UPDATE_GOLDEN = os.environ.get("UPDATE_GOLDEN") == "1"


render_tool = load_tool("render_examples")
CASES = render_tool.load_cases()


@pytest.fixture(scope="session")
def cli() -> Path:
    """``.bin/crossplane`` (and the engine ``.bin/crossplane-core``); only these tests install
    them (link a supported CLI on PATH, or build)."""
    return render_tool.ensure_cli()


@pytest.fixture(scope="session")
def function_port(tmp_path_factory: pytest.TempPathFactory) -> Iterator[int]:
    """The function served as the CLI's Development runtime expects (insecure, on localhost)."""
    port = render_tool.free_port()
    log = tmp_path_factory.mktemp("function") / "function.log"
    with render_tool.serve_function(port, log):
        yield port


def _documents(text: str) -> list[dict[str, Any]]:
    return [doc for doc in yaml.safe_load_all(text) if doc]


def _composed(documents: list[dict[str, Any]], case: Any) -> list[dict[str, Any]]:
    """Rendered composed resources: everything but the XR and function Results."""
    xr_kind = yaml.safe_load(case.xr.read_text())["kind"]
    return [d for d in documents if d.get("kind") not in (xr_kind, "Result")]


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_render_matches_golden_and_validates(
    case: Any, cli: Path, function_port: int, tmp_path: Path, catalog: Catalog
) -> None:
    result = render_tool.render(cli, case, function_port, tmp_path)
    assert result.returncode == 0, f"crossplane composition render failed:\n{result.stderr}"
    documents = _documents(result.stdout)
    fatal = [d for d in documents if d.get("kind") == "Result" and d.get("severity") == "Fatal"]
    assert not fatal, f"fatal results: {fatal}"

    # the render tool puts the engine's events in a stable order (render_tool.stable_events)
    output = result.stdout
    if UPDATE_GOLDEN:
        case.golden.parent.mkdir(parents=True, exist_ok=True)
        case.golden.write_text(output)
    assert case.golden.exists(), f"no golden {case.golden}; run with UPDATE_GOLDEN=1"
    assert output == case.golden.read_text(), (
        f"render of {case.id} differs from {case.golden}; inspect, then UPDATE_GOLDEN=1"
    )

    validatable = [d for d in documents if d.get("kind") != "Result"]
    rendered = tmp_path / "rendered.yaml"
    rendered.write_text(yaml.safe_dump_all(validatable, sort_keys=False))
    validate = subprocess.run(
        render_tool.validate_command(
            cli, rendered, tmp_path / "validate-cache", namespaced=case.namespaced
        ),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    output = validate.stdout + validate.stderr
    assert validate.returncode == 0, f"crossplane resource validate:\n{output}"

    errors = {
        f"{d['kind']}/{d['metadata']['name']}": catalog.validate(d)
        for d in _composed(documents, case)
    }
    # validate checks an Object's manifest for apiVersion/kind/metadata only (it is an embedded
    # resource): validate every wrapped manifest whose kind has a schema (a Shoot, a c5c3
    # ControlPlane, Rook, KEDA...) too; not an observe-only Object's, which provider-kubernetes
    # never sends (it reads the object named by apiVersion, kind, name and namespace).
    errors |= {
        f"{d['kind']}/{d['metadata']['name']} manifest": catalog.validate(manifest)
        for d in _composed(documents, case)
        if d.get("kind") == "Object"
        and d["spec"].get("managementPolicies") != ["Observe"]
        and (manifest := d["spec"]["forProvider"]["manifest"])
        and catalog.lookup(manifest.get("apiVersion", ""), manifest.get("kind", ""))
    }
    assert not {k: v for k, v in errors.items() if v}


def test_every_case_file_exists() -> None:
    """A case naming a missing file is a broken example, whatever the function does."""
    missing = [
        f"{case.id}: {path}"
        for case in CASES
        for path in (case.xr, *case.environment, *case.required, case.observed)
        if path is not None and not path.exists()
    ]
    assert not missing


def test_cases_found() -> None:
    assert CASES, "no tests/render-cases/*.yaml found"


TWINS = [case for case in CASES if case.namespaced]


def _composed_names(golden: Path) -> set[str]:
    names = set()
    for doc in _documents(golden.read_text()):
        annotations = (doc.get("metadata") or {}).get("annotations") or {}
        if "crossplane.io/composition-resource-name" in annotations:
            names.add(annotations["crossplane.io/composition-resource-name"])
    return names


@pytest.mark.parametrize("twin", TWINS, ids=[c.id for c in TWINS])
def test_namespaced_golden_composes_what_the_cluster_scoped_one_does(twin: Any) -> None:
    """Same composed resources in both forms, except what the NamespacedForm condition names."""
    original = next(
        c for c in CASES if c.module == twin.module and c.name == twin.name and not c.namespaced
    )
    assert twin.golden.exists() and original.golden.exists()
    # Usages of fetched composites are named after them; the namespaced form fetches their
    # namespaced twins (named like their claims), so Usages are compared by count.
    cluster, namespaced = _composed_names(original.golden), _composed_names(twin.golden)
    usages = {n for n in cluster if n.startswith("usage-")}
    twin_usages = {n for n in namespaced if n.startswith("usage-")}
    named = twin.golden.read_text()
    assert not [name for name in cluster - namespaced - usages if f"{name}:" not in named]
    # the cluster-scoped form may still hold back what the namespaced one composes already
    # (its database writes the connection Secret into the app namespace, so waits for it)
    held = original.golden.read_text()
    extra = namespaced - twin_usages - NAMESPACED_ONLY - cluster
    assert not [name for name in extra if f"{name} (waits for" not in held]
    assert len(twin_usages) == len(usages) or not twin_usages - usages
