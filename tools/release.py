"""Cut a release: the runtime image, the function package and the ten Configuration packages.

    python tools/release.py --version 0.1.0 --registry localhost:5000/platform

``make release VERSION=0.1.0 REGISTRY=<registry>`` runs it. Everything is built on this
machine without a Docker daemon or a registry (docs/release.md), into ``build/release/``:

* ``function-platform-v<version>-image.tar``: the runtime image, tagged
  ``<registry>/function-platform:v<version>`` (tools/build-image.sh: Debian bookworm,
  the locked runtime dependencies and this repository's wheel, run as uid 65532);
* ``function-platform-v<version>.xpkg``: the function package with that image embedded;
* ``platform-<module>[-namespaced]-v<version>.xpkg``: each module's Configuration in each form,
  depending on ``<registry>/function-platform`` at ``^v<version>`` and on the pinned providers
  (tools/make_configurations.py);
* ``40-function.yaml``: ``examples/install/40-function.yaml`` installing this release
  (``<registry>/function-platform:v<version>``, the package the Configurations depend on).

The version has one place, ``function/__version__.py``: ``--version`` must equal it and
``CHANGELOG.md`` must hold its section, else nothing is built and the message says how to bump.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "platform"), str(ROOT), str(ROOT / "tools")]

import make_configurations  # noqa: E402

from function.__version__ import __version__  # noqa: E402

CHANGELOG = ROOT / "CHANGELOG.md"
CLI = ROOT / ".bin" / "crossplane"
OUT = ROOT / "build" / "release"
#: Where ``make release`` points the packages unless told: a registry on this machine (the
#: live tests run one; docs/release.md), never a public one by accident.
DEFAULT_REGISTRY = "localhost:5000/platform"

#: ``## [1.2.3] - 2026-01-31``: a released section of a Keep a Changelog file.
RELEASE_HEADING = re.compile(
    r"^## \[(?P<version>\d+\.\d+\.\d+)\] - (?P<date>\d{4}-\d{2}-\d{2})$", re.MULTILINE
)
#: An OCI repository prefix without tag or digest: ``host[:port]/path``, lower case.
REGISTRY = re.compile(r"[a-z0-9]+([.-][a-z0-9]+)*(:[0-9]+)?(/[a-z0-9]+([._-][a-z0-9]+)*)+")
SEMVER = re.compile(r"\d+\.\d+\.\d+")


def released_versions(changelog: Path = CHANGELOG) -> list[str]:
    """The released versions of ``CHANGELOG.md``, newest first (as the file lists them)."""
    return [m["version"] for m in RELEASE_HEADING.finditer(changelog.read_text())]


def check_version(version: str) -> None:
    """Refuse a version that is not ``function/__version__.py``'s or has no changelog
    section, saying how to bump."""
    bump = (
        f'To release {version}: set __version__ = "{version}" in function/__version__.py, move '
        f'CHANGELOG.md\'s [Unreleased] entries under a new "## [{version}] - <date>", run '
        f"`make configurations` and commit; then `make release VERSION={version}`"
    )
    if not SEMVER.fullmatch(version):
        msg = f"VERSION={version!r}: not a version such as 0.1.0 (major.minor.patch, no v)"
        raise SystemExit(msg)
    if version != __version__:
        msg = f"VERSION={version} but function/__version__.py says {__version__}. {bump}."
        raise SystemExit(msg)
    released = released_versions()
    if not released or released[0] != version:
        msg = (
            f"VERSION={version}: CHANGELOG.md's latest release is "
            f"{released[0] if released else 'none'}. {bump}."
        )
        raise SystemExit(msg)


def check_registry(registry: str) -> None:
    """Refuse a registry that is not a repository prefix (``host[:port]/path``)."""
    if not REGISTRY.fullmatch(registry):
        msg = (
            f"REGISTRY={registry!r}: not a repository prefix such as "
            f"{DEFAULT_REGISTRY} or ghcr.io/acme/platform (host[:port]/path, lower case, "
            "no tag: the release adds /function-platform:v<version>)"
        )
        raise SystemExit(msg)


def run(command: list[str]) -> None:
    """Run a build step, its output on stderr; a failure names the step."""
    result = subprocess.run(command, cwd=ROOT, stdout=sys.stderr, check=False)
    if result.returncode != 0:
        msg = f"release: {' '.join(command)} failed (exit {result.returncode})"
        raise SystemExit(msg)


def install_step(registry: str, version: str) -> str:
    """``examples/install/40-function.yaml`` with its Function installing the release: the
    package reference and the opening comment (about the placeholder) change, the runtime
    config and its comments stay."""
    lines = make_configurations.FUNCTION.read_text().splitlines(keepends=True)
    opening = next(i for i, line in enumerate(lines) if not line.startswith("#"))
    text = (
        f"# Step 5: this function, release v{version} for {registry}, built by make release "
        "(docs/release.md).\n" + "".join(lines[opening:])
    )
    published = ":".join(make_configurations.function_package())
    released = f"{registry}/{make_configurations.FUNCTION_NAME}:v{version}"
    line = f"  package: {published}\n"
    if text.count(line) != 1:
        msg = f"{make_configurations.FUNCTION.relative_to(ROOT)}: no single '{line.strip()}' line"
        raise SystemExit(msg)
    return text.replace(line, f"  package: {released}\n")


def release(version: str, registry: str, out: Path, cli: Path) -> list[Path]:
    """Build every artifact of the release into ``out``; return them."""
    check_version(version)
    check_registry(registry)
    problems = make_configurations.stale()
    if problems:
        msg = "out of date: " + ", ".join(problems) + " (run make configurations)"
        raise SystemExit(msg)
    out.mkdir(parents=True, exist_ok=True)
    image = out / f"function-platform-v{version}-image.tar"
    function = out / f"function-platform-v{version}.xpkg"
    run(
        [
            str(ROOT / "tools" / "build-image.sh"),
            "--tag",
            f"{registry}/{make_configurations.FUNCTION_NAME}:v{version}",
            "--out",
            str(image),
            "--python",
            sys.executable,
        ]
    )
    function.unlink(missing_ok=True)
    run(
        [
            str(cli),
            "xpkg",
            "build",
            "--package-root=package",
            "--examples-root=examples",
            f"--embed-runtime-image-tarball={image}",
            f"--package-file={function}",
        ]
    )
    configurations = list(make_configurations.build(out, cli=cli, registry=registry))
    install = out / make_configurations.FUNCTION.name
    install.write_text(install_step(registry, version))
    return [image, function, *configurations, install]


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--version",
        required=True,
        help=f"the release, equal to function/__version__.py ({__version__})",
    )
    parser.add_argument(
        "--registry",
        default=DEFAULT_REGISTRY,
        help="the repository prefix the packages are pushed to and depend on "
        "(default: %(default)s)",
    )
    parser.add_argument("--out", type=Path, default=OUT, help="default: build/release")
    parser.add_argument("--crossplane", type=Path, default=CLI, help="the crossplane CLI")
    args = parser.parse_args(argv)
    started = time.monotonic()
    built = release(args.version, args.registry, args.out, args.crossplane)
    shown = [path.relative_to(ROOT) if path.is_relative_to(ROOT) else path for path in built]
    for path in shown:
        size = (ROOT / path).stat().st_size
        shown_size = f"{size / 2**20:.1f} MiB" if size >= 2**20 else f"{size / 2**10:.0f} KiB"
        print(f"release: {path} ({shown_size})")
    function, configurations, install = shown[1], shown[2:-1], shown[-1]
    print(
        f"release: v{args.version} for {args.registry} built in "
        f"{time.monotonic() - started:.0f} s; push with (docs/release.md):"
    )
    print(
        f"  .bin/crossplane xpkg push -f {function} "
        f"{args.registry}/{make_configurations.FUNCTION_NAME}:v{args.version}"
    )
    for path in configurations:
        name = path.name.removesuffix(f"-v{args.version}.xpkg")
        print(f"  .bin/crossplane xpkg push -f {path} {args.registry}/{name}:v{args.version}")
    print(f"then install the function with `kubectl apply -f {install}`")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
