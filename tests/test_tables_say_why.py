"""Every row of a parametrized table says why it is there, and a failing row prints it.

What counts, read from the source with ``ast`` (so it stays true as tables are added):

- A *table* is the argvalues of a ``@pytest.mark.parametrize(argnames, argvalues)`` decorator
  in tests/, when they are written as rows: a list or tuple literal in the decorator, or a
  module-level name bound to one that the module uses for nothing else. A table computed from
  data (a call, a comprehension, a list the module also uses elsewhere: every render case,
  every golden, every kind) derives each row's reason from the data it comes from.
- A *sweep* needs no reasons: one argname whose every value is a literal str, int, float,
  bool or None (``"cloud", ("aws", "gcp", "azure")``): the value is the row's id and the
  test's name says what holds for each.
- A row *says why* when it is ``case("why ...", *values)`` (tests/support/table.py) with a
  non-empty string literal first, and only then: a column named ``reason`` or ``why`` is one
  of the row's values (an expected message, a condition's reason), not why the row exists.

Starred parts of a literal (``[*OTHER, (...)]``) are data and not read here.
"""

from __future__ import annotations

import ast
import os
import subprocess
import sys
import textwrap
from pathlib import Path

TESTS = Path(__file__).resolve().parent
ROOT = TESTS.parent
SCALARS = (str, int, float, bool, type(None))


def _argnames(node: ast.expr) -> list[str]:
    names = ast.literal_eval(node)
    if isinstance(names, str):
        return [n.strip() for n in names.split(",") if n.strip()]
    return [str(n) for n in names]


def _literal_reason(node: ast.expr | None) -> bool:
    return isinstance(node, ast.Constant) and isinstance(node.value, str) and bool(node.value)


def _says_why(row: ast.expr) -> bool:
    """Whether one row of a table carries its reason: ``case("...", *values)``."""
    return (
        isinstance(row, ast.Call)
        and isinstance(row.func, ast.Name)
        and row.func.id == "case"
        and bool(row.args)
        and _literal_reason(row.args[0])
    )


def _module_rows(tree: ast.Module) -> dict[str, list[ast.expr]]:
    """Module-level names bound to a list or tuple literal, with their elements."""
    bound: dict[str, list[ast.expr]] = {}
    for node in tree.body:
        target, value = None, None
        if isinstance(node, ast.Assign) and len(node.targets) == 1:
            target, value = node.targets[0], node.value
        elif isinstance(node, ast.AnnAssign):
            target, value = node.target, node.value
        if isinstance(target, ast.Name) and isinstance(value, ast.List | ast.Tuple):
            bound[target.id] = value.elts
    return bound


def rows_without_reasons(path: Path, root: Path = ROOT) -> list[str]:
    """``path:line`` (relative to ``root``) of every literal table row in ``path`` that does not
    say why."""
    tree = ast.parse(path.read_text(), str(path))
    bound = _module_rows(tree)
    loads: dict[str, int] = {}
    tables: list[tuple[ast.Call, ast.expr]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
            loads[node.id] = loads.get(node.id, 0) + 1
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Attribute)
            and node.func.attr == "parametrize"
            and len(node.args) >= 2
        ):
            tables.append((node, node.args[1]))
    as_table: dict[str, int] = {}
    for _, values in tables:
        if isinstance(values, ast.Name):
            as_table[values.id] = as_table.get(values.id, 0) + 1
    missing: list[str] = []
    seen: set[str] = set()
    for decorator, values in tables:
        if isinstance(values, ast.List | ast.Tuple):
            rows = values.elts
        elif (
            isinstance(values, ast.Name)
            and values.id in bound
            and loads.get(values.id) == as_table[values.id]
        ):
            if values.id in seen:
                continue
            seen.add(values.id)
            rows = bound[values.id]
        else:
            continue  # computed from data
        rows = [r for r in rows if not isinstance(r, ast.Starred)]
        names = _argnames(decorator.args[0])
        sweep = len(names) == 1 and all(
            isinstance(r, ast.Constant) and isinstance(r.value, SCALARS) for r in rows
        )
        if sweep:
            continue
        rel = path.relative_to(root)
        missing += [f"{rel}:{r.lineno}" for r in rows if not _says_why(r)]
    return missing


def test_every_literal_table_row_says_why() -> None:
    found: dict[str, list[str]] = {}
    for path in sorted(TESTS.rglob("*.py")):
        missing = rows_without_reasons(path)
        if missing:
            found[str(path.relative_to(ROOT))] = missing
    assert not found, (
        "table rows without a reason: write each as case('what it checks and why', ...) "
        "(tests/support/table.py):\n" + "\n".join(r for rows in found.values() for r in rows)
    )


def test_the_checker_knows_a_row_without_a_reason(tmp_path: Path) -> None:
    """The rules above, on a table of each kind: only the rows without a reason are named."""
    source = tmp_path / "test_example.py"
    source.write_text(
        textwrap.dedent(
            """
            import pytest
            from tests.support.table import case

            ROWS = [(1, 2), case("doubles", 2, 4)]

            @pytest.mark.parametrize(("a", "b"), ROWS)
            def test_named(a, b): ...

            @pytest.mark.parametrize(("a", "reason"), [(1, "one"), case("a reason", 2, "two")])
            def test_reason_column(a, reason): ...

            @pytest.mark.parametrize("cloud", ["aws", "gcp"])
            def test_sweep(cloud): ...

            @pytest.mark.parametrize("spec", [{"a": 1}, case("empty", {})])
            def test_one_argname_of_maps(spec): ...

            @pytest.mark.parametrize("n", list(range(3)))
            def test_computed(n): ...
            """
        )
    )
    missing = [m.rsplit(":", 1)[1] for m in rows_without_reasons(source, tmp_path)]
    assert missing == ["5", "10", "16"], missing


def test_a_failing_row_prints_its_reason(tmp_path: Path) -> None:
    """tests/conftest.py adds the row's reason to the failure report, for a failed assert."""
    (tmp_path / "test_failing.py").write_text(
        textwrap.dedent(
            """
            import pytest
            from tests.support.table import case

            @pytest.mark.parametrize(("a", "b"), [case("one and one make two", 1, 3)])
            def test_sum(a, b):
                assert a + 1 == b
            """
        )
    )
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "platform")])}
    run = subprocess.run(
        [
            *(sys.executable, "-m", "pytest", "-p", "tests.conftest", "-c", os.devnull, "-q"),
            *("-p", "no:cacheprovider", str(tmp_path / "test_failing.py")),
        ],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        check=False,
    )
    assert run.returncode == 1, run.stdout + run.stderr
    assert "test_sum[1-3]" in run.stdout, run.stdout  # the id is the values', as before
    assert "why this row" in run.stdout and "one and one make two" in run.stdout, run.stdout
