"""The cloud stand-in of the live control plane refuses what the cloud refuses (issue 21): run
as unit tests in `make test`, without a control plane, on the stand-in's own decision (the
rules are tests/support/providersim.REFUSALS, each naming the builder rule it mirrors)."""

from __future__ import annotations

import json
from typing import Any

from tests.live.providers import CloudStandIn

IDENTITY_ID = "/subscriptions/s/resourceGroups/g/providers/Microsoft.ManagedIdentity/uai/x"


def _mr(
    kind: str,
    for_provider: dict[str, Any],
    at_provider: dict[str, Any] | None = None,
    name: str = "x",
) -> dict[str, Any]:
    return {
        "kind": kind,
        "metadata": {"name": name},
        "spec": {"forProvider": for_provider},
        "status": {"atProvider": at_provider or {}},
    }


def _stand_in() -> CloudStandIn:
    stand_in = object.__new__(CloudStandIn)  # no API server: refusal reads only what it is given
    stand_in.kube = None  # type: ignore[assignment]
    return stand_in


def test_an_account_whose_identity_is_not_granted_on_the_vault_is_refused() -> None:
    account = _mr(
        "Account",
        {
            "customerManagedKey": {
                "keyVaultKeyId": "https://v.vault.azure.net/keys/k",
                "userAssignedIdentityId": IDENTITY_ID,
            }
        },
    )
    identity = _mr("UserAssignedIdentity", {}, {"id": IDENTITY_ID, "principalId": "p-1"}, "id")
    grant = _mr("AccessPolicy", {"objectId": "p-1"}, name="grant")
    other = _mr("AccessPolicy", {"objectId": "someone-else"}, name="other")
    refused = _stand_in().refusal(
        account, account["spec"]["forProvider"], [account, identity, other]
    )
    assert "KeyVaultAccessDenied" in refused and IDENTITY_ID in refused
    assert (
        _stand_in().refusal(account, account["spec"]["forProvider"], [account, identity, grant])
        == ""
    )


def test_a_redrive_to_no_queue_is_refused() -> None:
    policy = json.dumps(
        {"deadLetterTargetArn": "arn:aws:sqs:eu-west-1:1:dlq", "maxReceiveCount": 3}
    )
    queue = _mr("Queue", {"redrivePolicy": policy}, name="q")
    refused = _stand_in().refusal(queue, queue["spec"]["forProvider"], [queue])
    assert "Dead-letter target does not exist" in refused
    dlq = _mr("Queue", {}, {"arn": "arn:aws:sqs:eu-west-1:1:dlq"}, name="dlq")
    assert _stand_in().refusal(queue, queue["spec"]["forProvider"], [queue, dlq]) == ""


def test_a_reference_to_nothing_is_refused_as_upjet_does() -> None:
    subnet = _mr("Subnet", {"vpcIdRef": {"name": "missing-vpc"}}, name="subnet")
    refused = _stand_in().refusal(subnet, subnet["spec"]["forProvider"], [subnet])
    assert refused.startswith("cannot resolve references: mg.Spec.ForProvider.vpcId")


def test_a_parameter_group_of_another_family_is_refused() -> None:
    """A major upgrade that kept the old major's group: RDS refuses the modification."""
    group_16 = _mr("ParameterGroup", {"family": "postgres16"}, name="db-parameters-16")
    group_17 = _mr("ParameterGroup", {"family": "postgres17"}, name="db-parameters-17")
    instance = _mr(
        "Instance",
        {
            "engine": "postgres",
            "engineVersion": "17",
            "parameterGroupNameRef": {"name": "db-parameters-16"},
        },
        name="db",
    )
    refused = _stand_in().refusal(
        instance, instance["spec"]["forProvider"], [instance, group_16, group_17]
    )
    assert refused.startswith("InvalidParameterCombination") and "postgres17" in refused
    instance["spec"]["forProvider"]["parameterGroupNameRef"] = {"name": "db-parameters-17"}
    assert (
        _stand_in().refusal(
            instance, instance["spec"]["forProvider"], [instance, group_16, group_17]
        )
        == ""
    )


