"""A message queue: its spec, the call composing it, and its name and ARN.

A cloud registers its builder with ``@add_<capability>.on("<cloud>")`` and its answers with
``@<value>.on("<cloud>")`` in ``clouds/<cloud>/queue.py``, the home each object declares.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from fnplatform.library.capability import Capability, Value


@dataclass(frozen=True)
class QueueSpec:
    """A message queue."""

    queue_name: str
    visibility_timeout_seconds: int = 30
    message_retention_seconds: int = 345600
    receive_wait_time_seconds: int = 20
    dead_letter_arn: str | None = None
    max_receive_count: int = 3
    tags: dict[str, str] = field(default_factory=dict)
    #: Other composites declare the same queue (a namespace's dead-letter queue): this one
    #: creates it if missing and never updates or deletes it, so they never fight over it.
    shared: bool = False


add_queue = Capability[QueueSpec]("queue", "A message queue.", home="queue")


queue_name = Value[..., str](
    "queue_name", "The queue's cloud name from its parts, exactly.", home="queue"
)


queue_arn = Value[[str], str | None](
    "queue_arn", "The ARN of queue ``queue_name``, when it is known before it exists.", home="queue"
)
