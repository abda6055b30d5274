"""``make render CASE=...`` and ``make cli``: choosing cases, and which Crossplane CLI is used."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.support.table import case
from tests.test_e2e_render import render_tool

ROOT = Path(__file__).resolve().parent.parent
CASE_IDS = [case.id for case in render_tool.load_cases()]


def test_unknown_case_is_an_error_that_lists_the_valid_cases(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert render_tool.main(["--case", "cluster/gpc"]) == 2
    err = capsys.readouterr().err
    assert "unknown case cluster/gpc" in err
    assert all(case_id in err for case_id in CASE_IDS)


@pytest.mark.e2e  # make render installs .bin/crossplane first when it is missing
def test_unknown_case_fails_through_make() -> None:
    result = subprocess.run(
        ["make", "--no-print-directory", "render", "CASE=nope/nothing"],
        cwd=ROOT, capture_output=True, text=True, timeout=600, check=False,
    )  # fmt: skip
    assert result.returncode != 0
    assert "unknown case nope/nothing; valid cases:" in result.stderr
    assert "cluster/gcp" in result.stderr


def test_a_case_or_a_module_selects_cases() -> None:
    cases = render_tool.load_cases()
    one, unknown = render_tool.select_cases(cases, ["cluster/gcp"])
    assert [c.id for c in one] == ["cluster/gcp"] and unknown == []
    module, unknown = render_tool.select_cases(cases, ["async-actor"])
    assert {c.module for c in module} == {"async-actor"} and len(module) > 1 and unknown == []


# ---- tools/install-cli.sh: a supported CLI on PATH is used, nothing else is built ----

FAKE_HELP = (
    "--crossplane-binary --required-resources --function-annotations --xrd --observed-resources"
)


def _fake_repo(tmp_path: Path) -> Path:
    """A repository with the real install script and CLI pin, and a build.sh that stands for
    the engine's (it only says where the engine is, as the real one does once it is cached)."""
    repo = tmp_path / "repo"
    (repo / "tools" / "cli").mkdir(parents=True)
    (repo / "tools" / "live").mkdir(parents=True)
    shutil.copy(ROOT / "tools" / "install-cli.sh", repo / "tools" / "install-cli.sh")
    shutil.copy(ROOT / "tools" / "cli" / "go.mod", repo / "tools" / "cli" / "go.mod")
    _fake_program(
        repo / "tools" / "live",
        "build.sh",
        f"mkdir -p {repo}/.bin && touch {repo}/.bin/crossplane-v9.9.9 && "
        f'echo "crossplane {repo}/.bin/crossplane-v9.9.9"',
    )
    return repo


def _fake_program(folder: Path, name: str, body: str) -> None:
    folder.mkdir(exist_ok=True)
    path = folder / name
    path.write_text(f"#!/usr/bin/env bash\n{body}\n")
    path.chmod(0o755)


def _fake_crossplane(folder: Path, version: str, help_text: str = FAKE_HELP) -> None:
    _fake_program(
        folder, "crossplane",
        f'case "$1" in version) echo "Client Version: {version}";; '
        f'composition) echo "{help_text}";; resource) exit 0;; *) exit 9;; esac',
    )  # fmt: skip


