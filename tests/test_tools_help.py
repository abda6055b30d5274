"""Every tool a user may run answers ``--help`` (and ``-h``) with its usage, and writes nothing.

A generator that ignored ``--help`` used to rewrite the files it owns; one that parsed its
arguments by hand ended in a traceback. Each tool is run as a user would, from the repository
root, and the work tree is compared before and after.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
TOOLS = sorted(
    [
        *ROOT.glob("tools/*.py"),
        *ROOT.glob("tools/live/*.py"),
        *ROOT.glob("tests/render-cases/*/make_observed.py"),
    ]
)


def _tree_state() -> str:
    """What git sees of the work tree: a tool that wrote a file changes it."""
    return subprocess.run(
        ["git", "status", "--porcelain", "--untracked-files=all"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout


@pytest.mark.parametrize("flag", ["--help", "-h"])
@pytest.mark.parametrize("tool", TOOLS, ids=[str(t.relative_to(ROOT)) for t in TOOLS])
def test_a_tool_answers_help_and_writes_nothing(tool: Path, flag: str):
    before = _tree_state()
    result = subprocess.run(
        [sys.executable, str(tool), flag],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
        env={**os.environ, "PYTHONPATH": str(ROOT / "platform")},
    )
    assert result.returncode == 0, f"{tool.name} {flag}: {result.stderr}"
    assert result.stdout.startswith("usage: "), f"{tool.name} {flag} printed no usage"
    assert "Traceback" not in result.stderr
    assert _tree_state() == before, f"{tool.name} {flag} changed the work tree"


def test_make_help_lists_every_documented_target():
    """``make`` alone is ``make help``: each target with a ``## name: text`` comment, once."""
    documented = re.findall(r"^## ([a-z-]+): ", (ROOT / "Makefile").read_text(), re.MULTILINE)
    result = subprocess.run(
        ["make", "--no-print-directory"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    listed = re.findall(r"^  make (\S+)", result.stdout, re.MULTILINE)
    assert listed == documented
    assert {"render", "test", "setup", "help"} <= set(listed)
