"""AWS builders for the queue capability (SQS).

The queue is stateful: messages live in it, so it is never dropped on a transient problem
(see fnplatform.guard). Upjet identifies an SQS queue by its URL (the external name is filled
in by the provider), so no external name is set here; ``forProvider.name`` is its AWS name.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from fnplatform.composition import Composition
from fnplatform.kinds import register
from fnplatform.library.registry import provides
from fnplatform.library.specs import QueueSpec
from fnplatform.naming import dns_label
from fnplatform.tagging import TagStyle

SQS_QUEUE = register("sqs.aws.upbound.io/v1beta1", "Queue", tag_style=TagStyle.AWS, stateful=True)
SQS_NAME_MAX = 80  # SQS queue names: 1-80 letters, digits, hyphens and underscores


def sqs_queue_name(*parts: str) -> str:
    """A valid SQS queue name from ``parts``; over-long names keep a hash of the full name."""
    return dns_label(*parts, max_length=SQS_NAME_MAX)


def sqs_queue_arn(region: str, account_id: str, queue_name: str) -> str:
    """The ARN of queue ``queue_name``: how a redrive policy names its dead-letter queue."""
    return f"arn:aws:sqs:{region}:{account_id}:{queue_name}"


def redrive_policy(dead_letter_arn: str, max_receive_count: int) -> str:
    """The SQS ``RedrivePolicy`` attribute: after ``max_receive_count`` receives, go to the DLQ."""
    return json.dumps(
        {"deadLetterTargetArn": dead_letter_arn, "maxReceiveCount": max_receive_count},
        separators=(",", ":"),
        sort_keys=True,
    )


@provides("queue", "aws")
def queue(
    comp: Composition,
    name: str,
    spec: QueueSpec,
    *,
    uses: tuple[str, ...],
    template: Mapping[str, Any] | None,
) -> None:
    """An SQS standard queue, with a redrive policy when a dead-letter queue is given."""
    for_provider: dict[str, Any] = {
        "name": spec.queue_name,
        "region": spec.region,
        "visibilityTimeoutSeconds": spec.visibility_timeout_seconds,
        "messageRetentionSeconds": spec.message_retention_seconds,
        "receiveWaitTimeSeconds": spec.receive_wait_time_seconds,
        "tags": dict(sorted(spec.tags.items())),
    }
    if spec.dead_letter_arn:
        for_provider["redrivePolicy"] = redrive_policy(spec.dead_letter_arn, spec.max_receive_count)
    comp.emit(
        name,
        SQS_QUEUE.new(for_provider),
        uses=uses,
        template=template,
        provider_config=spec.provider_config,
    )
