"""A release, built as ``make release`` builds it, and its image run without Docker.

The session builds the whole release (tools/release.py: the image with tools/build-image.sh,
the function package embedding it, the ten Configuration packages) into a temporary directory
for a registry of its own. The image tarball's root file system is then unpacked and its
ENTRYPOINT started from it as its config says (user, environment), in a chroot inside a private
mount namespace with /proc and /dev mounted (what a container runtime provides): it must answer
a RunFunction over gRPC exactly as this checkout's code does, as uid 65532.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import sys
import tarfile
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import grpc
import pytest
import yaml

from function.__version__ import __version__
from tests.support.cases import cluster_case
from tests.support.harness import FunctionClient, free_port
from tests.support.tools import load_tool
from tests.support.xpkg import xpkg_files

pytestmark = pytest.mark.release

ROOT = Path(__file__).resolve().parents[2]
REGISTRY = "localhost:5000/release-test"
TAG = f"{REGISTRY}/function-platform:v{__version__}"
#: The user the Dockerfile's runtime stage runs as.
UID = 65532
configurations = load_tool("make_configurations")


@pytest.fixture(scope="session")
def release(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``tools/release.py`` (what ``make release`` runs) into a temporary directory."""
    render_tool = load_tool("render_examples")  # the release needs the CLI, not the engine
    cli = render_tool.CLI if render_tool.CLI.exists() else render_tool.ensure_cli()
    out = tmp_path_factory.mktemp("release")
    started = time.monotonic()
    result = subprocess.run(
        [sys.executable, str(ROOT / "tools" / "release.py"), "--version", __version__,
         "--registry", REGISTRY, "--out", str(out), "--crossplane", str(cli)],
        cwd=ROOT, capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert result.returncode == 0, result.stdout + result.stderr
    print(f"release built in {time.monotonic() - started:.0f} s", file=sys.stderr)
    return out


def _image(release: Path) -> tuple[dict[str, Any], dict[str, Any]]:
    """The image tarball's manifest entry and config."""
    with tarfile.open(release / f"function-platform-v{__version__}-image.tar") as image:
        (manifest,) = json.load(image.extractfile("manifest.json"))  # type: ignore[arg-type]
        config = json.load(image.extractfile(manifest["Config"]))  # type: ignore[arg-type]
    return manifest, config


@pytest.fixture(scope="session")
def rootfs(release: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The image's root file system, its layers unpacked in order (ownership as recorded)."""
    manifest, _ = _image(release)
    root = tmp_path_factory.mktemp("image") / "rootfs"
    root.mkdir()
    image_tar = release / f"function-platform-v{__version__}-image.tar"
    with tarfile.open(image_tar) as image:
        for layer in manifest["Layers"]:
            blob = image.extractfile(layer)
            assert blob is not None
            subprocess.run(
                ["tar", "-x", "--numeric-owner", "--same-permissions", "-C", str(root)],
                stdin=None,
                input=blob.read(),
                check=True,
            )
            for whiteout in list(root.rglob(".wh.*")):  # a later layer's deletions
                shutil.rmtree(whiteout.with_name(whiteout.name[4:]), ignore_errors=True)
                whiteout.unlink()
    yield root
    shutil.rmtree(root, ignore_errors=True)


def test_the_image_is_tagged_and_configured_as_the_dockerfile(release):
    manifest, config = _image(release)
    assert manifest["RepoTags"] == [TAG]
    settings = config["config"]
    assert settings["User"] == f"{UID}:{UID}"
    assert settings["Entrypoint"] == ["function-platform"]
    assert settings["Cmd"] == ["--address=0.0.0.0:9443"]
    assert set(settings["ExposedPorts"]) == {"9443/tcp"}
    env = dict(item.split("=", 1) for item in settings["Env"])
    assert env["PATH"].startswith("/venv/bin:")
    assert env["PYTHONDONTWRITEBYTECODE"] == env["PYTHONUNBUFFERED"] == "1"
    assert settings["Labels"]["org.opencontainers.image.version"] == __version__


def _serve_from(root: Path, config: dict[str, Any], *args: str) -> subprocess.Popen[str]:
    """The image's ENTRYPOINT with ``args`` in place of its CMD (as ``docker run image args``
    does), as its user, with its environment, chrooted into ``root`` inside a private mount
    namespace holding /proc and /dev. The process keeps the returned pid through every exec."""
    settings = config["config"]
    script = (
        'root=$1 user=$2; shift 2; mount -t proc proc "$root/proc" '
        '&& mount --rbind /dev "$root/dev" && exec chroot --userspec="$user" "$root" "$@"'
    )
    env = dict(item.split("=", 1) for item in settings["Env"])
    return subprocess.Popen(
        ["unshare", "--mount", "--propagation", "private", "sh", "-c", script, "sh", str(root),
         settings["User"], *settings["Entrypoint"], *args],
        env=env, text=True, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
    )  # fmt: skip


def _uids(pid: int) -> list[int]:
    """Real, effective, saved and file-system uid of a process, from /proc."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("Uid:"):
            return [int(field) for field in line.split()[1:]]
    msg = f"no Uid line for {pid}"
    raise AssertionError(msg)


def test_the_image_prints_the_version(release, rootfs):
    _, config = _image(release)
    process = _serve_from(rootfs, config, "--version")
    out, err = process.communicate(timeout=60)
    assert process.returncode == 0, err
    assert out.strip() == f"function-platform, version {__version__}"


def test_the_image_answers_a_run_function_as_uid_65532(release, rootfs, client):
    """The entrypoint of the unpacked image serves on a free loopback port; one RunFunction
    (a two-pool AWS cluster) gets the same desired resources the in-process server of this
    checkout composes, and the metrics endpoint counts the call."""
    _, config = _image(release)
    address = f"127.0.0.1:{free_port()}"
    metrics = f"127.0.0.1:{free_port()}"
    process = _serve_from(
        rootfs, config, "--insecure", f"--address={address}", f"--metrics-address={metrics}"
    )
    try:
        channel = grpc.insecure_channel(address)
        try:
            grpc.channel_ready_future(channel).result(timeout=60)
        except grpc.FutureTimeoutError:
            process.kill()
            out, err = process.communicate()
            pytest.fail(f"the image's entrypoint did not serve {address}:\n{out}\n{err}")
        finally:
            channel.close()
        assert _uids(process.pid) == [UID] * 4
        image_client = FunctionClient(address)
        try:
            rendered = image_client.run(cluster_case("aws").request())
        finally:
            image_client.close()
        expected = client.run(cluster_case("aws").request())
        assert rendered.resources, "the image composed nothing"
        assert rendered.resources == expected.resources
        assert [r.severity for r in rendered.results] == [r.severity for r in expected.results]
        with urllib.request.urlopen(f"http://{metrics}/metrics", timeout=10) as response:
            text = response.read().decode()
        assert 'function_platform_requests_total{kind="XCluster",module="cluster"' in text
    finally:
        process.terminate()
        try:
            process.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.communicate()


def test_the_function_package_embeds_the_image(release):
    """``crossplane xpkg build --embed-runtime-image-tarball``: the package's image is the
    runtime image with the package's layers on top."""
    package = release / f"function-platform-v{__version__}.xpkg"
    names: list[list[str]] = []  # each layer's entries, in order
    package_yaml = b""
    with tarfile.open(package) as image:
        (manifest,) = json.load(image.extractfile("manifest.json"))  # type: ignore[arg-type]
        config = json.load(image.extractfile(manifest["Config"]))  # type: ignore[arg-type]
        for layer in manifest["Layers"]:
            blob = image.extractfile(layer)
            assert blob is not None
            with tarfile.open(fileobj=blob, mode="r:*") as contents:
                members = contents.getmembers()
                names.append([m.name for m in members])
                for member in members:
                    if member.name == "package.yaml" and member.isfile():
                        package_yaml = contents.extractfile(member).read()  # type: ignore[union-attr]
    # the runtime image's layer, then the package's layers (package.yaml, the examples)
    assert "venv/bin/function-platform" in names[0]
    assert ["package.yaml"] in names[1:]
    assert [".up/examples.yaml"] in names[1:]
    meta = next(d for d in yaml.safe_load_all(package_yaml) if d)
    assert (meta["kind"], meta["metadata"]["name"]) == ("Function", "function-platform")
    assert config["config"]["Entrypoint"] == ["function-platform"]
    assert config["config"]["User"] == f"{UID}:{UID}"


def test_the_configurations_depend_on_the_released_function(release):
    built = sorted(release.glob("platform-*.xpkg"))
    names = [p.name for p in built]
    assert names == sorted(f"{p.name}-v{__version__}.xpkg" for p in configurations.packages())
    assert len(names) == 10
    for path in built:
        meta = next(d for d in yaml.safe_load_all(xpkg_files(path)["package.yaml"]) if d)
        function = next(d for d in meta["spec"]["dependsOn"] if d["kind"] == "Function")
        assert function["package"] == f"{REGISTRY}/function-platform", path.name
        assert function["version"] == f"^v{__version__}", path.name
        providers = [d for d in meta["spec"]["dependsOn"] if d["kind"] == "Provider"]
        pins = configurations.pinned_providers()
        assert providers, path.name
        for provider in providers:
            name = provider["package"].rsplit("/", 1)[1]
            assert provider["version"] == f"^{pins[name][1]}", (path.name, provider)


def test_the_install_step_installs_the_released_function(release):
    """build/release/40-function.yaml: examples/install/40-function.yaml with the released
    package, the one the Configurations depend on; every other object and field unchanged."""
    source = [d for d in yaml.safe_load_all(configurations.FUNCTION.read_text()) if d]
    released = [d for d in yaml.safe_load_all((release / "40-function.yaml").read_text()) if d]
    assert [d["kind"] for d in released] == [d["kind"] for d in source]
    for before, after in zip(source, released, strict=True):
        if after["kind"] == "Function":
            assert after["spec"]["package"] == TAG
            after["spec"]["package"] = before["spec"]["package"]
        assert after == before


def test_the_image_builds_again_byte_for_byte(release, tmp_path):
    """Same input, same image: tools/build-image.sh again, from the same cached base, commit and
    requirements.lock, writes the release's tarball byte for byte."""
    again = tmp_path / "image.tar"
    result = subprocess.run(
        [str(ROOT / "tools" / "build-image.sh"), "--tag", TAG, "--out", str(again),
         "--python", sys.executable],
        cwd=ROOT, capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    first = release / f"function-platform-v{__version__}-image.tar"
    assert (
        hashlib.sha256(again.read_bytes()).hexdigest()
        == hashlib.sha256(first.read_bytes()).hexdigest()
    ), "two builds of one input differ"
