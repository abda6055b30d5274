"""The environment's CI identity (``spec.ci``, issue 33 item 4), over gRPC: on each cloud an
identity that may write the environment's asset bucket and nothing else, bound to the CI
runners' service account on the cluster ``environment.ci`` names, its identifier in
``status.ciIdentity``; nothing of it without the opt-in; a missing CI cluster setting is a
fatal result naming the key."""

from __future__ import annotations

import copy
import json
from typing import Any

import providersim
import pytest

from tests.support.cases import ENVIRONMENT_SETTINGS, environment_composite
from tests.support.harness import FunctionClient, Rendered
from tests.support.schemas import Catalog
from tests.support.table import case
from tests.test_environment_module import BUCKET, run

CI = {"namespace": "ci", "serviceAccount": "deployer"}
SETTINGS: dict[str, Any] = {
    **copy.deepcopy(ENVIRONMENT_SETTINGS),
    "ci": {
        "eksClusterName": "ci-runners",
        "eksRegion": "eu-central-1",
        "gkeWorkloadPool": "acme-ci.svc.id.goog",
        "aksOidcIssuerUrl": "https://oidc.example/issuer/",
    },
}
#: What each cloud composes for the identity (composition names).
PARTS = {
    "aws": {
        "ci-identity",
        "ci-identity-policy",
        "ci-identity-policy-attachment",
        "ci-identity-association",
    },
    "gcp": {"ci-identity", "ci-identity-binding", "ci-identity-assets"},
    "azure": {"ci-identity", "ci-identity-federation", "ci-identity-assets"},
}


def _ci_parts(rendered: Rendered) -> dict[str, dict[str, Any]]:
    return {n: b for n, b in rendered.resources.items() if n.startswith("ci-identity")}


def _passes(client: FunctionClient, cloud: str) -> tuple[Rendered, dict[str, Any]]:
    """Passes with everything observed Ready as the simulated providers report it (the Azure
    assignment needs observed ids); the last pass and the state it observed."""
    composite = environment_composite(cloud, ci=CI)
    rendered = run(client, composite, settings=SETTINGS)
    observed: dict[str, Any] = {}
    for _ in range(4):
        observed = {name: providersim.ready(body) for name, body in rendered.resources.items()}
        rendered = run(client, composite, settings=SETTINGS, observed=observed)
    return rendered, observed


def _reported(observed: dict[str, Any], name: str) -> dict[str, Any]:
    return dict(observed[name]["status"]["atProvider"])


@pytest.mark.parametrize("cloud", ["aws", "gcp", "azure"])
def test_the_ci_identity_writes_the_asset_bucket_and_nothing_else(
    client: FunctionClient,
    catalog: Catalog,
    cloud: str,
) -> None:
    rendered, observed = _passes(client, cloud)
    assert rendered.fatal == []
    parts = _ci_parts(rendered)
    assert set(parts) == PARTS[cloud]
    assert {n: catalog.validate(b) for n, b in parts.items() if catalog.validate(b)} == {}
    status = rendered.status["ciIdentity"]
    assert status["serviceAccount"] == "ci/deployer"
    if cloud == "aws":
        policy = json.loads(parts["ci-identity-policy"]["spec"]["forProvider"]["policy"])
        resources = {r for s in policy["Statement"] for r in s["Resource"]}
        assert resources == {f"arn:aws:s3:::{BUCKET}", f"arn:aws:s3:::{BUCKET}/*"}
        actions = {a for s in policy["Statement"] for a in s["Action"]}
        assert all(
            a.startswith("s3:")
            and "Bucket" not in a.replace("ListBucket", "").replace("GetBucketLocation", "")
            for a in actions
        )
        association = parts["ci-identity-association"]["spec"]["forProvider"]
        assert (association["clusterName"], association["region"]) == ("ci-runners", "eu-central-1")
        assert (association["namespace"], association["serviceAccount"]) == ("ci", "deployer")
        assert status["id"] == _reported(observed, "ci-identity")["arn"]
        assert "annotations" not in status  # Pod Identity: no service account annotation
    if cloud == "gcp":
        grant = parts["ci-identity-assets"]["spec"]["forProvider"]
        assert grant["role"] == "roles/storage.objectAdmin"
        assert grant["bucketRef"]["name"] == rendered.resources["assets"]["metadata"]["name"]
        assert grant["member"] == f"serviceAccount:{status['id']}"
        member = parts["ci-identity-binding"]["spec"]["forProvider"]["member"]
        assert member == "serviceAccount:acme-ci.svc.id.goog[ci/deployer]"
        assert status["annotations"] == {"iam.gke.io/gcp-service-account": status["id"]}
        # no project-wide role
        assert not [n for n in parts if "role" in n]
    if cloud == "azure":
        grant = parts["ci-identity-assets"]["spec"]["forProvider"]
        assert grant["roleDefinitionName"] == "Storage Blob Data Contributor"
        # the asset storage account only
        assert grant["scope"] == _reported(observed, "assets")["id"]
        credential = parts["ci-identity-federation"]["spec"]["forProvider"]
        assert credential["issuer"] == "https://oidc.example/issuer/"
        assert credential["subject"] == "system:serviceaccount:ci:deployer"
        client_id = _reported(observed, "ci-identity")["clientId"]
        assert status["id"] == client_id
        assert status["annotations"] == {"azure.workload.identity/client-id": client_id}


