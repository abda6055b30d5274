"""The installed package must run with its declared dependencies alone (no dev extras)."""

from __future__ import annotations

import ast
import json
import os
import re
import subprocess
import sys
import tomllib
import zipfile
from importlib.metadata import packages_distributions
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.utils import canonicalize_name

REPO = Path(__file__).resolve().parents[1]
LOCAL = {"function", "fnplatform"}


def declared_distributions() -> set[str]:
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    return {canonicalize_name(Requirement(dep).name) for dep in project["dependencies"]}


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
        if not {canonicalize_name(d) for d in providers.get(module, [])} & declared
    }
    assert not undeclared, f"imported at run time but not in [project.dependencies]: {undeclared}"


def test_the_wheel_carries_every_module_and_template(tmp_path):
    """Helm values templates are data files: a wheel without them composes no cluster."""
    subprocess.run(  # the PEP 517 hook pip or uv would call, with the locked hatchling
        [sys.executable, "-c",
         f"from hatchling.build import build_wheel; build_wheel({str(tmp_path)!r})"],
        cwd=REPO, check=True,
    )  # fmt: skip
    (wheel,) = tmp_path.glob("function_platform-*.whl")
    shipped = set(zipfile.ZipFile(wheel).namelist())
    # platform/providersim (the provider simulation) is for rendering and tests from a
    # checkout, never for the function: it stays out of the wheel.
    sources = [
        *(REPO / "function").rglob("*.py"),
        *(REPO / "platform" / "fnplatform").rglob("*.py"),
        *(REPO / "platform" / "fnplatform").rglob("*.j2"),
    ]
    expected = {
        str(p.relative_to(REPO / "platform" if "platform" in p.parts else REPO)) for p in sources
    }
    assert expected - shipped == set()
    assert not any(name.startswith("providersim/") for name in shipped), "test support shipped"


def _reported_package_health(doc: dict) -> bool:
    """A package (``pkg.crossplane.io`` Provider) with the health Crossplane reports for it:
    the contact-center module reads it before composing, so its platform settings folder
    (``examples/contact-center/platform/providers.yaml``) holds the providers as a cluster has
    them, for renders; ``kubectl apply`` ignores a status."""
    return (
        str(doc.get("apiVersion", "")).startswith("pkg.crossplane.io/")
        and doc.get("kind") == "Provider"
    )


def test_examples_hold_only_kubernetes_objects():
    """``crossplane xpkg build`` parses every YAML file under the examples root as an object.

    Render cases (lists) and observed states live in ``tests/render-cases/``; a stray non-object
    here breaks packaging with an error naming the wrong file. Other files are skipped by the
    build (CLI v2.5 cmd/crossplane/xpkg/build.go ``buildFilters``: ``parser.SkipNotYAML``), so
    the permission documents (JSON) and READMEs of examples/install/ may sit beside the
    manifests; a Helm chart's YAML could not (deploy/helm-charts/ holds it).
    """
    import yaml

    problems = []
    for path in sorted((REPO / "examples").rglob("*")):
        if path.is_dir():
            continue
        where = str(path.relative_to(REPO))
        if path.suffix not in (".yaml", ".yml"):
            if path.suffix not in (".json", ".md"):
                problems.append(f"{where}: not a manifest")
            continue
        for doc in yaml.safe_load_all(path.read_text()):
            if doc is None:
                continue
            if not isinstance(doc, dict) or not doc.get("apiVersion") or not doc.get("kind"):
                problems.append(f"{where}: a document without apiVersion/kind")
            elif "status" in doc and not _reported_package_health(doc):
                problems.append(f"{where}: {doc['kind']} carries a status (an observed state?)")
    assert problems == []


