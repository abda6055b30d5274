"""The cloud stand-in of the live control plane refuses what the cloud refuses (issue 21): run
as unit tests in `make test`, without a control plane, on the stand-in's own decision (the
rules are tests/support/providersim.REFUSALS, each naming the builder rule it mirrors)."""

from __future__ import annotations

import json
from typing import Any

from tests.live.providers import CloudStandIn

IDENTITY_ID = "/subscriptions/s/resourceGroups/g/providers/Microsoft.ManagedIdentity/uai/x"


def _mr(kind: str, for_provider: dict[str, Any], at_provider: dict[str, Any] | None = None,
        name: str = "x") -> dict[str, Any]:
    return {"kind": kind, "metadata": {"name": name},
            "spec": {"forProvider": for_provider},
            "status": {"atProvider": at_provider or {}}}


def _stand_in() -> CloudStandIn:
    stand_in = object.__new__(CloudStandIn)  # no API server: refusal reads only what it is given
    stand_in.kube = None  # type: ignore[assignment]
    return stand_in


def test_an_account_whose_identity_is_not_granted_on_the_vault_is_refused() -> None:
    account = _mr("Account", {"customerManagedKey": {
        "keyVaultKeyId": "https://v.vault.azure.net/keys/k",
        "userAssignedIdentityId": IDENTITY_ID}})
    identity = _mr("UserAssignedIdentity", {}, {"id": IDENTITY_ID, "principalId": "p-1"}, "id")
    grant = _mr("AccessPolicy", {"objectId": "p-1"}, name="grant")
    other = _mr("AccessPolicy", {"objectId": "someone-else"}, name="other")
    refused = _stand_in().refusal(account, account["spec"]["forProvider"],
                                  [account, identity, other])
    assert "KeyVaultAccessDenied" in refused and IDENTITY_ID in refused
    assert _stand_in().refusal(account, account["spec"]["forProvider"],
                               [account, identity, grant]) == ""


def test_a_redrive_to_no_queue_is_refused() -> None:
    policy = json.dumps({"deadLetterTargetArn": "arn:aws:sqs:eu-west-1:1:dlq",
                         "maxReceiveCount": 3})
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
    instance = _mr("Instance", {"engine": "postgres", "engineVersion": "17",
                                "parameterGroupNameRef": {"name": "db-parameters-16"}},
                   name="db")
    refused = _stand_in().refusal(instance, instance["spec"]["forProvider"],
                                  [instance, group_16, group_17])
    assert refused.startswith("InvalidParameterCombination") and "postgres17" in refused
    instance["spec"]["forProvider"]["parameterGroupNameRef"] = {"name": "db-parameters-17"}
    assert _stand_in().refusal(instance, instance["spec"]["forProvider"],
                               [instance, group_16, group_17]) == ""
