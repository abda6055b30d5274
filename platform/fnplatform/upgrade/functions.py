"""The two functions a preview renders with: the running release and the candidate.

Each is one of:

- a **git revision** of this repository (``v0.1.0``, ``de7f94b``): its ``function/`` and
  ``platform/`` trees are extracted (``git archive``) into the work folder and served there with
  ``python -m function --insecure`` by this interpreter. This is how a platform team gets the
  release it runs: the release is a commit of the repository it installed from, and the
  function installed in the cluster cannot be called from outside it (Crossplane talks to it
  over mutual TLS with certificates only Crossplane holds, and the render engine's Development
  runtime dials without TLS);
- a **source tree** (a directory holding ``function/`` and ``platform/``), served the same way:
  this checkout, another checkout, an unpacked release;
- the **address** (``host:port``) of a function already served without TLS (``make serve``,
  ``python -m function --insecure``, a port-forward to a debug deployment).

Only the Python packages are this interpreter's: a release whose dependencies differ needs its
own environment, served by address.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import socket
import subprocess
import sys
import tarfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from fnplatform.upgrade.inputs import BadInputError

#: The checkout this package lives in (``platform/fnplatform/upgrade/`` three levels down).
CHECKOUT = Path(__file__).resolve().parents[3]
ADDRESS = re.compile(r"^(?P<host>[A-Za-z0-9.\-]+|\[[0-9a-fA-F:]+\]):(?P<port>\d{1,5})$")
START_TIMEOUT_S = 60.0


@dataclass(frozen=True)
class Served:
    """A function the render engine can dial: its address and what it is, for the report."""

    address: str
    description: str


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _listening(host: str, port: int, timeout_s: float = 0.5) -> bool:
    with contextlib.suppress(OSError), socket.create_connection((host, port), timeout_s):
        return True
    return False


def _git(repo: Path, *args: str, binary: bool = False) -> bytes:
    result = subprocess.run(["git", "-C", str(repo), *args], capture_output=True, check=False)
    if result.returncode != 0:
        reason = result.stderr.decode(errors="replace").strip().splitlines()
        raise BadInputError(f"git {' '.join(args)}: {(reason or ['failed'])[-1]}")
    return result.stdout if binary else result.stdout.strip()


def _is_tree(path: Path) -> bool:
    return (path / "function" / "__main__.py").is_file() and (path / "platform").is_dir()


def extract(repo: Path, revision: str, target: Path) -> str:
    """``function/`` and ``platform/`` of ``revision`` into ``target``; the full commit."""
    commit = _git(repo, "rev-parse", "--verify", "--quiet", f"{revision}^{{commit}}").decode()
    archive = _git(repo, "archive", "--format=tar", commit, "function", "platform", binary=True)
    target.mkdir(parents=True, exist_ok=True)
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(target, filter="data")
    return commit


@contextlib.contextmanager
def served(what: str, role: str, workdir: Path, repo: Path = CHECKOUT) -> Iterator[Served]:
    """``what`` (a revision, a source tree or an address) served for the duration."""
    match = ADDRESS.match(what)
    if match and not Path(what).exists():
        host, port = match["host"].strip("[]"), int(match["port"])
        if not _listening(host, port, 3.0):
            raise BadInputError(f"{role} {what}: nothing listens there (connection refused)")
        yield Served(what, f"the function served at {what}")
        return
    path = Path(what)
    if path.is_dir():
        if not _is_tree(path):
            raise BadInputError(f"{role} {what}: not a source tree (no function/ and platform/)")
        tree, description = path.resolve(), f"the source tree {path}"
    else:
        tree = workdir / f"{role}-tree"
        commit = extract(repo, what, tree)
        if not _is_tree(tree):
            raise BadInputError(f"{role} {what}: revision {commit[:12]} has no function/")
        description = f"git {what} ({commit[:12]})"
    with _serve(tree, role, workdir / f"{role}-function.log") as address:
        yield Served(address, f"{description}, served at {address}")


@contextlib.contextmanager
def _serve(tree: Path, role: str, log_path: Path) -> Iterator[str]:
    """``python -m function --insecure`` of ``tree`` on a free local port."""
    port = _free_port()
    env = {
        **os.environ,
        "PYTHONPATH": os.pathsep.join([str(tree / "platform"), str(tree)]),
        "PYTHONDONTWRITEBYTECODE": "1",
    }
    command = [
        sys.executable, "-m", "function", "--insecure",
        "--address", f"127.0.0.1:{port}", "--metrics-address=",
    ]  # fmt: skip
    with log_path.open("wb") as log:
        process = subprocess.Popen(command, cwd=tree, env=env, stdout=log, stderr=subprocess.STDOUT)
        try:
            deadline = time.monotonic() + START_TIMEOUT_S
            while not _listening("127.0.0.1", port):
                if process.poll() is not None or time.monotonic() > deadline:
                    said = log_path.read_text(errors="replace").strip().splitlines()
                    raise BadInputError(
                        f"{role}: the function of {tree} did not start: "
                        f"{(said or ['no output'])[-1]}"
                    )
                time.sleep(0.1)
            yield f"127.0.0.1:{port}"
        finally:
            process.terminate()
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
