"""What one call answered: the response bytes, and the record of the call that the metrics
count and the response cache keeps beside a cached answer.

Plain values, small and picklable: a worker process returns them to the server process, which
records the metrics whatever the executor.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

Outcome = Literal["ok", "warning", "fatal", "error"]


@dataclass(frozen=True, slots=True)
class CallRecord:
    """What one call was, in values safe for metric labels: never a name or user data.

    ``module`` is one this release composes (or ``unknown``), ``kind`` a composite kind one
    of its modules composes (or ``other``): both bounded, whatever a request carries.
    ``outcome``: ``error`` is an internal error (a bug), ``fatal`` bad input reported to the
    user, ``warning`` a response carrying warnings. ``reused``: the pass was not composed
    again, because every observed field it read was unchanged (:mod:`fnplatform.engine.reuse`).
    """

    module: str
    kind: str
    outcome: Outcome
    resources: int
    size: int
    reused: bool = False


@dataclass(frozen=True, slots=True)
class Answer:
    """The response to one call, as bytes, with what the metrics need: the call's record and
    the seconds composing it took."""

    response: bytes
    record: CallRecord
    seconds: float
