"""The server as Crossplane runs it: mTLS, shutdown, startup errors, determinism, concurrency, size.

Subprocess tests run ``python -m function`` exactly as the container does; the rest use the
production server (``function.server``) in a thread. Responses are compared as raw bytes.
"""

from __future__ import annotations

import datetime
import functools
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import grpc
import providersim
import pytest
from crossplane.function.proto.v1 import run_function_pb2 as fnv1

from function.server import ServerConfig
from tests.support.cases import ModuleCase, cluster_case, cluster_composite, converge, module_cases
from tests.support.harness import (
    FunctionClient,
    Rendered,
    ServerThread,
    free_port,
    start_server,
)
from tests.support.table import case

ROOT = Path(__file__).resolve().parent.parent
METHOD = "/apiextensions.fn.proto.v1.FunctionRunnerService/RunFunction"
ENV = {**os.environ, "PYTHONPATH": f"{ROOT}{os.pathsep}{ROOT / 'platform'}"}


def raw_call(channel: grpc.Channel) -> grpc.UnaryUnaryMultiCallable:
    """RunFunction with bytes in and bytes out: what goes over the wire, compared exactly."""
    return channel.unary_unary(METHOD, request_serializer=None, response_deserializer=None)


def composable(case: ModuleCase, client: FunctionClient) -> ModuleCase:
    """``case``, or a skip when its cloud or module is not in this checkout yet."""
    rendered = client.run(case.request())
    for message in rendered.fatal:
        if "cannot provide" in message:
            pytest.skip(message)
    return case


# -- mTLS ------------------------------------------------------------------------------------


def _key():
    from cryptography.hazmat.primitives.asymmetric import ec

    return ec.generate_private_key(ec.SECP256R1())


def _cert(subject: str, key, issuer_name: str, issuer_key, *, ca: bool, sans=()):
    import ipaddress

    from cryptography import x509
    from cryptography.hazmat.primitives import hashes
    from cryptography.x509.oid import NameOID

    now = datetime.datetime.now(datetime.UTC)
    builder = (
        x509.CertificateBuilder()
        .subject_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, subject)]))
        .issuer_name(x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, issuer_name)]))
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + datetime.timedelta(hours=1))
        .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True)
    )
    if sans:
        names = [
            x509.DNSName("localhost"),
            *(x509.IPAddress(ipaddress.ip_address(ip)) for ip in sans),
        ]
        builder = builder.add_extension(x509.SubjectAlternativeName(names), critical=False)
    return builder.sign(issuer_key, hashes.SHA256())


def _pem(obj) -> bytes:
    from cryptography.hazmat.primitives import serialization

    if hasattr(obj, "private_bytes"):
        return obj.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )
    return obj.public_bytes(serialization.Encoding.PEM)


@pytest.fixture(scope="module")
def pki(tmp_path_factory) -> dict[str, bytes | Path]:
    """A CA, a server certificate in a Crossplane-style certs dir, and client certificates."""
    ca_key, rogue_key = _key(), _key()
    ca = _cert("function-ca", ca_key, "function-ca", ca_key, ca=True)
    rogue_ca = _cert("rogue-ca", rogue_key, "rogue-ca", rogue_key, ca=True)
    server_key, client_key, rogue_client_key = _key(), _key(), _key()
    server = _cert(
        "function-platform", server_key, "function-ca", ca_key, ca=False, sans=("127.0.0.1",)
    )
    client = _cert("crossplane", client_key, "function-ca", ca_key, ca=False)
    rogue_client = _cert("crossplane", rogue_client_key, "rogue-ca", rogue_key, ca=False)
    certs = tmp_path_factory.mktemp("certs")
    (certs / "tls.crt").write_bytes(_pem(server))
    (certs / "tls.key").write_bytes(_pem(server_key))
    (certs / "ca.crt").write_bytes(_pem(ca))
    return {
        "dir": certs,
        "ca": _pem(ca),
        "client_crt": _pem(client),
        "client_key": _pem(client_key),
        "rogue_crt": _pem(rogue_client),
        "rogue_key": _pem(rogue_client_key),
        "rogue_ca": _pem(rogue_ca),
    }


@pytest.fixture(scope="module")
def tls_server(pki) -> Iterator[str]:
    address = f"127.0.0.1:{free_port()}"
    server = ServerThread(ServerConfig(address=address, tls_certs_dir=str(pki["dir"]))).start()
    yield address
    server.stop()


def _tls_client(address: str, pki, *, cert: str | None) -> FunctionClient:
    if cert is None:
        creds = grpc.ssl_channel_credentials(root_certificates=pki["ca"])
    else:
        creds = grpc.ssl_channel_credentials(
            root_certificates=pki["ca"],
            private_key=pki[f"{cert}_key"],
            certificate_chain=pki[f"{cert}_crt"],
        )
    return FunctionClient(address, creds)


