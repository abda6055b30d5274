"""Status memory: what the composite remembers between passes.

Desired status is applied as a whole, so what a pass doesn't write vanishes; the function's
memory of what exists (a queue URL, a cluster endpoint, a name it gave) is the composite's
``status``, read back with :meth:`StatusMemory.recorded` and written with
:meth:`StatusMemory.remember`, which keeps the saved value while its source is briefly
unobserved.
"""

from __future__ import annotations

from typing import Any

from fnplatform.api.phase import Phase
from fnplatform.composition.state import CompositionState
from fnplatform.errors import InputError
from fnplatform.merge import get_path


class StatusMemory(CompositionState):
    """Reading and writing the composite's ``status``."""

    def recorded(self, status_field: str) -> Any:
        """What an earlier reconcile recorded in the composite's ``status.<status_field>``
        (:meth:`remember`), None when nothing was: the function's memory of what exists."""
        return get_path(self.composite, f"status.{status_field}")

    def remember(self, status_field: str, value: Any) -> Any:
        """Write ``status.<status_field>``: ``value``, else the one already saved there.

        Status is the function's memory across reconciles: a value read once (a queue URL, a
        cluster endpoint) stays usable, and stays on the claim, while its source is briefly
        unobserved. Desired status is applied as a whole, so a field not written would vanish.
        """
        if value is None:
            value = get_path(self.composite, f"status.{status_field}")
        self.set_status(status_field, value)
        return value

    def set_status(self, path: str, value: Any) -> None:
        """Write ``status.<path>`` of the composite, only when ``value`` is known."""
        if value is None:
            return
        target = self.notes.status
        *parents, leaf = path.split(".")
        for part in parents:
            target = target.setdefault(part, {})
        target[leaf] = value

    def set_phase(self, phase: Phase) -> None:
        """Write ``status.phase`` in the one vocabulary every module shares (:class:`Phase`)."""
        self.set_status("phase", phase.value)

    def status_from(self, name: str, path: str, to: str) -> Any:
        """Copy an observed field of ``name`` into ``status.<to>``, remembered while unobserved."""
        return self.remember(to, self.observed_value(name, path))

    def refuse_change(
        self, field: str, recorded: Any, wanted: Any, reason: str, *, exists: bool = True
    ) -> None:
        """Refuse changing what exists and can't change in place: an InputError on ``field``
        with ``reason`` (what the change would do, what to do instead) when something
        ``exists`` with a ``recorded`` value (status, or observed) that ``wanted`` differs
        from. Nothing recorded, nothing wanted, or nothing there yet: no refusal."""
        if exists and wanted is not None and recorded not in (None, "") and recorded != wanted:
            raise InputError(field, reason)
