"""The one simulation of the providers (platform/providersim/simulation.py): each refusal it plays
and
the builder rule it mirrors name each other, and a fixture cannot record what no provider
reports."""

from __future__ import annotations

import inspect

import providersim
import pytest


@pytest.mark.parametrize("refusal", providersim.REFUSALS, ids=lambda r: r.rule)
def test_each_refusal_and_the_builder_rule_it_mirrors_name_each_other(
    refusal: providersim.Refusal,
) -> None:
    """The refusal names builder code that exists, and that code names the rule: renaming
    either side without the other fails here."""
    source = inspect.getsource(refusal.builder())
    assert refusal.rule in source, f"{refusal.mirrors} does not name rule {refusal.rule}"


def test_rule_identifiers_are_unique() -> None:
    rules = [refusal.rule for refusal in providersim.REFUSALS]
    assert len(rules) == len(set(rules))


def _instance() -> dict[str, object]:
    return {
        "apiVersion": "rds.aws.upbound.io/v1beta3",
        "kind": "Instance",
        "metadata": {"name": "db"},
        "spec": {"forProvider": {"region": "eu-west-1"}},
    }


def test_a_recorded_field_no_provider_reports_is_refused() -> None:
    recorded = {("rds.aws.upbound.io", "Instance"): {"hostname": "db.example"}}
    with pytest.raises(ValueError, match="reports no \\['hostname'\\]"):
        providersim.reported(_instance(), ids=False, recorded=recorded)


def test_recorded_values_replace_the_simulated_ones_and_narrow_the_kinds() -> None:
    recorded = {("rds.aws.upbound.io", "Instance"): {"address": "db.example", "port": 5432}}
    assert providersim.reported(_instance(), ids=False, recorded=recorded) == {
        "address": "db.example",
        "port": 5432,
    }
    assert providersim.reported(_instance(), ids=False, recorded={}) == {}


def test_a_namespaced_twin_reports_what_its_cluster_scoped_kind_does() -> None:
    twin = {**_instance(), "apiVersion": "rds.aws.m.upbound.io/v1beta1"}
    assert providersim.reported(twin) == providersim.reported(_instance())


def test_the_simulated_queue_arn_is_the_one_the_builder_predicts() -> None:
    """The redrive policy names the dead-letter queue's ARN before it exists
    (fnplatform.clouds.aws.queue.queue_arn); SQS_REDRIVE_TARGET_EXISTS compares it with the
    ARN the queue reports."""
    queue = {
        "apiVersion": "sqs.aws.upbound.io/v1beta1",
        "kind": "Queue",
        "metadata": {"name": "x"},
        "spec": {"forProvider": {"region": "eu-west-1", "name": "asya-ml-dlq"}},
    }
    assert (providersim.reported(queue) or {})["arn"] == (
        f"arn:aws:sqs:eu-west-1:{providersim.ACCOUNT}:asya-ml-dlq"
    )


def test_connection_details_carry_the_kinds_keys() -> None:
    details = providersim.connection_details(_instance())
    assert set(details) == set(providersim.CONNECTION_KEYS["Instance"])
    cluster = {
        "apiVersion": "eks.aws.upbound.io/v1beta1",
        "kind": "ClusterAuth",
        "metadata": {"name": "c"},
    }
    assert providersim.connection_details(cluster)["kubeconfig"].startswith(b"apiVersion: v1")
