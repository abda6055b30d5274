"""add_queue (SQS, AWS only), named exactly by ``queue_name``, with a dead-letter redrive."""

from __future__ import annotations

import json

import pytest
from fnplatform.composition import Composition
from fnplatform.library.queue import QueueSpec, add_queue, queue_arn, queue_name

from tests.capabilities.harness import Case, check_converges, compose_once, table


def plain(comp: Composition) -> None:
    add_queue(comp, "queue", QueueSpec(queue_name=queue_name(comp, "asya", "ns", "jobs")))


def with_dead_letter(comp: Composition) -> None:
    dlq = queue_name(comp, "asya", "ns", "dlq")
    add_queue(comp, "dlq", QueueSpec(queue_name=dlq, shared=True))
    if not comp.needs_ready("dlq", by="queue"):
        return
    add_queue(
        comp,
        "queue",
        QueueSpec(
            queue_name=queue_name(comp, "asya", "ns", "jobs"),
            dead_letter_arn=queue_arn(comp, dlq),
            max_receive_count=5,
        ),
    )


CASES = [
    Case("plain", plain, kinds={"aws": frozenset({"Queue"})}),
    Case("dead-letter", with_dead_letter, kinds={"aws": frozenset({"Queue"})}),
]


@pytest.mark.parametrize(("case", "cloud"), table(add_queue, CASES))
def test_composes_schema_valid_bodies_that_converge(case: Case, cloud: str) -> None:
    done = check_converges(case, cloud)
    assert done.for_provider("queue")["name"] == "asya-ns-jobs"


def test_the_redrive_names_the_dead_letter_queue_by_its_arn() -> None:
    done = check_converges(CASES[1], "aws")
    assert json.loads(done.for_provider("queue")["redrivePolicy"]) == {
        "deadLetterTargetArn": "arn:aws:sqs:eu-west-1:123456789012:asya-ns-dlq",
        "maxReceiveCount": 5,
    }


def test_a_queue_name_sqs_refuses_is_an_error() -> None:
    def too_long(comp: Composition) -> None:
        queue_name.at(fields={"queue_name": "spec.actor"})(comp, "asya", "n" * 90)

    failed = compose_once("aws", too_long)
    assert failed.fatal and failed.fatal[0].startswith("spec.actor:"), failed.fatal
