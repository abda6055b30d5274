"""Errors a composer raises to tell the user what is wrong, by field and reason.

Every error that reaches the user names the field it is about. The runner turns these into
results; nothing else is allowed to escape as a gRPC error or a traceback.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable


class CompositionError(Exception):
    """A problem the user can fix, about one field of their input."""

    def __init__(self, field: str, reason: str) -> None:
        super().__init__(f"{field}: {reason}")
        self.field = field
        self.reason = reason

    def __str__(self) -> str:
        # A validation summary already starts with the field path; don't say it twice.
        if self.reason.startswith(self.field):
            return self.reason
        return f"{self.field}: {self.reason}"


class InputError(CompositionError):
    """The composite, the step input or an EnvironmentConfig is invalid."""


class Pending(Exception):  # noqa: N818 - a signal, not an error
    """A required resource has not been fetched yet; Crossplane will call again with it."""


class SpecError(Exception):
    """A builder's complaint about one attribute of its library spec.

    Builders know their spec, not the composite: the agnostic call maps ``attribute`` to the
    user's field (``fields={"cidr": "spec.network.cidr"}``) and raises an InputError there, so
    the message always names the field the user wrote.
    """

    def __init__(self, attribute: str, reason: str) -> None:
        super().__init__(f"{attribute}: {reason}")
        self.attribute = attribute
        self.reason = reason


class NotYet(Exception):  # noqa: N818 - an outcome, not an error
    """The composer can't go further yet: a False condition, not a fatal result.

    Raised by :meth:`fnplatform.composition.Composition.not_yet`. The runner keeps what was
    emitted so far and the composite's status, and sets condition ``condition`` (default
    ``Composed``; Crossplane reserves ``Ready`` and ``Synced``) False with ``reason`` and
    ``message``. If that would drop an existing composed resource the runner
    answers with a fatal result instead, on which Crossplane keeps everything.
    """

    def __init__(self, reason: str, message: str, condition: str = "Composed") -> None:
        super().__init__(message)
        self.reason = reason
        self.message = message
        self.condition = condition


# "Did you mean": how every error about a name the user wrote points at the valid ones.


def closest(name: str, choices: Iterable[str]) -> str | None:
    """The choice ``name`` was most likely meant to be, if any is close enough."""
    matches = difflib.get_close_matches(name, list(choices), n=1, cutoff=0.6)
    if not matches:
        lowered = {c.lower(): c for c in choices}
        matches = [lowered[name.lower()]] if name.lower() in lowered else []
    return matches[0] if matches else None


def suggest(name: str, valid: Iterable[str], what: str = "fields") -> str:
    """``did you mean X?``, or the valid names when none is close."""
    valid = sorted(valid)
    guess = closest(name, valid)
    if guess:
        return f"did you mean {guess}?"
    return f"valid {what} here: {', '.join(valid) or 'none'}"
