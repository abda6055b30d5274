"""Waiting: what a composed resource waits for before it may be composed.

A composer asks for what it can't compose without (an observed field, readiness, connection
details): the value, or a :class:`~fnplatform.holds.Hold` recorded in ``notes.held`` and no
value, and the caller doesn't emit what waits. The runner's ``Composed`` condition says every
hold (:func:`~fnplatform.holds.waiting_summary`); the holds themselves, and their grammar, are
:mod:`fnplatform.holds`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from fnplatform.composition.status import StatusMemory
from fnplatform.holds import CONNECTION_DETAILS, READY, Hold, Wait


class Waiting(StatusMemory):
    """Holds, and the reads that record one when what they read isn't there yet."""

    def hold(self, name: str, *waits_for: Wait) -> None:
        """Don't create ``name`` yet: it waits for ``waits_for`` (replacing an earlier hold)."""
        self.notes.held[name] = Hold(waits_for)

    def needs(self, name: str, path: str, *, by: str, remember: str | None = None) -> Any:
        """An observed field ``path`` of ``name`` that ``by`` can't be composed without.

        Returns the value, or None after recording that ``by`` waits for it (the Composed
        condition says so); the caller then doesn't emit ``by``. With ``remember`` the value
        is kept in ``status.<remember>`` and used while its source is briefly unobserved.
        """
        value = self.observed_value(name, path)
        if value in ("", [], {}):
            value = None
        if remember is not None:
            value = self.remember(remember, value)
        if value is None:
            self.hold(by, Wait(name, path))
        return value

    def setting_of(
        self, name: str, field: str, composed: Any, *, by: str, observed: str | None = None
    ) -> Any:
        """A setting (``forProvider.<field>``) of composed resource ``name`` that ``by`` derives
        from: a range, a version.

        The ``composed`` value, unless ``name`` is adopted with its own settings (imported,
        and ``field`` not taken over, see :mod:`fnplatform.importing`): then the value observed
        at ``observed`` (default ``status.atProvider.<field>``), and None while ``by`` waits
        for it, like :meth:`needs`.
        """
        if not self.import_spec.adopts(name, field):
            return composed
        return self.needs(name, observed or f"status.atProvider.{field}", by=by)

    def needs_ready(self, name: str, *, by: str) -> bool:
        """Whether ``by`` may be composed: ``name`` reports Ready, or ``by`` already exists.

        For what existing isn't enough for: a Helm release whose hook Jobs need a schedulable
        node waits for a node pool that is Ready, not just created. False records the hold (the
        Composed condition says so) and the caller doesn't emit ``by``; an existing ``by`` is
        never held back (dropping it would delete it).
        """
        if self.is_ready(name) or by in self.observed:
            return True
        self.hold(by, Wait(name, READY))
        return False

    def needs_connection(self, name: str, *, by: str) -> dict[str, bytes] | None:
        """The observed connection details of ``name``, or None while ``by`` waits for them.

        Use it to hold back what would crash without the secret; never copy the values.
        """
        details = self.observed.connection_details(name)
        if not details:
            self.hold(by, Wait(name, CONNECTION_DETAILS))
            return None
        return details

    def pending(self, parts: Mapping[str, Iterable[str]]) -> list[str]:
        """The parts (a label -> its composed names) that are not Ready yet, in order.

        A part is pending while one of its resources is composed or held back and not Ready.
        A resource neither composed nor held (a cloud that can't provide it: a CapabilityGap
        condition says so) is not waited for. Every module reports its parts with this.
        """
        wanted = set(self.desired) | set(self.notes.held)
        return [
            part
            for part, names in parts.items()
            if any(name in wanted and not self.is_ready(name) for name in names)
        ]
