"""Secrets and connection details never appear in results, conditions, status or logs.

Every module case is composed with secret connection details on each observed resource and
secret values in its EnvironmentConfig and step settings, then broken so that error paths run
too. The function's own log output is captured: from a ``python -m function`` process (JSON
and debug format), and in-process for an unexpected exception whose stack frames hold secrets.
"""

from __future__ import annotations

import copy
import subprocess
import sys
from pathlib import Path

import grpc
import pytest
import structlog
from crossplane.function import logging as fnlogging
from crossplane.function.proto.v1 import run_function_pb2 as fnv1

from tests.support.cases import ModuleCase, converge, in_both_forms, module_cases
from tests.support.harness import Rendered
from tests.test_server import ENV, ROOT, raw_call, wait_serving

ENV_SECRET = "env-s3cr3t-token-4c1d"
SETTINGS_SECRET = "settings-s3cr3t-key-e02b"
SPEC_SECRET = "spec-s3cr3t-value-9aa7"
CASES = in_both_forms(module_cases())  # each case, and its v2 namespaced twin
IDS = [case.id for case in CASES]


def secret_requests(case: ModuleCase) -> list[fnv1.RunFunctionRequest]:
    """The case converged with secrets everywhere, plus broken variants that hit error paths."""
    from function.dispatch import run

    env = copy.deepcopy(case.environment[0]) if case.environment else None
    if env is not None:
        env["data"]["password"] = ENV_SECRET
        env["data"]["apiToken"] = {"value": ENV_SECRET}
    fetched = case.fetched()
    if env is not None:
        fetched["environment-0"] = [env]
    step = case.step()
    step["settings"]["secretKey"] = SETTINGS_SECRET
    _, observed = converge(lambda req: Rendered(run(req)), case)
    connection = {name: dict(case.secrets) for name in observed}
    healthy = case.request(input=step, observed=observed, required=fetched, connection=connection)
    requests = [healthy]
    for variant in case.invalid:
        composite = copy.deepcopy(case.composite)
        broken_step = copy.deepcopy(step)
        variant.mutate(composite, broken_step)
        requests.append(
            case.request(
                composite=composite,
                input=broken_step,
                observed=observed,
                required=fetched,
                connection=connection,
            )
        )
    for key in ("environment-0",):
        if env is not None:
            bad_env = copy.deepcopy(env)
            bad_env["data"]["defaultMachineType"] = {"nested": ENV_SECRET}
            bad_env["data"]["aws"] = ENV_SECRET
            requests.append(
                case.request(
                    input=step,
                    observed=observed,
                    required={**fetched, key: [bad_env]},
                    connection=connection,
                )
            )
    composite = copy.deepcopy(case.composite)
    composite["spec"]["parameters"] = {"domain": SPEC_SECRET, "tags": {"k": SPEC_SECRET}}
    composite["spec"]["image"] = 7
    composite["spec"]["actor"] = SPEC_SECRET
    requests.append(
        case.request(
            composite=composite,
            input=step,
            observed=observed,
            required=fetched,
            connection=connection,
        )
    )
    return requests


def secrets_of(case: ModuleCase) -> list[str]:
    """Every secret string planted for ``case``."""
    return [
        ENV_SECRET,
        SETTINGS_SECRET,
        SPEC_SECRET,
        *(value.decode() for value in case.secrets.values()),
    ]


def visible_text(rsp: fnv1.RunFunctionResponse) -> str:
    """Everything a user sees: results, conditions and the composite's status."""
    from fnplatform.request.structs import struct_to_dict

    parts = [r.message for r in rsp.results]
    parts += [f"{c.reason} {c.message}" for c in rsp.conditions]
    parts.append(repr(struct_to_dict(rsp.desired.composite.resource)))
    return "\n".join(parts)


@pytest.mark.parametrize("case", CASES, ids=IDS)
def test_no_secret_in_results_conditions_or_status(client, case: ModuleCase):
    connection_secrets = [value.decode() for value in case.secrets.values()]
    for req in secret_requests(case):
        rsp = client.run(req).response
        text = visible_text(rsp)
        for secret in secrets_of(case):
            assert secret not in text
        # The one channel for them: the composite's own connection details, with only the keys
        # its XRD declares (a v1 claim's Secret gets them; the cluster kubeconfig).
        published = set(rsp.desired.composite.connection_details)
        assert published <= published_keys(case), published
        rest = fnv1.RunFunctionResponse()
        rest.CopyFrom(rsp)
        rest.desired.composite.ClearField("connection_details")
        wire = rest.SerializeToString()
        for secret in connection_secrets:
            assert secret.encode() not in wire, "connection details copied into the response"


def published_keys(case: ModuleCase) -> set[str]:
    """The connection keys ``case``'s composite may publish: its v1 XRD's, none when namespaced."""
    from fnplatform.composers import composite_apis

    if case.namespaced:
        return set()
    kind = case.composite["kind"]
    return {
        key
        for apis in composite_apis().values()
        for api in apis
        if api.kind == kind
        for key in api.connection_secret_keys
    }


@pytest.mark.parametrize("debug", [False, True], ids=["json-logs", "debug-logs"])
def test_no_secret_in_the_server_log(debug: bool, tmp_path: Path):
    from tests.support.harness import free_port

    address = f"127.0.0.1:{free_port()}"
    # The log goes to a file, not a pipe: debug logs of every case outgrow a pipe's buffer,
    # and a server blocked writing its log would answer nothing.
    log = tmp_path / "server.log"
    with log.open("w") as sink:
        process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "function",
                "--insecure",
                "--address",
                address,
                "--metrics-address=",
                *(["--debug"] if debug else []),
            ],
            cwd=ROOT,
            env=ENV,
            text=True,
            stdout=sink,
            stderr=subprocess.STDOUT,
        )
        try:
            wait_serving(address, process)
            channel = grpc.insecure_channel(address)
            call = raw_call(channel)
            for case in CASES:
                for req in secret_requests(case):
                    call(req.SerializeToString(), timeout=60)
            channel.close()
        finally:
            process.terminate()
            process.wait(timeout=30)
    out, err = log.read_text(), ""
    assert "serving" in out + err, "log output was not captured"
    for case in CASES:
        for secret in secrets_of(case):
            assert secret not in out + err


class BoomError(Exception):
    """An unexpected bug inside a composer."""


def test_unexpected_error_log_holds_no_values(monkeypatch, capsys):
    from function import dispatch

    def crashing_composer(comp) -> None:
        password = ENV_SECRET  # a local a traceback renderer with locals would print
        raise BoomError(f"failed with {password}")

    case = CASES[0]
    monkeypatch.setattr(dispatch, "_composers", lambda: {case.module: crashing_composer})
    fnlogging.configure(fnlogging.Level.INFO)
    try:
        rsp = dispatch.run(case.request())
    finally:
        structlog.reset_defaults()
    logged = capsys.readouterr()
    fatal = [r.message for r in rsp.results if r.severity == fnv1.SEVERITY_FATAL]
    assert fatal == [f"internal error in module {case.module}: BoomError; see function logs"]
    assert "BoomError" in logged.out + logged.err, "the failure itself must be logged"
    assert "crashing_composer" in logged.out + logged.err, "with its stack"
    assert ENV_SECRET not in logged.out + logged.err
