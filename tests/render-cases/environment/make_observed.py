"""Write the observed-state examples of a later pass (re-run after changing the module).

    .venv/bin/python tests/render-cases/environment/make_observed.py

For each case of :data:`CASES` it composes its XR (``xr-<cloud>.yaml``) in-process pass
after pass, playing the providers: every composed resource exists and is Ready, the database
reports its private address and publishes connection details (in-process only: ``crossplane
render`` has no way to pass connection details, which is why the written state already holds
the Deployment the function composed once they existed), the CDN reports its domain, ACM its
issued certificate (with the validation records it asks for), and the Deployment is
Available. ``observed-<case>-ready.yaml`` is the last pass's observed state: the render of
it fills the status and keeps the Deployment. Values are fixed strings, so goldens stay
byte-identical.
"""

from __future__ import annotations

import copy
import sys
from pathlib import Path
from typing import Any

import yaml

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[2]
EXAMPLES = ROOT / "examples" / "environment"
sys.path[:0] = [str(ROOT), str(ROOT / "platform")]

from fnplatform.structs import struct_to_dict  # noqa: E402

from function.dispatch import run  # noqa: E402
from tests.support.harness import request, step_input  # noqa: E402

NAME_ANNOTATION = "crossplane.io/composition-resource-name"
EXTERNAL_NAME = "crossplane.io/external-name"
READY = [
    {"type": "Ready", "status": "True", "reason": "Available"},
    {"type": "Synced", "status": "True", "reason": "ReconcileSuccess"},
]
CONNECTION = {"password": b"example-only", "endpoint": b"example-only"}
AT_PROVIDER: dict[tuple[str, str], dict[str, Any]] = {
    ("rds.aws.upbound.io", "Instance"): {
        "address": "payments-squad-k4x9p-database.cabc123xyz.eu-west-1.rds.amazonaws.com",
        "port": 5432,
    },
    ("sql.gcp.upbound.io", "DatabaseInstance"): {"privateIpAddress": "10.60.0.5"},
    ("dbforpostgresql.azure.upbound.io", "FlexibleServer"): {
        "fqdn": "onboarding-squad-r8t3w-database.postgres.database.azure.com",
    },
    ("cloudfront.aws.upbound.io", "Distribution"): {
        "arn": "arn:aws:cloudfront::123456789012:distribution/E2QWRUHEXAMPLE",
        "domainName": "d111111abcdef8.cloudfront.net",
    },
    ("cdn.azure.upbound.io", "FrontdoorEndpoint"): {
        "hostName": "onboarding-squad-r8t3w-cdn-c3d4e5f6a7b8c9d0.z01.azurefd.net",
    },
}


#: Composed by name: what a provider reports that depends on the resource's own body.
def _certificate(body: dict[str, Any]) -> dict[str, Any]:
    """ACM, once the validation records exist: issued, with one validation record per name."""
    for_provider = body["spec"]["forProvider"]
    names = [for_provider["domainName"], *for_provider.get("subjectAlternativeNames", [])]
    return {
        "arn": "arn:aws:acm:us-east-1:123456789012:certificate/5d2c6e1a-0b7f-4c39-9e84",
        "status": "ISSUED",
        "domainValidationOptions": [
            {"domainName": host, "resourceRecordName": f"_3f1a9c{i}e.{host}.",
             "resourceRecordType": "CNAME",
             "resourceRecordValue": f"_7b2d4e{i}a.acm-validations.aws."}
            for i, host in enumerate(names)
        ],
    }


COMPUTED = {("acm.aws.upbound.io", "Certificate"): _certificate}
#: Each render case's observed state: (the file's case name, the composite it composes).
CASES = (("aws", "xr-aws.yaml"), ("gcp", "xr-gcp.yaml"), ("azure", "xr-azure.yaml"),
         ("aws-domains", "xr-aws-domains.yaml"))


def _load(name: str) -> dict[str, Any]:
    return yaml.safe_load((EXAMPLES / name).read_text())


def _compose(xr: str, observed: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    req = request(
        _load(xr),
        step_input("environment", environment=[{"name": "environment-platform"}]),
        observed=observed,
        observed_connection={"database": CONNECTION} if "database" in observed else None,
        required={"environment-0": [_load("environment.yaml")]},
    )
    rsp = run(req)
    assert not [r for r in rsp.results if r.severity == 1], rsp.results
    return {n: struct_to_dict(r.resource) for n, r in rsp.desired.resources.items()}


def _observed(name: str, body: dict[str, Any]) -> dict[str, Any]:
    out = copy.deepcopy(body)
    metadata = out.setdefault("metadata", {})
    annotations = metadata.setdefault("annotations", {})
    annotations[NAME_ANNOTATION] = name
    annotations.setdefault(EXTERNAL_NAME, metadata.get("name", name))
    group = out["apiVersion"].split("/")[0]
    at_provider = copy.deepcopy(AT_PROVIDER.get((group, out["kind"]), {}))
    if (group, out["kind"]) in COMPUTED:
        at_provider = COMPUTED[(group, out["kind"])](out)
    if out["kind"] == "Object":
        live = copy.deepcopy(out["spec"]["forProvider"]["manifest"])
        if live["kind"] == "Deployment":
            replicas = live["spec"].get("replicas", 1)
            live["status"] = {
                "replicas": replicas, "readyReplicas": replicas, "availableReplicas": replicas,
                "conditions": [{"type": "Available", "status": "True",
                                "reason": "MinimumReplicasAvailable"}],
            }
        if live["kind"] == "Job":  # the database-user Job has run to completion
            live["status"] = {"succeeded": 1, "conditions": [
                {"type": "Complete", "status": "True", "reason": "CompletionsReached"}]}
        at_provider = {"manifest": live}
    out["status"] = {"atProvider": at_provider, "conditions": READY}
    return out


def converged(xr: str) -> dict[str, dict[str, Any]]:
    """The observed state once nothing new is composed."""
    observed: dict[str, dict[str, Any]] = {}
    for _ in range(10):
        desired = _compose(xr, observed)
        now = {name: _observed(name, body) for name, body in sorted(desired.items())}
        if set(now) == set(observed):
            return now
        observed = now
    raise SystemExit(f"{xr}: did not converge")


def main() -> None:
    """Write observed-<case>-ready.yaml for every case."""
    for case, xr in CASES:
        observed = converged(xr)
        name = f"observed-{case}-ready.yaml"
        header = f"# {name}: generated by make_observed.py; see its docstring.\n"
        docs = [observed[n] for n in sorted(observed)]
        (HERE / name).write_text(header + yaml.safe_dump_all(docs, sort_keys=True))


if __name__ == "__main__":
    main()
