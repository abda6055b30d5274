"""Write ``tests/render-cases/<module>/observed-<case>.yaml``: the passes before the last,
all Ready.

    python tools/make_observed.py cluster/gcp cluster/aws cluster/azure
    python tools/make_observed.py contact-center/namespaced/azure

For each named first-pass case it renders pass 1, marks every composed resource Ready as a
provider would (``Ready``/``Synced`` conditions, the external-name annotation and the
``status.atProvider`` fields the modules read: endpoints, CA data, OIDC issuer, ids), and
renders again with those observed, until a pass composes nothing new (the cluster once its
network is Ready, node pools once the cluster is, Helm releases once a pool is Ready...). The
result is the observed state of the last pass, which composes everything and fills the XR
status. Values are fake but deterministic (hashes of names), so goldens stay byte-identical.

A namespaced twin's ready case converts the cluster-scoped observed state, unless the namespaced
form has its own (``<module>/namespaced/observed-<case>-ready.yaml``, made from a
``<module>/namespaced/<case>`` id): where the namespaced composite names things differently
(cloud-global names carry its uid), its own keeps the ready render a new composite's.
"""

from __future__ import annotations

import base64
import dataclasses
import hashlib
import sys
import tempfile
from pathlib import Path
from typing import Any

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))

import render_examples as tool

MAX_PASSES = 10
EXTERNAL_NAME = "crossplane.io/external-name"
CA_PEM = "-----BEGIN CERTIFICATE-----\nMIIBexample\n-----END CERTIFICATE-----\n"
CA_DATA = base64.b64encode(CA_PEM.encode()).decode()


def _digest(text: str, length: int = 12) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:length]


def _aws_at_provider(
    group: str, kind: str, for_provider: dict[str, Any], external: str
) -> dict[str, Any]:
    """What an AWS provider reports: the ARN, and per kind what the modules read."""
    at: dict[str, Any] = {}
    region = for_provider.get("region", "eu-west-1")
    service = group.split(".", maxsplit=1)[0]
    at["arn"] = f"arn:aws:{service}:{region}:123456789012:{kind.lower()}/{external}"
    if kind == "Cluster" and group.startswith("eks."):
        cluster_id = _digest(external, 32).upper()
        at["endpoint"] = f"https://{cluster_id}.gr7.{region}.eks.amazonaws.com"
        at["certificateAuthority"] = [{"data": CA_DATA}]
        issuer = f"https://oidc.eks.{region}.amazonaws.com/id/{cluster_id}"
        at["identity"] = [{"oidc": [{"issuer": issuer}]}]
    elif kind == "LaunchTemplate":
        at["latestVersion"] = 1
    elif kind == "Zone":
        at["zoneId"] = "Z" + _digest(external, 13).upper()
    elif kind == "Queue" and group.startswith("sqs."):  # upjet: the queue's URL and ARN
        name = for_provider.get("name", external)
        at["url"] = at["id"] = f"https://sqs.{region}.amazonaws.com/123456789012/{name}"
        at["arn"] = f"arn:aws:sqs:{region}:123456789012:{name}"
    return at


def _at_provider(body: dict[str, Any], external: str) -> dict[str, Any]:
    """Provider-reported fields for ``body``'s kind (what the cloud modules read)."""
    # a namespaced twin's group (s3.aws.m.upbound.io) reports what its cluster-scoped one does
    group = body["apiVersion"].split("/")[0].replace(".m.upbound.io", ".upbound.io")
    kind = body["kind"]
    for_provider = (body.get("spec") or {}).get("forProvider") or {}
    at: dict[str, Any] = {"id": external}
    if group.endswith("gcp.upbound.io"):
        project = for_provider.get("project", "example-project")
        location = for_provider.get("location") or for_provider.get("region") or "global"
        if kind == "Cluster":
            at["id"] = f"projects/{project}/locations/{location}/clusters/{external}"
            at["endpoint"] = f"34.{int(_digest(external, 2), 16)}.10.20"
            at["masterAuth"] = {"clusterCaCertificate": CA_DATA}
        elif kind == "ServiceAccount":
            at["email"] = f"{external}@{project}.iam.gserviceaccount.com"
    elif group.endswith("aws.upbound.io"):
        at.update(_aws_at_provider(group, kind, for_provider, external))
    elif group.endswith("azure.upbound.io"):
        at["id"] = f"/subscriptions/00000000-0000-0000-0000-000000000000/resourceGroups/{external}"
        if kind == "KubernetesCluster":
            at["fqdn"] = f"{external}-{_digest(external, 8)}.hcp.westeurope.azmk8s.io"
            tenant = _digest(external, 36)
            at["oidcIssuerUrl"] = f"https://westeurope.oic.prod-aks.azure.com/{tenant}/"
            principal = _digest(f"{external}-identity", 32)
            at["identity"] = {"type": "SystemAssigned", "principalId": principal}
        elif kind == "UserAssignedIdentity":
            group_name = for_provider.get("resourceGroupName", "example-group")
            at["id"] = ("/subscriptions/00000000-0000-0000-0000-000000000000/resourceGroups/"
                        f"{group_name}/providers/Microsoft.ManagedIdentity/"
                        f"userAssignedIdentities/{external}")
            uuid = _digest(external, 32)
            at["clientId"] = f"{uuid[:8]}-{uuid[8:12]}-{uuid[12:16]}-{uuid[16:20]}-{uuid[20:]}"
            principal = _digest(f"principal-{external}", 32)
            at["principalId"] = (f"{principal[:8]}-{principal[8:12]}-{principal[12:16]}-"
                                 f"{principal[16:20]}-{principal[20:]}")
        elif kind == "Key" and group.startswith("keyvault."):
            at["versionlessId"] = f"https://{_digest(external, 10)}.vault.azure.net/keys/{external}"
        elif kind == "TrafficManagerProfile":
            relative = (for_provider.get("dnsConfig") or {}).get("relativeName", external)
            at["fqdn"] = f"{relative}.trafficmanager.net"
    return at


