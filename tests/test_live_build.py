"""The live control plane's build reads the Go module cache only after filling it.

On a new machine the module cache is empty: ``go list -m -f '{{.Dir}}'`` then prints nothing,
and copying the patched provider-kubernetes source from there failed before anything was
compiled. ``tools/live/build.sh --prepare-only`` runs every step that reads the module cache
(download, copy and patch the source, copy the release's CRDs) without compiling, so this test
proves the cold path against an empty ``GOMODCACHE`` in seconds; compiling is what
``make test-live`` does next with the same script.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
BUILD = ROOT / "tools" / "live" / "build.sh"


@pytest.fixture
def cold_module_cache(tmp_path: Path) -> Iterator[dict[str, str]]:
    """An empty module cache and output folder; go's read-only cache removed afterwards."""
    go = shutil.which("go") or "/usr/local/go/bin/go"
    if not Path(go).exists():
        pytest.fail("go is needed to build the live control plane (README: Try it)")
    env = {
        **os.environ,
        "GOMODCACHE": str(tmp_path / "mod"),
        "LIVE_BIN": str(tmp_path / "bin"),
        "GO": go,
    }
    yield env
    subprocess.run([go, "clean", "-modcache"], env=env, check=False, capture_output=True)


def test_the_patched_build_prepares_from_an_empty_module_cache(cold_module_cache, tmp_path):
    result = subprocess.run(
        [str(BUILD), "--prepare-only", "provider-kubernetes", "crossplane"],
        env=cold_module_cache,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    printed = dict(line.split(" ", 1) for line in result.stdout.splitlines())
    source = Path(printed["provider-kubernetes-source"])
    try:
        # the patch applied: every file it changes is in the copied source
        patch = (ROOT / "tools/live/provider-kubernetes/client-cache.patch").read_text()
        changed = [
            line.removeprefix("+++ b/") for line in patch.splitlines() if line.startswith("+++ b/")
        ]
        assert changed and all((source / path).is_file() for path in changed)
        added = next(
            line[1:]
            for line in patch.splitlines()
            if line.startswith("+") and not line.startswith("+++") and line[1:].strip()
        )
        assert any(added in (source / path).read_text() for path in changed)
    finally:
        shutil.rmtree(source.parent, ignore_errors=True)
    # the release's files beside where the binaries go
    crds = Path(printed["crossplane-cluster"]) / "crds"
    assert any(crds.glob("apiextensions.crossplane.io_*.yaml")), crds
    package = Path(printed["provider-kubernetes-package"]) / "crds"
    assert any(package.glob("kubernetes.crossplane.io_*.yaml")), package
    assert Path(printed["crossplane-cluster"]).parent == tmp_path / "bin"