class _Obj:
    def __init__(self, body: dict[str, Any]) -> None:
        self.body = body
        self.data = body.get("data")

    def to_dict(self) -> dict[str, Any]:
        return self.body


class _Garden:
    """The few calls GardenerStandIn makes of the API server, on a dict."""

    def __init__(self) -> None:
        self.objects: dict[tuple[str, str, str | None], dict[str, Any]] = {}

    def get(self, api_version: str, kind: str, name: str, namespace: str | None = None) -> Any:
        body = self.objects.get((kind, name, namespace))
        return _Obj(body) if body is not None else None

    def apply(self, doc: dict[str, Any], manager: str = "") -> None:
        meta = doc["metadata"]
        self.objects[(doc["kind"], meta["name"], meta.get("namespace"))] = doc


def test_the_garden_issues_admin_kubeconfigs_as_gardener_does() -> None:
    """shoots/adminkubeconfig (gardener KubeconfigREST.Create): refused while the Shoot
    advertises no API server; then a client certificate of the requester in the project
    admins group, signed by the cluster's client CA, valid as long as asked (at most 24 h)."""
    import base64
    import datetime

    import pytest
    import yaml
    from cryptography import x509
    from cryptography.x509.oid import NameOID

    from tests.live.controlplane import _cert, _key, _pem, _pem_key
    from tests.live.providers import GardenerStandIn, RefusedError

    ca_key = _key()
    ca = _cert("live-ca", ca_key, None, ca=True)
    cp = type("CP", (), {"ca_pem": _pem(ca), "ca_key_pem": _pem_key(ca_key)})()
    kube = _Garden()
    garden = GardenerStandIn(kube, cp)  # type: ignore[arg-type]
    with pytest.raises(RefusedError, match="NotFound"):
        garden.admin_kubeconfig("garden-c5c3", "hv-pool-a", 3600, "live-admin")
    kube.apply({"kind": "Shoot", "metadata": {"name": "hv-pool-a", "namespace": "garden-c5c3"}})
    with pytest.raises(RefusedError, match="no suitable advertised address"):
        garden.admin_kubeconfig("garden-c5c3", "hv-pool-a", 3600, "live-admin")
    status = garden.status("garden-c5c3", "hv-pool-a", "2026-11-27T00:00:00Z")
    assert status["lastOperation"]["state"] == "Succeeded"
    kube.objects[("Shoot", "hv-pool-a", "garden-c5c3")]["status"] = status
    text, expires = garden.admin_kubeconfig("garden-c5c3", "hv-pool-a", 7 * 24 * 3600, "live-admin")
    config = yaml.safe_load(text)
    (user,) = config["users"]
    cert = x509.load_pem_x509_certificate(base64.b64decode(user["user"]["client-certificate-data"]))
    assert (
        cert.subject.get_attributes_for_oid(NameOID.COMMON_NAME)[0].value
        == "gardener.cloud:admin:live-admin"
    )
    assert [a.value for a in cert.subject.get_attributes_for_oid(NameOID.ORGANIZATION_NAME)] == [
        "gardener.cloud:project:admins"
    ]
    cert.verify_directly_issued_by(ca)
    lifetime = cert.not_valid_after_utc - datetime.datetime.now(datetime.UTC)
    assert datetime.timedelta(hours=23) < lifetime <= datetime.timedelta(hours=24)
    assert expires.startswith(cert.not_valid_after_utc.strftime("%Y-%m-%dT%H"))
    assert [c["cluster"]["server"] for c in config["clusters"]] == ["https://127.0.0.1:6443"]
    assert ("ClusterRoleBinding", "gardener.cloud:project:admins", None) in kube.objects
    garden.fail("garden-c5c3", "hv-pool-a", "machine pool exhausted", 60)
    failed = garden.status("garden-c5c3", "hv-pool-a", "2026-11-27T00:00:00Z")
    assert failed["lastOperation"] == {
        "type": "Reconcile",
        "state": "Failed",
        "progress": 0,
        "description": "machine pool exhausted",
        "lastUpdateTime": "2026-11-27T00:00:00Z",
    }