def mark_ready(body: dict[str, Any]) -> dict[str, Any]:
    """``body`` as the provider would report it once the real resource exists."""
    observed = yaml.safe_load(yaml.safe_dump(body))
    metadata = observed.setdefault("metadata", {})
    annotations = metadata.setdefault("annotations", {})
    external = annotations.setdefault(EXTERNAL_NAME, metadata.get("name", ""))
    status: dict[str, Any] = {}
    if not observed["apiVersion"].startswith(("kubernetes.crossplane.io", "helm.crossplane.io")):
        status["atProvider"] = _at_provider(observed, external)
    status["conditions"] = [
        {"type": "Ready", "status": "True", "reason": "Available",
         "lastTransitionTime": "2024-01-01T00:00:00Z"},
        {"type": "Synced", "status": "True", "reason": "ReconcileSuccess",
         "lastTransitionTime": "2024-01-01T00:00:00Z"},
    ]  # fmt: skip
    observed["status"] = status
    return observed


def _composed(stdout: str, xr_kind: str) -> dict[str, dict[str, Any]]:
    """Rendered composed resources by composition-resource-name."""
    out = {}
    for doc in yaml.safe_load_all(stdout):
        if not doc or doc.get("kind") in (xr_kind, "Result"):
            continue
        name = doc["metadata"]["annotations"]["crossplane.io/composition-resource-name"]
        out[name] = doc
    return out


def _render(cli: Path, case: tool.Case, port: int, tmp: Path) -> str:
    result = tool.render(cli, case, port, tmp)
    if result.returncode != 0:
        msg = f"{case.id}: {result.stderr}"
        raise SystemExit(msg)
    return result.stdout


def observed_for(cli: Path, case: tool.Case, port: int, tmp: Path) -> list[dict[str, Any]]:
    """Every resource the passes before the last composed, all Ready."""
    xr_kind = yaml.safe_load(case.xr.read_text())["kind"]
    composed = _composed(_render(cli, case, port, tmp), xr_kind)
    ready: dict[str, dict[str, Any]] = {}
    for number in range(1, MAX_PASSES):
        new = {name: body for name, body in composed.items() if name not in ready}
        if not new:
            break
        ready.update({name: mark_ready(body) for name, body in new.items()})
        observed_file = tmp / f"observed-pass-{number}.yaml"
        observed_file.write_text(yaml.safe_dump_all(list(ready.values()), sort_keys=False))
        next_case = dataclasses.replace(case, observed=observed_file)
        composed = _composed(_render(cli, next_case, port, tmp), xr_kind)
    return [ready[name] for name in sorted(ready)]


def converged_for(cli: Path, case: tool.Case, port: int, tmp: Path) -> list[dict[str, Any]]:
    """Every resource Ready: render, mark all Ready, repeat until nothing new appears.

    For modules whose resources wait on each other's provider-reported ids over several
    passes (contact-center on Azure: identity, key, grant, account).
    """
    xr_kind = yaml.safe_load(case.xr.read_text())["kind"]
    observed_file: Path | None = None
    ready: dict[str, dict[str, Any]] = {}
    for attempt in range(10):
        current = dataclasses.replace(case, observed=observed_file)
        rendered = _composed(_render(cli, current, port, tmp), xr_kind)
        if set(rendered) == set(ready):
            break
        ready = {name: mark_ready(body) for name, body in rendered.items()}
        observed_file = tmp / f"observed-pass-{attempt + 1}.yaml"
        observed_file.write_text(yaml.safe_dump_all(list(ready.values()), sort_keys=False))
    return [ready[name] for name in sorted(ready)]


#: Modules whose "ready" state is every resource Ready (not the cluster's foundations).
CONVERGED_MODULES = ("contact-center",)


def main(argv: list[str]) -> int:
    cli = tool.find_cli()
    if cli is None:
        print("Crossplane CLI not found: run `make cli` (tools/install-cli.sh)", file=sys.stderr)
        return 2
    # Observed states are written for the cases as written; twins convert them when rendering
    # unless a namespaced id (<module>/namespaced/<case>) writes the namespaced form's own.
    cases = {c.id: c for c in tool.load_cases()}
    port = tool.free_port()
    with tempfile.TemporaryDirectory() as tmp, tool.serve_function(port):
        for case_id in argv:
            case = cases[case_id]
            make = converged_for if case.module in CONVERGED_MODULES else observed_for
            documents = make(cli, case, port, Path(tmp))
            folder = tool.CASES_DIR / case.module
            if case.namespaced:
                folder = folder / tool.NAMESPACED
                folder.mkdir(exist_ok=True)
            target = folder / f"observed-{case.name}-ready.yaml"
            header = (
                f"# Observed state of {case.xr.name}{' (namespaced)' if case.namespaced else ''}"
                " once the foundations are Ready\n"
                f"# (tools/make_observed.py {case_id}; provider values are fake, deterministic).\n"
            )
            target.write_text(header + yaml.safe_dump_all(documents, sort_keys=False))
            print(f"wrote {target.relative_to(tool.ROOT)}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