def test_mtls_client_with_a_certificate_from_the_ca_is_served(tls_server, pki):
    client = _tls_client(tls_server, pki, cert="client")
    try:
        rendered = client.run(cluster_case("aws").request())
    finally:
        client.close()
    assert all("Traceback" not in m for m in rendered.messages)


@pytest.mark.parametrize("cert", [None, "rogue"], ids=["no-certificate", "other-ca"])
def test_mtls_client_without_a_valid_certificate_is_refused(tls_server, pki, cert):
    client = _tls_client(tls_server, pki, cert=cert)
    try:
        with pytest.raises(grpc.RpcError) as refused:
            client.v1.RunFunction(cluster_case("aws").request(), timeout=5)
    finally:
        client.close()
    assert refused.value.code() == grpc.StatusCode.UNAVAILABLE


def test_plaintext_client_is_refused_by_a_tls_server(tls_server):
    client = FunctionClient(tls_server)
    try:
        with pytest.raises(grpc.RpcError):
            client.v1.RunFunction(cluster_case("aws").request(), timeout=5)
    finally:
        client.close()


# -- the process: startup and shutdown -------------------------------------------------------


def spawn(*args: str) -> subprocess.Popen[str]:
    """``python -m function`` with ``args``."""
    return subprocess.Popen(
        [sys.executable, "-m", "function", "--metrics-address=", *args],
        cwd=ROOT,
        env=ENV,
        text=True,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )


def wait_serving(address: str, process: subprocess.Popen[str], timeout: float = 30) -> None:
    """Block until ``address`` answers, failing with the server's output if it died."""
    channel = grpc.insecure_channel(address)
    try:
        grpc.channel_ready_future(channel).result(timeout=timeout)
    except grpc.FutureTimeoutError:
        process.kill()
        out, err = process.communicate()
        pytest.fail(f"server did not start: {out}\n{err}")
    finally:
        channel.close()


#: The served process's --grace-period: what the SIGTERM test holds the server to
GRACE_PERIOD = 15.0


@pytest.fixture
def served() -> Iterator[tuple[str, subprocess.Popen[str]]]:
    """A function process serving insecurely on a free port; stopped after the test."""
    address = f"127.0.0.1:{free_port()}"
    process = spawn("--insecure", "--address", address, "--grace-period", str(GRACE_PERIOD))
    wait_serving(address, process)
    yield address, process
    if process.poll() is None:
        process.kill()
    process.communicate()


@pytest.mark.parametrize(
    ("args", "says"),
    [
        case(
            "without --insecure the server needs TLS certificates: it exits saying so, as "
            "Crossplane's function SDKs do, instead of serving in clear",
            (),
            "no TLS certificates",
        ),
        case(
            "a TLS directory that cannot be read exits non-zero naming the certificates, "
            "not with a traceback",
            ("--tls-certs-dir", "/nonexistent/certs"),
            "cannot read TLS certificates",
        ),
        case(
            "an address that cannot be listened on exits non-zero saying cannot listen "
            "on, so a bad Deployment arg is readable in the pod log",
            ("--insecure", "--address", "not-an-address:xyz"),
            "cannot listen on",
        ),
        case(
            "a message size that is no size exits non-zero saying so, before the server starts",
            ("--insecure", "--max-send-message-size", "lots"),
            "is not a size",
        ),
    ],
    ids=["no-certificates", "missing-certificates", "bad-address", "bad-size"],
)
def test_startup_failure_exits_non_zero_with_a_readable_message(args, says):
    process = spawn(*args)
    _, err = process.communicate(timeout=60)
    assert process.returncode != 0
    assert says in err
    assert "Traceback" not in err


@functools.cache
def big_cluster() -> tuple[fnv1.RunFunctionRequest, int]:
    """A converged 1000-pool AWS cluster request (slow to compose) and its response size."""
    from function.dispatch import run

    case = cluster_case("aws")
    big = case.with_composite(cluster_composite("aws", pools=1000))  # same observed status
    rendered, observed = converge(lambda req: Rendered(run(req)), big)
    # Each kind's attributes only, without the ids every resource reports: with them, three
    # thousand observed resources exceed the 4 MiB the server receives by default, and this
    # is about the response.
    observed = {
        name: providersim.report(body, ids=False, keep_empty=False)
        for name, body in observed.items()
    }
    return big.request(observed=observed), rendered.response.ByteSize()


