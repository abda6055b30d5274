"""The installed package must run with its declared dependencies alone (no dev extras)."""

from __future__ import annotations

import ast
import subprocess
import sys
import tomllib
import zipfile
from importlib.metadata import packages_distributions
from pathlib import Path

import pytest
from packaging.requirements import Requirement

REPO = Path(__file__).resolve().parents[1]
LOCAL = {"function", "fnplatform"}


def declared_distributions() -> set[str]:
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    return {Requirement(dep).name.lower() for dep in project["dependencies"]}


def runtime_imports() -> dict[str, str]:
    """Top-level third-party modules imported by shipped code -> first file importing it."""
    found: dict[str, str] = {}
    for root in (REPO / "function", REPO / "platform" / "fnplatform"):
        for path in sorted(root.rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text())):
                names: list[str] = []
                if isinstance(node, ast.Import):
                    names = [alias.name for alias in node.names]
                elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                    names = [node.module]
                for name in names:
                    top = name.split(".")[0]
                    if top not in sys.stdlib_module_names and top not in LOCAL:
                        found.setdefault(top, str(path.relative_to(REPO)))
    return found


def test_every_runtime_import_is_a_declared_dependency():
    declared = declared_distributions()
    providers = packages_distributions()
    undeclared = {
        module: (where, providers.get(module))
        for module, where in runtime_imports().items()
        if not {d.lower() for d in providers.get(module, [])} & declared
    }
    assert not undeclared, f"imported at run time but not in [project.dependencies]: {undeclared}"


def test_the_wheel_carries_every_module_and_template(tmp_path):
    """Helm values templates are data files: a wheel without them composes no cluster."""
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "--no-build-isolation",
         "--wheel-dir", str(tmp_path), str(REPO)],
        check=True,
    )
    (wheel,) = tmp_path.glob("function_platform-*.whl")
    shipped = set(zipfile.ZipFile(wheel).namelist())
    sources = [
        *(REPO / "function").rglob("*.py"),
        *(REPO / "platform").rglob("*.py"),
        *(REPO / "platform").rglob("*.j2"),
    ]
    expected = {
        str(p.relative_to(REPO / "platform" if "platform" in p.parts else REPO))
        for p in sources
    }
    assert expected - shipped == set()


def test_examples_hold_only_kubernetes_objects():
    """``crossplane xpkg build`` parses every YAML file under the examples root as an object.

    Render cases (lists) and observed states live in ``tests/render-cases/``; a stray non-object
    here breaks packaging with an error naming the wrong file.
    """
    import yaml

    problems = []
    for path in sorted((REPO / "examples").rglob("*")):
        if path.is_dir():
            continue
        where = str(path.relative_to(REPO))
        if path.suffix not in (".yaml", ".yml"):
            problems.append(f"{where}: not a manifest")
            continue
        for doc in yaml.safe_load_all(path.read_text()):
            if doc is None:
                continue
            if not isinstance(doc, dict) or not doc.get("apiVersion") or not doc.get("kind"):
                problems.append(f"{where}: a document without apiVersion/kind")
            elif "status" in doc:
                problems.append(f"{where}: {doc['kind']} carries a status (an observed state?)")
    assert problems == []


@pytest.mark.e2e
def test_the_metadata_package_builds_with_the_input_crd_and_examples(tmp_path):
    """``tools/build-package.sh --metadata-only`` (``make package`` without docker)."""
    import io
    import json
    import tarfile

    import yaml

    from tests.test_e2e_render import render_tool

    render_tool.ensure_crank()
    out = tmp_path / "function-platform.xpkg"
    result = subprocess.run(
        [str(REPO / "tools" / "build-package.sh"), "--metadata-only", "--out", str(out)],
        cwd=REPO, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert "no runtime image (--metadata-only)" in result.stdout
    files: dict[str, bytes] = {}
    with tarfile.open(out) as image:
        (manifest,) = json.load(image.extractfile("manifest.json"))  # type: ignore[arg-type]
        for layer in manifest["Layers"]:
            blob = image.extractfile(layer).read()  # type: ignore[union-attr]
            with tarfile.open(fileobj=io.BytesIO(blob), mode="r:gz") as contents:
                for member in contents.getmembers():
                    files[member.name] = contents.extractfile(member).read()  # type: ignore[union-attr]
    package = [d for d in yaml.safe_load_all(files["package.yaml"]) if d]
    meta = package[0]
    assert (meta["apiVersion"], meta["kind"]) == ("meta.pkg.crossplane.io/v1", "Function")
    assert any(d["kind"] == "CustomResourceDefinition"
               and d["spec"]["group"] == "platform.fn.crossplane.io" for d in package)
    examples = [d for d in yaml.safe_load_all(files[".up/examples.yaml"]) if d]
    kinds = {d["kind"] for d in examples}
    assert {"XCluster", "Cluster", "XAsyncActor", "EnvironmentConfig"} <= kinds


def test_the_license_file_matches_pyproject():
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    assert project["license"] == "Apache-2.0"
    text = (REPO / "LICENSE").read_text()
    assert text.startswith("Apache License\nVersion 2.0, January 2004")
    assert "END OF TERMS AND CONDITIONS" in text


def test_the_image_installs_the_locked_dependencies_on_a_pinned_base():
    lock = subprocess.run(
        [sys.executable, str(REPO / "tools" / "lock_requirements.py"), "--check"],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert lock.returncode == 0, lock.stderr
    dockerfile = (REPO / "Dockerfile").read_text()
    assert "pip install --no-cache-dir -r requirements.lock" in dockerfile
    assert "--no-deps /dist/*.whl" in dockerfile
    import re

    (base,) = re.findall(r"^ARG PYTHON_IMAGE=(\S+)$", dockerfile, re.MULTILINE)
    assert re.fullmatch(r"python:3\.11\.\d+-slim-\w+(@sha256:[0-9a-f]{64})?", base), base
    assert dockerfile.count("FROM ${PYTHON_IMAGE}") == 2


def test_ci_runs_the_readme_test_command():
    import yaml

    workflow = yaml.safe_load((REPO / ".github" / "workflows" / "ci.yml").read_text())
    runs = [step.get("run", "") for job in workflow["jobs"].values() for step in job["steps"]]
    assert "make test" in runs
    assert "make test " in (REPO / "README.md").read_text()
