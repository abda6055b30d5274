"""No module of ``fnplatform`` imports another in a circle.

A circle of imports works only while every module of it reads the others' names late enough;
one import moved to the top, or one name read at import time, and it fails at startup with a
partially initialised module. So the module graph stays acyclic: read from the source (the
AST of ``platform/fnplatform``), never by importing it.

What counts as an edge: every import at a module's top level, including those under ``if
TYPE_CHECKING:`` (a circle only the type checker follows is still a circle of meaning: the two
modules can't be understood, or moved, apart) and under ``try``/``if``. Not counted: imports
inside a function or class body, which run when called, after every module has loaded (the
deliberate way to reach something loaded later, such as the clouds); and the implicit import of
a package's ``__init__`` when one of its modules is imported (a package re-exporting its own
modules is the one circle Python resolves by design: the submodule binds into the package
being initialised and reads nothing from it; a module that imports a name *from* its package's
``__init__`` is an explicit edge and counts).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "platform" / "fnplatform"


def module_names(package: Path) -> dict[str, Path]:
    """Every module of ``package`` (a folder), by its dotted name (a package by its own)."""
    found: dict[str, Path] = {}
    for path in sorted(package.rglob("*.py")):
        parts = list(path.relative_to(package.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        found[".".join(parts)] = path
    return found


def _top_level(body: list[ast.stmt]) -> Iterator[ast.Import | ast.ImportFrom]:
    """The imports that run when the module loads: not those in a function or class body."""
    for node in body:
        if isinstance(node, ast.Import | ast.ImportFrom):
            yield node
        elif isinstance(node, ast.If | ast.With | ast.Try):
            inner = [*node.body, *getattr(node, "orelse", ()), *getattr(node, "finalbody", ())]
            for handler in getattr(node, "handlers", ()):
                inner.extend(handler.body)
            yield from _top_level(inner)


def import_graph(package: Path) -> dict[str, set[str]]:
    """Module -> the modules of ``package`` it imports at its top level."""
    modules = module_names(package)
    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, path in modules.items():
        own_package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        for node in _top_level(ast.parse(path.read_text(), str(path)).body):
            if isinstance(node, ast.Import):
                graph[name].update(alias.name for alias in node.names if alias.name in modules)
                continue
            base = node.module or ""
            if node.level:
                anchor = own_package.split(".")[: len(own_package.split(".")) - node.level + 1]
                base = ".".join([*anchor, *([node.module] if node.module else [])])
            for alias in node.names:
                submodule = f"{base}.{alias.name}"
                if submodule in modules:
                    graph[name].add(submodule)  # from package import module
                elif base in modules:
                    graph[name].add(base)  # from module import name
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of ``graph`` that hold a circle, each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in sorted(graph[node]):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component: list[str] = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1 or node in graph[node]:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def describe(component: list[str], graph: dict[str, set[str]]) -> str:
    """The imports inside one circle, ``a -> b`` each, for the failure message."""
    members = set(component)
    return "; ".join(
        f"{source} -> {target}"
        for source in component
        for target in sorted(graph[source] & members)
    )


def test_fnplatform_imports_no_module_in_a_circle() -> None:
    graph = import_graph(PACKAGE)
    assert len(graph) > 100, f"read only {len(graph)} modules under {PACKAGE}"
    found = cycles(graph)
    assert not found, "import circles among fnplatform modules: " + " | ".join(
        describe(component, graph) for component in found
    )


def test_a_circle_is_found_even_when_only_the_type_checker_follows_it(tmp_path: Path) -> None:
    # the check itself: a circle closed under TYPE_CHECKING, through a package re-export, is
    # found; the implicit import of a package by its own module is not a circle
    package = tmp_path / "pkg"
    (package / "sub").mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "sub" / "__init__.py").write_text("from pkg.sub.core import Core\n")
    (package / "sub" / "core.py").write_text("from pkg.helper import assist\nclass Core: ...\n")
    (package / "helper.py").write_text(
        "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from pkg.sub import Core\n"
        "def assist() -> None:\n    from pkg import other\n"
    )
    (package / "other.py").write_text("import pkg.helper\n")
    graph = import_graph(package)
    assert graph["pkg.sub"] == {"pkg.sub.core"}, graph
    assert graph["pkg.helper"] == {"pkg.sub"}, "the function-level import is not an edge"
    assert cycles(graph) == [["pkg.helper", "pkg.sub", "pkg.sub.core"]], graph