def test_sigterm_lets_in_flight_requests_finish_then_exits(served):
    """SIGTERM with four slow calls in flight: each gets its whole answer (a call still running
    at the grace would be cancelled), the server drains within its configured grace by its own
    clock (the "stopping" and "stopped" log events), and the process then exits. Measured by
    the server's events rather than the test's wall clock: on a loaded machine the signal's
    delivery and the interpreter's exit take seconds that say nothing about the server."""
    address, process = served
    big, _ = big_cluster()
    requests = []
    for index in range(4):  # distinct composites: no answer can come from the response cache
        distinct = fnv1.RunFunctionRequest()
        distinct.CopyFrom(big)
        metadata = distinct.observed.composite.resource.fields["metadata"].struct_value
        metadata.fields["annotations"].struct_value.fields["test/request"].string_value = str(index)
        requests.append(distinct.SerializeToString())
    channel = grpc.insecure_channel(address, options=[("grpc.max_receive_message_length", -1)])
    call = raw_call(channel)
    with ThreadPoolExecutor(4) as pool:
        in_flight = [pool.submit(call, body, timeout=60) for body in requests]
        time.sleep(0.5)
        assert not all(f.done() for f in in_flight), "requests finished before SIGTERM"
        process.send_signal(signal.SIGTERM)
        answers = [fnv1.RunFunctionResponse.FromString(f.result()) for f in in_flight]
    # exits at all (a hang fails here), however slowly a loaded machine tears a process down
    out, err = process.communicate(timeout=GRACE_PERIOD + 60)
    channel.close()
    assert process.returncode in (0, -signal.SIGTERM), err
    lines = [line for line in (out + err).splitlines() if line.startswith("{")]
    wanted = ("stopping", "stopped")
    events = {e["msg"]: e for e in map(json.loads, lines) if e.get("msg") in wanted}
    assert set(events) == {"stopping", "stopped"}, (out, err)
    assert events["stopping"]["grace_period"] == GRACE_PERIOD
    # grpc cancels what is still running at the grace, so a drain past it (plus the event
    # loop's turn) means the grace was not kept
    assert events["stopped"]["drained_s"] <= GRACE_PERIOD + 1, events["stopped"]
    for answer in answers:
        assert not [r for r in answer.results if r.severity == fnv1.SEVERITY_FATAL]
        assert len(answer.desired.resources) > 1000


def test_sigterm_on_an_idle_server_exits_promptly(served):
    _, process = served
    process.send_signal(signal.SIGTERM)
    process.wait(timeout=5)
    assert process.returncode == 0


# -- determinism ------------------------------------------------------------------------------


def _requests() -> list[fnv1.RunFunctionRequest]:
    from function.dispatch import run

    found = []
    for module_case in module_cases():
        found.append(module_case.request())
        _, observed = converge(lambda req: Rendered(run(req)), module_case)
        found.append(module_case.request(observed=observed))
    return found


def test_repeated_calls_are_byte_identical(client):
    call = raw_call(client.channel)
    for req in _requests():
        payload = req.SerializeToString()
        answers = {call(payload, timeout=30) for _ in range(5)}
        assert len(answers) == 1


def test_two_processes_answer_byte_identically(served):
    first_address, _ = served
    second_address = f"127.0.0.1:{free_port()}"
    second = spawn("--insecure", "--address", second_address)
    try:
        wait_serving(second_address, second)
        channels = [grpc.insecure_channel(a) for a in (first_address, second_address)]
        for req in _requests():
            payload = req.SerializeToString()
            one, two = (raw_call(c)(payload, timeout=30) for c in channels)
            assert one == two
        for channel in channels:
            channel.close()
    finally:
        second.terminate()
        second.communicate(timeout=20)


# -- concurrency -------------------------------------------------------------------------------


def test_concurrent_requests_give_exactly_the_serial_responses(client):
    cases = module_cases()
    payloads = []
    for index in range(300):
        case = cases[index % len(cases)].renamed(f"composite-{index}")
        payloads.append(case.request(tag=f"t{index}").SerializeToString())
    call = raw_call(client.channel)
    serial = [call(p, timeout=60) for p in payloads]
    order = list(range(len(payloads)))[::7] + [i for i in range(len(payloads)) if i % 7]
    with ThreadPoolExecutor(64) as pool:
        futures = {i: pool.submit(call, payloads[i], timeout=120) for i in order}
        concurrent = [futures[i].result() for i in range(len(payloads))]
    assert len(set(serial)) == len(serial), "different composites must give different answers"
    assert concurrent == serial


# -- size --------------------------------------------------------------------------------------


def _size_of(client: FunctionClient, req: fnv1.RunFunctionRequest) -> int:
    return client.run(req).response.ByteSize()


def _served_with_limit(req: fnv1.RunFunctionRequest, limit: int) -> Rendered:
    server, address = start_server(max_send_message_size=limit)
    small = FunctionClient(address)
    try:
        return small.run(req)
    finally:
        small.close()
        server.stop()