def _install(
    repo: Path, path_dirs: list[Path], go: str = "/nonexistent/go"
) -> subprocess.CompletedProcess[str]:
    # Only the fake programs and the basic tools; a real go or crossplane must not be found.
    basics = path_dirs[0] / "basics"
    basics.mkdir(exist_ok=True)
    for tool in (
        "bash",
        "dirname",
        "basename",
        "sed",
        "grep",
        "awk",
        "head",
        "mkdir",
        "ln",
        "cp",
        "mv",
        "rm",
        "touch",
        "env",
    ):
        found = shutil.which(tool)
        assert found, tool
        link = basics / tool
        if not link.exists():
            link.symlink_to(found)
    env = {**os.environ, "PATH": os.pathsep.join(str(d) for d in [*path_dirs, basics]), "GO": go}
    return subprocess.run(
        ["bash", str(repo / "tools" / "install-cli.sh")],
        env=env, capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip


def test_the_pinned_cli_is_v2_5_and_the_engine_v2_4() -> None:
    """What the goldens were rendered with: say so in one place, and keep the pins to it."""
    cli_mod = (ROOT / "tools" / "cli" / "go.mod").read_text()
    core_mod = (ROOT / "tools" / "live" / "crossplane" / "go.mod").read_text()
    assert "github.com/crossplane/cli/v2 v2.5.0" in cli_mod
    assert f"github.com/crossplane/crossplane/v2 {render_tool.ENGINE_VERSION}" in core_mod
    assert f"github.com/crossplane/crossplane/apis/v2 {render_tool.ENGINE_VERSION}" in core_mod


def test_a_supported_crossplane_on_path_is_linked_not_built(tmp_path: Path) -> None:
    repo, fakes = _fake_repo(tmp_path), tmp_path / "fakes"
    _fake_crossplane(fakes, "v2.5.3")
    _fake_program(fakes, "go", "echo go must not run >&2; exit 3")
    result = _install(repo, [fakes], go=str(fakes / "go"))
    assert result.returncode == 0, result.stderr
    assert (repo / ".bin" / "crossplane").resolve() == (fakes / "crossplane").resolve()
    assert "using" in result.stdout and "v2.5.3" in result.stdout
    assert (repo / ".bin" / "crossplane-core").resolve() == repo / ".bin" / "crossplane-v9.9.9"


@pytest.mark.parametrize(
    ("version", "help_text"),
    [
        case(
            "v2.2.1 is older than the pinned CLI: it is not used, the pinned v2.5.0 is "
            "built instead, so goldens never come from an older render",
            "v2.2.1",
            FAKE_HELP,
        ),  # crank's era: `crossplane render`, no engine
        case(
            "v2.4.0 (the engine's version, not the CLI's) is not a supported CLI: the "
            "pinned one is built",
            "v2.4.0",
            FAKE_HELP,
        ),  # another minor: its output is not what the goldens hold
        case(
            "a newer minor (v2.6.0) may render differently: not trusted until pinned, the "
            "pinned one is built",
            "v2.6.0",
            FAKE_HELP,
        ),
        case(
            "a v2.5 CLI without --crossplane-binary cannot render with our pinned engine: "
            "it is refused though its version matches",
            "v2.5.0",
            FAKE_HELP.replace("--crossplane-binary ", ""),
        ),  # no local engine flag
    ],
)
def test_an_unsupported_crossplane_is_skipped_and_the_pinned_one_built(
    tmp_path: Path, version: str, help_text: str
) -> None:
    repo, fakes = _fake_repo(tmp_path), tmp_path / "fakes"
    _fake_crossplane(fakes, version, help_text)
    _fake_program(fakes, "go", 'case "$1" in build) echo BUILD; exit 4;; esac')
    result = _install(repo, [fakes], go=str(fakes / "go"))
    assert "is not a supported Crossplane CLI" in result.stderr
    assert "building the Crossplane CLI v2.5.0" in result.stdout and "BUILD" in result.stdout
    assert result.returncode != 0
    assert not (repo / ".bin" / "crossplane").exists()


def test_the_check_mode_accepts_only_a_supported_cli(tmp_path: Path) -> None:
    fakes = tmp_path / "fakes"
    _fake_crossplane(fakes, "v2.5.0")
    check = [str(ROOT / "tools" / "install-cli.sh"), "--check", str(fakes / "crossplane")]
    ok = subprocess.run(check, capture_output=True, text=True, timeout=60, check=False)
    assert ok.returncode == 0 and ok.stdout.strip() == "v2.5.0"
    _fake_crossplane(fakes, "v2.2.1")
    old = subprocess.run(check, capture_output=True, text=True, timeout=60, check=False)
    assert old.returncode != 0


def test_without_a_cli_or_go_it_says_what_to_install(tmp_path: Path) -> None:
    repo = _fake_repo(tmp_path)
    empty = tmp_path / "empty"
    empty.mkdir()
    result = _install(repo, [empty])
    assert result.returncode == 1
    assert "no supported crossplane CLI on PATH and no go" in result.stderr
