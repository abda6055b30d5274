"""Why a resource is held back (not created yet): typed, and written and read in one place.

A :class:`Hold` is what :meth:`fnplatform.composition.Composition.hold` records: each
:class:`Wait` names the composed resource it waits for (None for something outside the
composite: a ConfigMap the platform provides, "a node group") and what about it. Import reads
:attr:`Hold.resources` to leave out what waits inside an adopted resource; the composite's
``Composed`` condition (reason :data:`WAITING`) says :func:`waiting_summary` of every hold,
and :func:`parse_waiting_summary` reads that message back (a graph of what one render
composed, ``tools/composed_graph.py``, draws the holds from it), so that
``waiting_summary(parse_waiting_summary(message)) == message``.

The message's grammar (docs/graphs.md shows it to users)::

    message  = hold *(", " hold)                      ; sorted by held name
    hold     = NAME " (waits for " wait *(", " wait) ")"
    wait     = NAME [" " DETAIL]                      ; a composed resource of the composite
             / OUTSIDE                                ; something outside it
    NAME     = lowercase letters, digits and "-" (a composition resource name)
    DETAIL   = STATE [" " NOTE]                       ; "Ready", "Ready (...)", "complete (...)"
             / "connection details"
             / FIELD [" " VALUE]                      ; "status.atProvider.id",
                                                      ; "status.atProvider.status ISSUED"
             / NOTE                                   ; "(the identity's grant on the key vault)"
    STATE    = "Ready" / "complete"
    FIELD    = ("status" / "spec" / "metadata") 1*("." key / "[" index "]")
    VALUE    = one word without spaces, commas or parentheses
    NOTE     = "(" text without parentheses ")"
    OUTSIDE  = any text that does not read as NAME [" " DETAIL]   ; "a node group"

A wait with no detail waits for the resource to exist (be observed). Nothing is cut: the
message holds every hold, however many. Two things keep the grammar unambiguous, and
:class:`Wait` refuses to be built otherwise (so a new kind of detail fails every test that
composes it, not a reader): a composed resource's detail is one of the forms above, and a wait
outside the composite never reads like one on a composed resource ("a node group" reads as
resource ``a`` only if "node group" were a detail, which it is not; begin such a text with a
capital or a phrase, never with a name and a detail). Holds and waits are split at ", "
outside parentheses; text the user wrote, such as an async actor's ``runtime.scriptPath`` file
name in a wait outside the composite, could hold ", " or an unmatched parenthesis: ", " then
reads back as two waits outside the composite (the same message, formatted again), and an
unmatched parenthesis makes :func:`parse_waiting_summary` refuse the message, naming it.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

#: The ``Composed`` condition's reason while something is held back: its message is
#: :func:`waiting_summary` of the holds.
WAITING = "WaitingForDependencies"

READY = "Ready"
#: A Job (wrapped in an Object) that has run to completion.
COMPLETE = "complete"
CONNECTION_DETAILS = "connection details"

#: A composition resource name, as every composer names its resources (DNS-label characters).
NAME = r"[a-z0-9](?:[-a-z0-9]*[a-z0-9])?"
_NOTE = r"\([^()]*\)"
_FIELD = r"(?:status|spec|metadata)(?:\.[A-Za-z0-9_]+|\[[^\]\s]*\])+"
_DETAIL = (
    rf"(?:(?:{READY}|{COMPLETE})(?: {_NOTE})?"
    rf"|{CONNECTION_DETAILS}"
    rf"|{_FIELD}(?: [^\s,()]+)?"
    rf"|{_NOTE})"
)
#: A wait on a composed resource: its name, then (optionally) a detail of the grammar above.
RESOURCE_WAIT = re.compile(rf"(?P<resource>{NAME})(?: (?P<detail>{_DETAIL}))?")
_HOLD = re.compile(rf"(?P<held>{NAME}) \(waits for (?P<waits>.*)\)", re.DOTALL)


@dataclass(frozen=True)
class Wait:
    """One thing a held-back resource waits for: ``resource``'s ``detail``.

    Built only if the Composed condition can say it so that it reads back the same (see the
    module's grammar): a :class:`ValueError` here is a programming error in the caller.
    """

    resource: str | None
    detail: str = ""

    def __post_init__(self) -> None:
        text = str(self)
        read = RESOURCE_WAIT.fullmatch(text)
        if self.resource is None:
            if not text:
                msg = "a wait outside the composite needs a text saying what it waits for"
                raise ValueError(msg)
            if read is not None:
                msg = (
                    f"wait outside the composite {text!r} reads as one on composed resource "
                    f"{read['resource']!r} (fnplatform.holds grammar): reword it"
                )
                raise ValueError(msg)
        elif read is None or read["resource"] != self.resource:
            msg = (
                f"wait on {self.resource!r} for {self.detail!r} is outside the Composed "
                "condition's grammar (fnplatform.holds): add the detail's form there"
            )
            raise ValueError(msg)

    def __str__(self) -> str:
        return " ".join(part for part in (self.resource, self.detail) if part)


@dataclass(frozen=True)
class Hold:
    """Everything a held-back resource waits for."""

    waits_for: tuple[Wait, ...]

    @property
    def resources(self) -> set[str]:
        """The composed resources it waits for."""
        return {wait.resource for wait in self.waits_for if wait.resource}

    def __str__(self) -> str:
        return ", ".join(str(wait) for wait in self.waits_for)


def waiting_summary(held: Mapping[str, Hold]) -> str:
    """``a (waits for b), c (waits for d)``: a message that says what waits for what."""
    return ", ".join(f"{name} (waits for {need})" for name, need in sorted(held.items()))


def parse_wait(text: str) -> Wait:
    """The :class:`Wait` that :func:`str` made ``text``: on a composed resource when it reads
    as one (the grammar above), else on something outside the composite."""
    read = RESOURCE_WAIT.fullmatch(text)
    if read is None:
        return Wait(None, text)
    return Wait(read["resource"], read["detail"] or "")


def parse_waiting_summary(message: str) -> dict[str, Hold]:
    """The holds a :data:`WAITING` ``Composed`` message says, by held resource, in its order.

    The inverse of :func:`waiting_summary`; a message it can't have written is refused with
    a :class:`ValueError` that names it and the part that doesn't read.
    """
    held: dict[str, Hold] = {}
    if not message:
        return held
    for part in _split(message, message):
        read = _HOLD.fullmatch(part)
        if read is None:
            msg = (
                f"Composed message {message!r}: {part!r} is not "
                "'<resource> (waits for <what>, ...)'"
            )
            raise ValueError(msg)
        waits = read["waits"]
        try:
            held[read["held"]] = Hold(
                tuple(parse_wait(text) for text in _split(waits, message)) if waits else ()
            )
        except ValueError as error:
            msg = f"Composed message {message!r}: {error}"
            raise ValueError(msg) from None
    return held


def _split(text: str, message: str) -> list[str]:
    """``text`` cut at each ", " outside parentheses (``message`` names it when unbalanced)."""
    parts: list[str] = []
    depth = start = 0
    for index, char in enumerate(text):
        if char == "(":
            depth += 1
        elif char == ")":
            depth -= 1
        elif depth == 0 and text.startswith(", ", index):
            parts.append(text[start:index])
            start = index + 2
        if depth < 0:
            break
    if depth != 0:
        msg = f"Composed message {message!r}: unmatched parentheses in {text!r}"
        raise ValueError(msg)
    parts.append(text[start:])
    return parts


__all__ = [
    "COMPLETE",
    "CONNECTION_DETAILS",
    "NAME",
    "READY",
    "RESOURCE_WAIT",
    "WAITING",
    "Hold",
    "Wait",
    "parse_wait",
    "parse_waiting_summary",
    "waiting_summary",
]