def test_without_the_opt_in_nothing_of_it_is_composed(client: FunctionClient) -> None:
    rendered = run(client, environment_composite("aws"), settings=SETTINGS)
    assert _ci_parts(rendered) == {} and "ciIdentity" not in rendered.status


@pytest.mark.parametrize(
    ("cloud", "key"),
    [
        case(
            "AWS binds the CI identity to the EKS cluster: without eksClusterName in the "
            "environment the fatal result must name environment.ci.eksClusterName, not "
            "fail later",
            "aws",
            "eksClusterName",
        ),
        case(
            "GCP binds the CI identity through the GKE workload pool: without "
            "gkeWorkloadPool the fatal result must name environment.ci.gkeWorkloadPool",
            "gcp",
            "gkeWorkloadPool",
        ),
        case(
            "Azure federates the CI identity with the AKS OIDC issuer: without "
            "aksOidcIssuerUrl the fatal result must name environment.ci.aksOidcIssuerUrl",
            "azure",
            "aksOidcIssuerUrl",
        ),
    ],
)
def test_a_missing_ci_cluster_names_the_environment_key(
    client: FunctionClient,
    cloud: str,
    key: str,
) -> None:
    settings = copy.deepcopy(SETTINGS)
    del settings["ci"][key]
    rendered = run(client, environment_composite(cloud, ci=CI), settings=settings)
    assert len(rendered.fatal) == 1
    assert f"environment.ci.{key}" in rendered.fatal[0] and "Traceback" not in rendered.fatal[0]


def test_a_bad_service_account_names_the_claim_field(client: FunctionClient) -> None:
    rendered = run(
        client,
        environment_composite("aws", ci={**CI, "serviceAccount": "CI_Bot"}),
        settings=SETTINGS,
    )
    assert len(rendered.fatal) == 1 and "spec.ci.serviceAccount" in rendered.fatal[0]


def test_the_rbac_example_lets_ci_manage_claims_in_its_own_namespace_only() -> None:
    """examples/install/rbac/squad-ci.yaml: a namespaced Role on the environment's claim kind
    (its group and plural from the XRD), bound to the pipeline's service account in the same
    namespace; nothing cluster-wide, nothing else."""
    from pathlib import Path

    import yaml

    root = Path(__file__).resolve().parent.parent
    xrd = yaml.safe_load((root / "apis/environment/definition.yaml").read_text())
    docs = list(yaml.safe_load_all((root / "examples/install/rbac/squad-ci.yaml").read_text()))
    (role,) = [d for d in docs if d["kind"] == "Role"]
    (binding,) = [d for d in docs if d["kind"] == "RoleBinding"]
    assert {d["kind"] for d in docs} == {"Role", "RoleBinding"}
    namespace = role["metadata"]["namespace"]
    assert binding["metadata"]["namespace"] == namespace
    assert role["rules"] == [
        {
            "apiGroups": [xrd["spec"]["group"]],
            "resources": [xrd["spec"]["claimNames"]["plural"]],
            "verbs": ["get", "list", "watch", "create", "update", "patch", "delete"],
        }
    ]
    assert binding["roleRef"] == {
        "apiGroup": "rbac.authorization.k8s.io",
        "kind": "Role",
        "name": role["metadata"]["name"],
    }
    (subject,) = binding["subjects"]
    assert subject["kind"] == "ServiceAccount"
    # the runner's account, the one spec.ci binds the cloud identity to
    assert (subject["namespace"], subject["name"]) == (CI["namespace"], CI["serviceAccount"])
