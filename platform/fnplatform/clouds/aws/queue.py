"""AWS builders for the queue capability (SQS).

The queue is stateful: messages live in it, so it is never dropped on a transient problem
(see fnplatform.rules.guard). Upjet identifies an SQS queue by its URL (the external name is filled
in by the provider), so no external name is set here; ``forProvider.name`` is its AWS name.
"""

from __future__ import annotations

import json
from typing import Any

from fnplatform.clouds.aws.common import partition
from fnplatform.clouds.aws.tags import AWS_TAGS
from fnplatform.composition import Composition
from fnplatform.errors import SpecError
from fnplatform.kinds import register
from fnplatform.library.queue import QueueSpec, add_queue, queue_arn, queue_name

SQS_QUEUE = register("sqs.aws.upbound.io/v1beta1", "Queue", tag_style=AWS_TAGS, stateful=True)
SQS_NAME_MAX = 80  # SQS queue names: 1-80 letters, digits, hyphens and underscores


@queue_name.on("aws")
def aws_queue_name(comp: Composition, *parts: str) -> str:
    """The SQS queue name ``<part>-<part>...``, exactly: consumers look it up by that name.

    Never shortened: the Asya sidecar resolves ``asya-<namespace>-<actor>`` itself, so a
    hash-shortened name would be a queue nobody consumes. Too long is an error instead.
    """
    name = "-".join(parts)
    if len(name) > SQS_NAME_MAX:
        raise SpecError(
            "queue_name",
            f"the SQS queue name {name} has {len(name)} characters; SQS allows {SQS_NAME_MAX}",
        )
    return name


@queue_arn.on("aws")
def aws_queue_arn(comp: Composition, queue: str) -> str | None:
    """The ARN of queue ``queue`` in the placed account and region (None without an account).

    How a redrive policy names its dead-letter queue before that queue is observed.
    """
    account = comp.placement.scope.value
    if not account:
        return None
    return f"arn:{partition(comp.region)}:sqs:{comp.region}:{account}:{queue}"


def redrive_policy(dead_letter_arn: str, max_receive_count: int) -> str:
    """The SQS ``RedrivePolicy`` attribute: after ``max_receive_count`` receives, go to the DLQ."""
    return json.dumps(
        {"deadLetterTargetArn": dead_letter_arn, "maxReceiveCount": max_receive_count},
        separators=(",", ":"),
        sort_keys=True,
    )


@add_queue.on("aws")
def queue(
    comp: Composition,
    name: str,
    spec: QueueSpec,
) -> None:
    """An SQS standard queue, with a redrive policy when a dead-letter queue is given."""
    for_provider: dict[str, Any] = {
        "name": spec.queue_name,
        "region": comp.region,
        "visibilityTimeoutSeconds": spec.visibility_timeout_seconds,
        "messageRetentionSeconds": spec.message_retention_seconds,
        "receiveWaitTimeSeconds": spec.receive_wait_time_seconds,
        "tags": dict(sorted(spec.tags.items())),
    }
    if spec.dead_letter_arn:
        for_provider["redrivePolicy"] = redrive_policy(spec.dead_letter_arn, spec.max_receive_count)
    body = SQS_QUEUE.new(for_provider)
    if spec.shared:
        # Each sharer's managed resource would otherwise update the queue to its own tags
        # (every composite tags with its own name) and delete it with the first sharer.
        # Create and Observe only: CreateQueue returns the existing queue when its attributes
        # match (SQS API reference, CreateQueue), and nothing is ever updated or deleted.
        body["spec"]["managementPolicies"] = list(SHARED_MANAGEMENT)
    comp.emit(name, body)


SHARED_MANAGEMENT = ("Observe", "Create")