def test_response_near_the_limit_carries_a_warning(client):
    req = composable(cluster_case("aws"), client).request()
    size = _size_of(client, req)
    for limit in (int(size / 0.9), size + 1000):
        rendered = _served_with_limit(req, limit)
        assert rendered.response.ByteSize() <= limit
        assert rendered.fatal == []
        assert any(f"send limit of {limit} bytes" in m for m in rendered.warnings), limit


def test_a_response_that_fits_is_never_failed_by_its_own_warning(client):
    req = composable(cluster_case("aws"), client).request()
    size = _size_of(client, req)
    for limit in (size, size + 10):  # fits, but not with the warning added
        rendered = _served_with_limit(req, limit)
        assert rendered.fatal == [], limit
        assert rendered.response.ByteSize() <= limit
        assert rendered.resources, limit


def test_response_over_the_limit_is_a_clear_fatal_result(client):
    case = composable(cluster_case("aws"), client)
    req = case.request()
    size = _size_of(client, req)
    server, address = start_server(max_send_message_size=size // 2)
    small = FunctionClient(address)
    try:
        rendered = small.run(req)
    finally:
        small.close()
        server.stop()
    assert len(rendered.fatal) == 1
    assert "exceeds the send limit" in rendered.fatal[0]
    assert "--max-send-message-size" in rendered.fatal[0]


def test_tiny_send_limit_from_the_command_line():
    address = f"127.0.0.1:{free_port()}"
    process = spawn("--insecure", "--address", address, "--max-send-message-size", "2000B")
    try:
        wait_serving(address, process)
        client = FunctionClient(address)
        rendered = client.run(cluster_case("aws").request())
        client.close()
    finally:
        process.terminate()
        process.communicate(timeout=20)
    if any("cannot provide" in m for m in rendered.fatal):
        pytest.skip("aws cloud not in this checkout")
    assert len(rendered.fatal) == 1
    assert "exceeds the send limit of 2000 bytes" in rendered.fatal[0]


def test_thousand_pool_cluster_fits_the_default_limit_or_fails_clearly(client):
    composable(cluster_case("aws"), client)
    big, size = big_cluster()
    rendered = client.run(big)
    limit = 4 * 1024 * 1024
    if size <= limit:
        assert not rendered.fatal, rendered.fatal
        assert len(rendered.resources) > 1000
    else:
        assert any("exceeds the send limit" in m for m in rendered.fatal)


# -- where a request is composed --------------------------------------------------------------


class _CountingExecutor(ThreadPoolExecutor):
    """A thread pool that counts what it is given to run."""

    def __init__(self) -> None:
        super().__init__(1)
        self.submitted = 0

    def submit(self, fn, /, *args, **kwargs):  # type: ignore[no-untyped-def, override]
        self.submitted += 1
        return super().submit(fn, *args, **kwargs)


@pytest.mark.parametrize("processes", [0, 2])
def test_small_requests_are_composed_on_the_event_loop_and_the_rest_in_the_executor(processes):
    """A first pass of a few KiB is composed on the event loop (no hand-over to a thread and
    back, a quarter of its cost), and so is a larger one whose pass is reused
    (fnplatform.engine.reuse); anything else, and everything when worker processes compose, goes to
    the executor. Every answer is what composing gives."""
    import asyncio

    from fnplatform.api.step_input import PhaseTTL

    from function.dispatch import compose_bytes, run
    from function.server import INLINE_MAX_BYTES, INLINE_REUSE_MAX_BYTES, Handler

    case = cluster_case("gcp").renamed(f"where-composed-{processes}")  # nothing reused yet
    small = case.request().SerializeToString()
    _, observed = converge(lambda req: Rendered(run(req)), case)
    large = case.request(observed=observed).SerializeToString()
    again = case.request(observed=observed, tag="again").SerializeToString()
    assert len(small) <= INLINE_MAX_BYTES < len(large) <= INLINE_REUSE_MAX_BYTES
    executor = _CountingExecutor()
    handler = Handler(
        executor, 4 * 1024 * 1024, inline_max=INLINE_MAX_BYTES if processes == 0 else 0
    )
    try:
        expected = (
            (small, 0 if processes == 0 else 1),
            (large, 1),
            (again, 0 if processes == 0 else 1),
        )  # the pass of ``large``, reused
        for body, submitted in expected:
            executor.submitted = 0
            answer = asyncio.run(handler.run_function(body, None))  # type: ignore[arg-type]
            assert answer == compose_bytes(body, 4 * 1024 * 1024, PhaseTTL()).response
            assert executor.submitted == submitted
    finally:
        executor.shutdown()
