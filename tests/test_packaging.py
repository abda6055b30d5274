"""The installed package must run with its declared dependencies alone (no dev extras)."""

from __future__ import annotations

import ast
import subprocess
import sys
import tomllib
import zipfile
from importlib.metadata import packages_distributions
from pathlib import Path

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
