"""Maximum connection age (issue 34 item 2): the server closes each client connection after
``--max-connection-age`` (GOAWAY, then ``--max-connection-age-grace`` for calls in flight), so a
client that resolved the function's headless Service once (Crossplane: grpc-go, ``dns:///``,
``round_robin``, crossplane/crossplane#7571, #7585) reconnects, resolves again and reaches
replicas added since. Checked over real gRPC: a TCP proxy in front of the server counts the
connections the client opens while it keeps calling."""

from __future__ import annotations

import contextlib
import socket
import threading
import time
from collections.abc import Iterator

import pytest
from click.testing import CliRunner

from function import cli as cli_module
from function.server import ServerConfig, connection_age_options
from tests.support.cases import module_cases
from tests.support.harness import FunctionClient, start_server


class CountingProxy:
    """Forwards TCP connections from its own port to ``target``, counting them."""

    def __init__(self, target: tuple[str, int]) -> None:
        self.target = target
        self.accepted = 0
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.address = f"127.0.0.1:{self.listener.getsockname()[1]}"
        threading.Thread(target=self._accept, daemon=True).start()

    def _accept(self) -> None:
        while True:
            try:
                client, _ = self.listener.accept()
            except OSError:
                return
            self.accepted += 1
            upstream = socket.create_connection(self.target)
            for a, b in ((client, upstream), (upstream, client)):
                threading.Thread(target=self._pipe, args=(a, b), daemon=True).start()

    @staticmethod
    def _pipe(src: socket.socket, dst: socket.socket) -> None:
        try:
            while data := src.recv(65536):
                dst.sendall(data)
        except OSError:
            pass
        finally:
            for s in (src, dst):
                with contextlib.suppress(OSError):
                    s.shutdown(socket.SHUT_RDWR)

    def close(self) -> None:
        """Stop accepting."""
        self.listener.close()


def _connections_while_calling(seconds: float, **config: float) -> tuple[int, int]:
    """(TCP connections opened, calls answered) calling one server through a counting proxy
    back to back for ``seconds``; every call must succeed."""
    server, address = start_server(**config)
    host, port = address.rsplit(":", 1)
    proxy = CountingProxy((host, int(port)))
    client = FunctionClient(proxy.address)
    request = module_cases()[0].request()
    calls = 0
    try:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            assert not client.run(request).fatal
            calls += 1
            time.sleep(0.02)
    finally:
        client.close()
        proxy.close()
        server.stop()
    return proxy.accepted, calls


def test_the_age_and_grace_reach_grpc_as_milliseconds():
    config = ServerConfig(max_connection_age=30, max_connection_age_grace=20)
    assert connection_age_options(config) == [
        ("grpc.max_connection_age_ms", 30000),
        ("grpc.max_connection_age_grace_ms", 20000),
    ]
    assert connection_age_options(ServerConfig(max_connection_age=0)) == []


def test_a_client_reconnects_after_the_connection_age_and_no_call_fails():
    # age 0.5 s (+/-10% jitter per connection): over 3 s of calls the client must open a new
    # connection several times, each without failing a call
    opened, calls = _connections_while_calling(
        3.0, max_connection_age=0.5, max_connection_age_grace=1.0
    )
    assert calls > 20
    assert opened >= 4, f"{opened} connection(s) in 3 s with a 0.5 s maximum age"


def test_without_an_age_one_connection_serves_every_call():
    opened, calls = _connections_while_calling(2.0, max_connection_age=0)
    assert calls > 20
    assert opened == 1


@pytest.fixture
def captured(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[ServerConfig]]:
    """The ServerConfig the command line builds, instead of serving it."""
    configs: list[ServerConfig] = []

    async def serve(config: ServerConfig) -> None:
        configs.append(config)

    monkeypatch.setattr(cli_module, "serve", serve)
    yield configs


def test_the_flags_set_the_age_and_its_defaults_are_30s_and_2m(captured):
    runner = CliRunner()
    assert runner.invoke(cli_module.cli, ["--insecure"]).exit_code == 0
    assert (captured[0].max_connection_age, captured[0].max_connection_age_grace) == (30, 120)
    result = runner.invoke(
        cli_module.cli, ["--insecure", "--max-connection-age=2m", "--max-connection-age-grace=5s"]
    )
    assert result.exit_code == 0, result.output
    assert (captured[1].max_connection_age, captured[1].max_connection_age_grace) == (120, 5)
    result = runner.invoke(cli_module.cli, ["--insecure", "--max-connection-age=0s"])
    assert result.exit_code == 0, result.output
    assert captured[2].max_connection_age == 0
    result = runner.invoke(cli_module.cli, ["--insecure", "--max-connection-age=soon"])
    assert result.exit_code != 0
    assert "--max-connection-age" in result.output
