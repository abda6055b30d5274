"""Table rows that say why: ``case(reason, *values, id=...)``.

Every row of a ``@pytest.mark.parametrize`` table carries the reason it exists, what it checks
and why that matters, like function-patch-and-transform's ``reason`` field on every Go table
case. A failing row prints its reason: the ``why`` mark this helper adds is read by
``pytest_runtest_makereport`` in tests/conftest.py, which adds a "why this row" section to the
failure report, whatever failed (an ``assert``, an exception, a timeout). The row's values and
so its test id stay as they were: the reason travels beside them, not as one of them.

tests/test_tables_say_why.py fails when a literal row of a table is written without one.
"""

from __future__ import annotations

from collections.abc import Collection

import pytest
from _pytest.mark.structures import Mark, MarkDecorator, ParameterSet

#: The mark a row's reason travels in (registered by tests/conftest.py).
WHY = "why"


def case(
    reason: str,
    *values: object,
    id: str | None = None,
    marks: MarkDecorator | Collection[MarkDecorator | Mark] = (),
) -> ParameterSet:
    """One table row: ``values`` in the table's argument order, and why the row is there.

    ``id`` and ``marks`` are pytest.param's; without ``id`` the row keeps pytest's own id
    (made of its values), so adding a reason changes no test id.
    """
    if not reason.strip():
        raise ValueError("a table row needs a reason: what it checks and why that matters")
    extra = [marks] if isinstance(marks, MarkDecorator | Mark) else list(marks)
    return pytest.param(*values, id=id, marks=[*extra, getattr(pytest.mark, WHY)(reason)])


def reasons(item: pytest.Item) -> list[str]:
    """The reasons of the rows ``item`` runs (one per parametrized table it comes from)."""
    return [str(mark.args[0]) for mark in item.iter_markers(WHY) if mark.args]
