"""One version in one place (``function/__version__.py``), and a release refuses any other.

Every place that names the function's version must agree with it: the CLI's ``--version``, the
wheel's metadata, the image tag and the Configurations' ``dependsOn`` (both derived at build
time), the function reference the install examples apply, and CHANGELOG.md's latest release.
``tests/release/`` builds the release itself and runs its image.
"""

from __future__ import annotations

import re
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
import yaml

from function.__version__ import __version__
from tests.support.table import case
from tests.support.tools import load_tool

ROOT = Path(__file__).resolve().parent.parent
release_tool = load_tool("release")
configurations = load_tool("make_configurations")

#: Files outside configurations/ that name the function package with a tag: each must carry
#: the one version, as a user applies them.
FUNCTION_REFERENCES = (
    (ROOT / "examples" / "install" / "40-function.yaml", "the install step a user applies"),
    (ROOT / "examples" / "functions.yaml", "what crossplane composition render runs"),
    (
        ROOT / "examples" / "openstack" / "apps" / "crossplane-packages" / "packages.yaml",
        "the openstack GitOps tree",
    ),
)


def test_the_cli_prints_the_version():
    result = subprocess.run(
        [sys.executable, "-m", "function", "--version"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    )
    assert result.stdout.strip() == f"function-platform, version {__version__}"


def test_the_wheel_metadata_carries_the_version(tmp_path):
    """The package metadata pip and the image read (pyproject's hatch version source)."""
    subprocess.run(
        [sys.executable, "-c",
         f"from hatchling.build import build_wheel; build_wheel({str(tmp_path)!r})"],
        cwd=ROOT, check=True,
    )  # fmt: skip
    (wheel,) = tmp_path.glob("function_platform-*.whl")
    assert wheel.name.startswith(f"function_platform-{__version__}-"), wheel.name
    with zipfile.ZipFile(wheel) as archive:
        (metadata,) = [n for n in archive.namelist() if n.endswith(".dist-info/METADATA")]
        text = archive.read(metadata).decode()
    assert f"\nVersion: {__version__}\n" in text


def test_the_changelog_latest_release_is_the_version():
    released = release_tool.released_versions()
    assert released, "CHANGELOG.md has no '## [x.y.z] - YYYY-MM-DD' release"
    assert released[0] == __version__, (
        f"CHANGELOG.md's latest release {released[0]} is not function/__version__.py's "
        f"{__version__}: move [Unreleased] under the new version (docs/release.md)"
    )


def test_the_changelog_keeps_an_unreleased_section_above_the_releases():
    text = (ROOT / "CHANGELOG.md").read_text()
    headings = re.findall(r"^## .*$", text, re.MULTILINE)
    assert headings[0] == "## [Unreleased]", "every change lands under [Unreleased] first"
    assert len(set(headings)) == len(headings), "a section appears twice"
    assert (
        sorted(
            release_tool.released_versions(),
            key=lambda v: tuple(map(int, v.split("."))),
            reverse=True,
        )
        == release_tool.released_versions()
    ), "releases are listed newest first"


@pytest.mark.parametrize(
    ("path", "why"),
    FUNCTION_REFERENCES,
    ids=[str(p.relative_to(ROOT)) for p, _ in FUNCTION_REFERENCES],
)
def test_function_references_carry_the_version(path, why):
    packages = [
        d["spec"]["package"]
        for d in yaml.safe_load_all(path.read_text())
        if d and d.get("kind") == "Function"
    ]
    assert packages, f"{path.relative_to(ROOT)} ({why}) installs no Function"
    for package in packages:
        assert package.endswith(f"/function-platform:v{__version__}"), (
            f"{path.relative_to(ROOT)} ({why}): {package} is not v{__version__}"
        )


def test_every_configuration_depends_on_this_version_of_the_function():
    repository, _ = configurations.function_package()
    for package in configurations.packages():
        meta = yaml.safe_load((package.directory / "crossplane.yaml").read_text())
        (function,) = [d for d in meta["spec"]["dependsOn"] if d["kind"] == "Function"]
        assert function == {
            "apiVersion": "pkg.crossplane.io/v1",
            "kind": "Function",
            "package": repository,
            "version": f"^v{__version__}",
        }, package.name


def test_a_release_configuration_depends_on_the_function_in_its_registry():
    (package, *_) = configurations.packages()
    meta = configurations.meta(package, "registry.example:5000/team")
    (function,) = [d for d in meta["spec"]["dependsOn"] if d["kind"] == "Function"]
    assert function["package"] == "registry.example:5000/team/function-platform"
    assert function["version"] == f"^v{__version__}"


def _release(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(ROOT / "tools" / "release.py"), *args],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )


@pytest.mark.parametrize(
    ("args", "says"),
    [
        case(
            "a version that is not the one function/__version__.py says is refused before "
            "anything is built, telling how to release it: an image must never carry "
            "another version than the code",
            ("--version", "9.9.9"),
            f"VERSION=9.9.9 but function/__version__.py says {__version__}. To release 9.9.9: set "
            '__version__ = "9.9.9" in function/__version__.py',
        ),
        case(
            "a v-prefixed version is refused: the release adds the v to tags itself, so "
            "v0.1.0 would tag vv0.1.0",
            ("--version", f"v{__version__}"),
            "not a version such as 0.1.0",
        ),
        case(
            "an upper-case registry is refused: OCI repository names are lower case and "
            "the push would fail after the build",
            ("--version", __version__, "--registry", "Registry.example/UPPER"),
            "not a repository prefix",
        ),
        case(
            "a registry with a tag is refused: the release appends "
            "/function-platform:v<version> and a tag in the prefix would make an invalid "
            "reference",
            ("--version", __version__, "--registry", "localhost:5000/platform:v1"),
            "no tag: the release adds /function-platform:v<version>",
        ),
    ],
    ids=[
        "another version: says how to bump",
        "a v prefix",
        "upper case registry",
        "registry with a tag",
    ],
)
def test_a_release_refuses_before_building(args, says):
    result = _release(*args)
    assert result.returncode != 0
    assert says in result.stderr
    assert "Traceback" not in result.stderr


def test_make_release_needs_a_version():
    result = subprocess.run(
        ["make", "-s", "release"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
        env={"PATH": "/usr/bin:/bin", "VERSION": ""},
    )
    assert result.returncode != 0
    assert "make release needs VERSION=<version>" in result.stdout + result.stderr
