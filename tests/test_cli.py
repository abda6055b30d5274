"""The command a user runs (issue 13, items 12 and 13): flags, request logs, a busy port.

Each test starts ``python -m function`` as a real process, as ``make serve`` and Crossplane do.
"""

from __future__ import annotations

import json
import os
import select
import signal
import socket
import subprocess
import sys
import time
import tomllib
from collections.abc import Iterator
from pathlib import Path

import pytest

from function.__version__ import __version__
from tests.support.cases import cluster_case
from tests.support.harness import FunctionClient, free_port
from tests.test_e2e_render import render_tool

ROOT = Path(__file__).resolve().parent.parent
ENV = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "platform"), str(ROOT)])}


def _function(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "function", *args],
        cwd=ROOT,
        env=ENV,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def _serve(port: int, *flags: str, merge_stderr: bool = True) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "function", "--insecure", "--address", f"localhost:{port}",
         "--metrics-address=", *flags],
        cwd=ROOT, env=ENV, stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT if merge_stderr else subprocess.PIPE, text=True,
    )  # fmt: skip


def _stop(process: subprocess.Popen[str]) -> str:
    process.send_signal(signal.SIGTERM)
    output, _ = process.communicate(timeout=60)
    return output


@pytest.fixture
def served() -> Iterator[tuple[int, subprocess.Popen[str]]]:
    port = free_port()
    process = _serve(port, "--debug", "--log-format", "json", "--grace-period", "1")
    try:
        render_tool.wait_for_port(port, process)
        yield port, process
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()


def test_version_is_the_package_version():
    result = _function("--version")
    assert result.returncode == 0
    assert result.stdout.strip() == f"function-platform, version {__version__}"
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert project["tool"]["hatch"]["version"]["path"] == "function/__version__.py"


def test_help_names_the_tls_environment_variable_and_the_log_flags():
    result = _function("--help")
    assert result.returncode == 0
    assert "TLS_SERVER_CERTS_DIR" in result.stdout
    assert "--log-format" in result.stdout and "--version" in result.stdout


def test_a_second_server_on_a_busy_port_fails_to_start_and_says_why(served):
    port, first = served
    second = _function("--insecure", "--address", f"localhost:{port}")
    assert second.returncode == 1
    assert f"cannot listen on localhost:{port}: the port is already in use" in second.stderr
    assert first.poll() is None  # the first server keeps serving


def test_debug_logs_one_line_per_request_without_values(served):
    port, process = served
    case = cluster_case("gcp")
    secrets = {"cluster": dict(case.secrets)}
    client = FunctionClient(f"localhost:{port}")
    try:
        for tag in ("first", "second"):
            rendered = client.run(case.request(connection=secrets, tag=tag))
            assert rendered.fatal == []
    finally:
        client.close()
    output = _stop(process)
    lines = [json.loads(line) for line in output.splitlines() if line.startswith("{")]
    requests = [line for line in lines if line.get("msg") == "request"]
    assert [r["tag"] for r in requests] == ["first", "second"]
    for logged in requests:
        assert logged["level"] == "debug"
        assert logged["composite"] == f"XCluster/{case.xr_name}"
        assert logged["module"] == "cluster"
        assert logged["resources"] == len(rendered.resources) > 0
        assert logged["results"] == len(rendered.results)
        assert isinstance(logged["duration_ms"], float)
    for secret in case.secrets.values():
        assert secret.decode() not in output
    assert case.composite["spec"]["parameters"]["domain"] not in output  # no spec values


def _first_line_with(process: subprocess.Popen[str], text: str, timeout: float = 60) -> str:
    """The first line of the process's output holding ``text``: the server logs "serving"
    just after its port opens, so a test that stops it once the port answers may stop it
    before the line is written."""
    assert process.stdout is not None
    deadline = time.monotonic() + timeout
    while (remaining := deadline - time.monotonic()) > 0:
        ready, _, _ = select.select([process.stdout], [], [], remaining)
        if not ready:
            break
        line = process.stdout.readline()
        if not line:
            break
        if text in line:
            return line
    return ""


def test_console_log_format_is_for_people():
    port = free_port()
    process = _serve(port, "--log-format", "console")
    try:
        serving = _first_line_with(process, "serving")
    finally:
        _stop(process)
    assert serving and not serving.startswith("{")


def _one_request(port: int, process: subprocess.Popen[str]) -> None:
    """Once the server answers on ``port``, one RunFunction of the GCP cluster case."""
    render_tool.wait_for_port(port, process)
    client = FunctionClient(f"localhost:{port}")
    client.run(cluster_case("gcp").request())
    client.close()


def test_without_debug_there_is_no_request_line(tmp_path: Path):
    port = free_port()
    process = _serve(port)
    try:
        _one_request(port, process)
    finally:
        output = _stop(process)
    assert '"msg": "serving"' in output
    assert '"msg": "request"' not in output


def test_short_help_is_the_help():
    short, long = _function("-h"), _function("--help")
    assert short.returncode == 0, short.stderr
    assert short.stdout == long.stdout


def test_logs_go_to_stderr_and_stdout_stays_clean():
    """A by-hand render reads YAML from the CLI while the function runs beside it in the same
    terminal: nothing of the function's may land on stdout."""
    port = free_port()
    process = _serve(port, "--debug", "--log-format", "json", merge_stderr=False)
    try:
        _one_request(port, process)
    finally:
        process.send_signal(signal.SIGTERM)
        out, err = process.communicate(timeout=60)
    assert out == ""
    messages = [json.loads(line)["msg"] for line in err.splitlines() if line.startswith("{")]
    assert "serving" in messages and "request" in messages


def test_a_busy_metrics_port_is_one_line_naming_the_flag():
    """The metrics default (:8080) is often taken on a laptop: say which flag moves it."""
    busy = socket.socket()
    busy.bind(("127.0.0.1", 0))
    busy.listen()
    try:
        taken = busy.getsockname()[1]
        result = _function(
            "--insecure",
            "--address",
            f"localhost:{free_port()}",
            "--metrics-address",
            f"127.0.0.1:{taken}",
        )
    finally:
        busy.close()
    assert result.returncode == 1
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1, result.stderr
    assert f"cannot serve metrics on 127.0.0.1:{taken}" in lines[0]
    assert "--metrics-address" in lines[0] and "Traceback" not in result.stderr
