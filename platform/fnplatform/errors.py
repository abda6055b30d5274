"""Errors a composer raises to tell the user what is wrong, by field and reason.

Every error that reaches the user names the field it is about. The runner turns these into
results; nothing else is allowed to escape as a gRPC error or a traceback.
"""

from __future__ import annotations


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