@pytest.mark.e2e
def test_the_metadata_package_builds_with_the_input_crd_and_examples(tmp_path):
    """``tools/build-package.sh --metadata-only`` (``make package`` without docker)."""
    import yaml

    from tests.support.xpkg import xpkg_files
    from tests.test_e2e_render import render_tool

    render_tool.ensure_cli()
    out = tmp_path / "function-platform.xpkg"
    result = subprocess.run(
        [str(REPO / "tools" / "build-package.sh"), "--metadata-only", "--out", str(out)],
        cwd=REPO, capture_output=True, text=True, timeout=300, check=False,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert "no runtime image (--metadata-only)" in result.stdout
    files = xpkg_files(out)
    package = [d for d in yaml.safe_load_all(files["package.yaml"]) if d]
    meta = package[0]
    assert (meta["apiVersion"], meta["kind"]) == ("meta.pkg.crossplane.io/v1", "Function")
    assert any(
        d["kind"] == "CustomResourceDefinition"
        and d["spec"]["group"] == "platform.fn.crossplane.io"
        for d in package
    )
    examples = [d for d in yaml.safe_load_all(files[".up/examples.yaml"]) if d]
    kinds = {d["kind"] for d in examples}
    assert {"XCluster", "Cluster", "XAsyncActor", "EnvironmentConfig"} <= kinds


def test_the_license_file_matches_pyproject():
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    assert project["license"] == "Apache-2.0"
    text = (REPO / "LICENSE").read_text()
    assert text.startswith("Apache License\nVersion 2.0, January 2004")
    assert "END OF TERMS AND CONDITIONS" in text


def uv() -> str:
    """The pinned uv (tools/uv-requirements.txt), bootstrapped into .bin/ by `make uv`."""
    made = subprocess.run(
        ["make", "-s", "uv"], cwd=REPO, capture_output=True, text=True, check=True
    )
    return str(REPO / made.stdout.strip().splitlines()[-1])


def locked_versions() -> dict[str, str]:
    """Canonical name -> version, for every package uv.lock pins (the project itself aside)."""
    lock = tomllib.loads((REPO / "uv.lock").read_text())
    return {
        canonicalize_name(package["name"]): package["version"]
        for package in lock["package"]
        if "editable" not in package["source"] and "virtual" not in package["source"]
    }


def installed_versions(python: Path) -> dict[str, str]:
    """Canonical name -> version of every distribution installed for ``python``."""
    listing = subprocess.run(
        [str(python), "-c", "import importlib.metadata as m, json;"
         "print(json.dumps({d.metadata['Name']: d.version for d in m.distributions()}))"],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    versions: dict[str, str] = json.loads(listing.stdout)
    return {canonicalize_name(name): version for name, version in versions.items()}


def test_the_locks_match_pyproject_and_each_other():
    """uv.lock resolves pyproject.toml as it is, and requirements.lock is uv.lock's export."""
    check = subprocess.run(
        ["make", "-s", "lock-check"], cwd=REPO, capture_output=True, text=True, check=False
    )
    assert check.returncode == 0, check.stdout + check.stderr
    pins = (REPO / "requirements.lock").read_text()
    runtime = dict(re.findall(r"^([A-Za-z0-9_.-]+)==(\S+)", pins, re.MULTILINE))
    locked = locked_versions()
    assert runtime, "requirements.lock pins nothing"
    assert {canonicalize_name(n): v for n, v in runtime.items()}.items() <= locked.items()
    # every pin carries hashes, so pip installs the image with --require-hashes
    assert pins.count("--hash=sha256:") >= len(runtime)


def test_this_environment_is_the_locked_one():
    """`make setup` installed exactly what uv.lock pins: the tests run on the locked versions."""
    installed = installed_versions(Path(sys.executable))
    locked = locked_versions()
    drift = {n: (v, locked.get(n)) for n, v in installed.items()
             if n != "function-platform" and locked.get(n) != v}  # fmt: skip
    assert not drift, f"installed (version, locked version) differ: {drift}"


def test_environments_built_from_the_locks_have_the_locked_versions(tmp_path):
    """A fresh dev environment (uv.lock) and a fresh image environment (requirements.lock, hashes
    required, as the Dockerfile installs it) get exactly the locked versions on any later day."""
    tool = uv()
    env = {**os.environ, "UV_PYTHON_DOWNLOADS": "never", "UV_SYSTEM_CERTS": "1",
           "UV_PROJECT_ENVIRONMENT": str(tmp_path / "dev")}  # fmt: skip
    env.pop("VIRTUAL_ENV", None)
    python = sys.executable
    subprocess.run([tool, "sync", "--locked", "--extra", "dev", "--quiet", "--python", python],
                   cwd=REPO, env=env, check=True)  # fmt: skip
    subprocess.run([tool, "venv", "--quiet", "--python", python, str(tmp_path / "image")],
                   env=env, check=True)  # fmt: skip
    image_python = str(tmp_path / "image" / "bin" / "python")
    subprocess.run([tool, "pip", "install", "--quiet", "--require-hashes", "--python", image_python,
                    "-r", str(REPO / "requirements.lock")],
                   env=env, check=True)  # fmt: skip
    locked = locked_versions()
    dev = installed_versions(tmp_path / "dev" / "bin" / "python")
    image = installed_versions(tmp_path / "image" / "bin" / "python")
    for name, versions in (("dev", dev), ("image", image)):
        versions.pop("function-platform", None)
        assert versions, name
        assert versions.items() <= locked.items(), (name, versions.items() - locked.items())
    # the dev closure holds the pinned tools; the image holds the runtime closure and no dev tool
    assert {"ruff", "mypy", "pytest", "pydantic", "grpcio"} <= dev.keys()
    assert {"pydantic", "grpcio", "crossplane-function-sdk-python"} <= image.keys()
    assert not {"ruff", "mypy", "pytest"} & image.keys()


def test_the_image_installs_the_locked_dependencies_on_a_pinned_base():
    dockerfile = (REPO / "Dockerfile").read_text()
    assert "pip install --no-cache-dir --require-hashes -r requirements.lock" in dockerfile
    assert "--no-deps /dist/*.whl" in dockerfile
    (base,) = re.findall(r"^ARG PYTHON_IMAGE=(\S+)$", dockerfile, re.MULTILINE)
    assert re.fullmatch(r"python:3\.11\.\d+-slim-\w+(@sha256:[0-9a-f]{64})?", base), base
    assert dockerfile.count("FROM ${PYTHON_IMAGE}") == 2


def test_ci_runs_the_readme_test_command():
    import yaml

    workflow = yaml.safe_load((REPO / ".github" / "workflows" / "ci.yml").read_text())
    runs = [step.get("run", "") for job in workflow["jobs"].values() for step in job["steps"]]
    assert any(run.endswith("bash .ci/run") for run in runs), "the workflow runs .ci/run"
    ci_lines = (REPO / ".ci" / "run").read_text().splitlines()
    assert "make test" in ci_lines, ".ci/run runs the README's test command"
    assert "make test " in (REPO / "README.md").read_text()
