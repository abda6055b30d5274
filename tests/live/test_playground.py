"""`make playground` driven as docs/playground.md tells a user to: start it, run the commands it
prints (apply the example, wait for Ready, trace, delete), start it again (it says it runs and
prints the same kubeconfig), `make playground-down`; then nothing of it is left running, its
network namespace is gone, its port refuses, and only its logs are left.

It needs none of the session's fixtures: the playground makes its own private namespace (nested
in the one `make test-live` runs pytest in) and its own plane; its state goes to a temporary
PLAYGROUND_DIR, so a user's own playground in .playground/ is never touched.
"""

from __future__ import annotations

import importlib.util
import os
import socket
import subprocess
import sys
import time
from pathlib import Path
from types import ModuleType

import pytest

from tests.live.controlplane import REPO

pytestmark = pytest.mark.live

#: `make playground` to the printed kubeconfig, on a busy 2-core machine (about 90 s measured)
START_WITHIN_S = 600
#: The example's Ready through the printed `kubectl wait` (its --timeout bounds it too)
READY_WITHIN_S = 300
MODULE = "async-actor"


def _playground_module() -> ModuleType:
    """tools/live/playground.py, for its process and namespace helpers."""
    spec = importlib.util.spec_from_file_location("playground", REPO / "tools/live/playground.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def _make(
    target: list[str], env: dict[str, str], timeout: float
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["make", "--no-print-directory", *target],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def _printed(stdout: str) -> list[str]:
    """The commands `make playground` prints after "Next, from ...:" (two-space indented)."""
    lines = stdout.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("Next, from"))
    out = []
    for line in lines[start + 1 :]:
        if not line.startswith("  ") or line.startswith("  ("):
            break
        out.append(line.strip())
    return out


def test_the_playground_runs_the_example_as_printed(tmp_path: Path) -> None:
    pg = _playground_module()
    state_dir = tmp_path / "playground"
    env = {**os.environ, "PLAYGROUND_DIR": str(state_dir)}
    t = time.monotonic()
    up = _make(["playground", f"MODULE={MODULE}"], env, START_WITHIN_S)
    started_s = time.monotonic() - t
    launcher = int((state_dir / "pid").read_text()) if (state_dir / "pid").exists() else None
    try:
        assert up.returncode == 0, f"make playground failed:\n{up.stdout}\n{up.stderr}"
        commands = _printed(up.stdout)
        assert commands[0] == f"export KUBECONFIG={state_dir / 'kubeconfig'}", commands
        assert commands[-1] == "make playground-down", commands
        port = int(pg.read_state(pg.Paths(state_dir))["port"])
        supervisor = next(p for p in pg.descendants(launcher) if pg.is_supervisor(p))
        netns = pg.net_namespace(supervisor)
        assert netns and netns != pg.net_namespace(os.getpid()), (
            "the plane runs in a network namespace of its own"
        )

        again = _make(["playground"], env, 120)
        assert again.returncode == 0, again.stdout + again.stderr
        assert "already running" in again.stdout, again.stdout
        assert _printed(again.stdout) == commands, "a second start prints the same commands"

        user_env = {**env, "KUBECONFIG": commands[0].split("=", 1)[1]}
        took: dict[str, float] = {}
        for line in commands[1:-1]:
            t = time.monotonic()
            run = subprocess.run(
                ["bash", "-c", line],
                cwd=REPO,
                env=user_env,
                text=True,
                capture_output=True,
                timeout=READY_WITHIN_S + 60,
                check=False,
            )
            took[line.split()[1]] = time.monotonic() - t
            assert run.returncode == 0, f"{line}\n{run.stdout}\n{run.stderr}"
            if line.startswith(".bin/crossplane resource trace"):
                # the composite and what it composes, every one Ready
                assert "Queue/" in run.stdout and "Object/" in run.stdout, run.stdout
        print(
            f"\nplayground: make playground {started_s:.0f} s; claim Ready "
            f"{took['wait']:.0f} s after apply; delete {took['delete']:.0f} s"
        )
    finally:
        down = _make(["playground-down"], env, 120)
    assert down.returncode == 0, f"make playground-down failed:\n{down.stdout}\n{down.stderr}"
    assert "stopped" in down.stdout and "LEFT" not in down.stdout, down.stdout
    assert launcher is not None
    assert not pg.alive(launcher) and not pg.descendants(launcher), "processes left running"
    assert not pg.in_namespace(netns), "processes left in the playground's network namespace"
    with socket.socket() as s:
        assert s.connect_ex(("127.0.0.1", port)) != 0, "the forwarded port still answers"
    left = sorted(p.name for p in state_dir.iterdir())
    assert left == ["plane", "playground.log"], left
    assert [p.name for p in (state_dir / "plane").iterdir()] == ["logs"]
    # idempotent
    twice = _make(["playground-down"], env, 60)
    assert twice.returncode == 0 and "No playground running" in twice.stdout, twice.stdout
