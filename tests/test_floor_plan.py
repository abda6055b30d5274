"""The floor plan of ``fnplatform`` (docs/architecture.md "Floor plan"), held against the code.

Each package is a floor; a module may import its own floor and the floors below, never one
above: that is what lets a newcomer read the library from the bottom up, and what keeps a cloud
builder from reaching the engine. Every ``from fnplatform... import`` counts, lazy and
``TYPE_CHECKING`` ones too (a type is a dependency). The shared vocabulary stays small.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "platform" / "fnplatform"

#: Floors from the bottom: a module imports its own floor or a lower one.
FLOORS: dict[str, int] = {
    "vocabulary": 0,  # the loose modules at the top of fnplatform
    "request": 1,
    "api": 2,
    "observation": 2,
    "composition": 3,
    "rules": 4,
    "library": 5,
    "clouds": 6,
    "composers": 7,
    "engine": 8,
    "upgrade": 9,  # the upgrade preview: a tool in the package, never on the request path
}

#: At most this many loose modules at the top of the package (``__init__`` not counted).
MOST_LOOSE = 12


def floor_of(module: str) -> str:
    """The floor a dotted ``fnplatform`` module lives on."""
    parts = module.split(".")
    if len(parts) > 1 and (PACKAGE / parts[1]).is_dir():
        return parts[1]
    return "vocabulary"


def module_name(path: Path) -> str:
    rel = path.relative_to(PACKAGE.parent).with_suffix("")
    return ".".join(rel.parts).removesuffix(".__init__")


def imports(path: Path) -> list[tuple[int, str]]:
    """Every ``fnplatform`` module ``path`` imports, with the line."""
    found = []
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if node.module == "fnplatform":
                found += [(node.lineno, f"fnplatform.{alias.name}") for alias in node.names]
            elif node.module.startswith("fnplatform."):
                found.append((node.lineno, node.module))
        elif isinstance(node, ast.Import):
            found += [
                (node.lineno, alias.name)
                for alias in node.names
                if alias.name.startswith("fnplatform.")
            ]
    return found


def test_every_package_is_a_known_floor_with_a_docstring_saying_who_may_import_it() -> None:
    packages = sorted(p.name for p in PACKAGE.iterdir() if (p / "__init__.py").is_file())
    assert set(packages) == set(FLOORS) - {"vocabulary"}, (
        "a package was added or removed: give it a floor in FLOORS and in docs/architecture.md"
    )
    for name in packages:
        doc = ast.get_docstring(ast.parse((PACKAGE / name / "__init__.py").read_text()))
        assert doc and "import" in doc, (
            f"fnplatform/{name}/__init__.py: its docstring says what lives there and what may "
            "import it"
        )


def test_at_most_twelve_modules_are_loose_at_the_top() -> None:
    loose = sorted(p.stem for p in PACKAGE.glob("*.py") if p.name != "__init__.py")
    assert len(loose) <= MOST_LOOSE, (
        f"{len(loose)} loose modules ({', '.join(loose)}): a new one belongs in a package"
    )


@pytest.mark.parametrize(
    "path",
    [
        pytest.param(p, id=str(p.relative_to(PACKAGE)))
        for p in sorted(PACKAGE.rglob("*.py"))
        if "__pycache__" not in p.parts
    ],
)
def test_a_module_imports_only_its_own_floor_and_the_floors_below(path: Path) -> None:
    here = floor_of(module_name(path))
    upward = [
        f"line {line}: {module} ({floor_of(module)}, floor {FLOORS[floor_of(module)]})"
        for line, module in imports(path)
        if FLOORS[floor_of(module)] > FLOORS[here]
    ]
    assert not upward, (
        f"{path.relative_to(PACKAGE)} is on floor {FLOORS[here]} ({here}) and imports upward: "
        + "; ".join(upward)
    )
