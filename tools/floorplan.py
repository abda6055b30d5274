"""The floor plan of ``fnplatform``: which module lives in which package, and the move to it.

The shared library grew as loose modules at the top of ``fnplatform``; they are grouped by role
(docs/architecture.md "Floor plan"). This tool is the one mechanical step that moves them: ``git
mv`` per module, then every reference to an old dotted name (``fnplatform.runner``) or path
(``fnplatform/runner.py``) in the tree's Python, Markdown, YAML and Makefile text is rewritten to
the new one. No behaviour changes; the goldens stay byte-identical.

    python tools/floorplan.py --apply    # move what is still at its old place, rewrite references
    python tools/floorplan.py --rewrite  # only rewrite references (a branch written before the
    move)
    python tools/floorplan.py --check    # exit 1 while a reference to an old name is left

``--rewrite`` is what makes the move safe beside other work: a branch that still imports
``fnplatform.runner`` is merged, then rewritten, and imports ``fnplatform.engine.runner``.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent

#: old dotted module -> new dotted module. Packages by role: ``engine`` (one pass of a request),
#: ``api`` (the XRD models and the validation of a composite's spec), ``rules`` (what runs over
#: the composer's desired resources), ``observation`` (reading observed state), ``composition``
#: (the composition view and its namespaced form); Jinja for Helm values joins the library.
MOVES: dict[str, str] = {
    "fnplatform.runner": "fnplatform.engine.runner",
    "fnplatform.reuse": "fnplatform.engine.reuse",
    "fnplatform.memo": "fnplatform.request.memo",
    "fnplatform.structs": "fnplatform.request.structs",
    "fnplatform.requirements": "fnplatform.request.requirements",
    "fnplatform.lookup": "fnplatform.library.lookup",
    "fnplatform.environment": "fnplatform.engine.environment_configs",
    "fnplatform.input": "fnplatform.api.step_input",
    "fnplatform.xrd": "fnplatform.api.xrd",
    "fnplatform.xrspec": "fnplatform.api.xrspec",
    "fnplatform.validation": "fnplatform.api.validation",
    "fnplatform.layering": "fnplatform.api.layering",
    "fnplatform.phase": "fnplatform.api.phase",
    "fnplatform.dependencies": "fnplatform.rules.dependencies",
    "fnplatform.guard": "fnplatform.rules.guard",
    "fnplatform.controls": "fnplatform.rules.controls",
    "fnplatform.provider_health": "fnplatform.rules.provider_health",
    "fnplatform.imported": "fnplatform.rules.inside_imported",
    "fnplatform.observed": "fnplatform.observation.resources",
    "fnplatform.kubernetes_status": "fnplatform.observation.kubernetes",
    "fnplatform.readiness": "fnplatform.rules.readiness",
    "fnplatform.scope": "fnplatform.composition.namespaced",
    "fnplatform.templates": "fnplatform.library.templates",
    "fnplatform.jobs": "fnplatform.library.jobs",
    "tests.support.providersim": "providersim.simulation",
    # Second step, the same day: what every floor reads of a request left the engine, and
    # readiness (a rule over the composition) left observation. A branch rewritten by the
    # first step is brought here too.
    "fnplatform.engine.memo": "fnplatform.request.memo",
    "fnplatform.engine.structs": "fnplatform.request.structs",
    "fnplatform.engine.requirements": "fnplatform.request.requirements",
    "fnplatform.engine.lookup": "fnplatform.library.lookup",
    "fnplatform.request.lookup": "fnplatform.library.lookup",
    "fnplatform.engine.step_input": "fnplatform.api.step_input",
    # The step input is an API of its own (pydantic, validated like a composite's spec).
    "fnplatform.request.step_input": "fnplatform.api.step_input",
    "fnplatform.observation.readiness": "fnplatform.rules.readiness",
}

#: Import statements the dotted rewrite cannot see (a module imported from its package).
LITERAL_REWRITES: dict[str, str] = {
    "from tests.support import providersim": "import providersim",
    "from tests.support.providersim import": "from providersim import",
}

#: Files that name a release's own layout (the fixtures of a released version are made by that
#: version's code, at its own paths): never rewritten.
KEEP = {"tools/make_upgrade_fixtures.py", "tools/floorplan.py"}

#: Modules that become a package's ``__init__`` (callers keep importing the same name).
TO_PACKAGE: dict[str, str] = {"fnplatform.composition": "fnplatform.composition"}

#: The docstring of each new package's ``__init__``: what lives there, what may import it.
PACKAGES: dict[str, str] = {
    "fnplatform.engine": (
        "The pass engine: one RunFunction request through the library.\n"
        "\n"
        "The runner that merges the EnvironmentConfigs, calls a composer and the rules after it\n"
        "and writes the response, and pass reuse. Imported by ``function/`` (the server) and the\n"
        "tests; composers, cloud builders, the library and the rules never import it (they see a\n"
        ":class:`~fnplatform.composition.Composition`)."
    ),
    "fnplatform.request": (
        "Reading a RunFunction request, for every floor: the required resources a pass\n"
        "declares and reads, protobuf Struct conversion, and the bounded memo the per-content\n"
        "caches share. Imports only the shared vocabulary; everything above may import it."
    ),
    "fnplatform.api": (
        "A module's API and the function's own: the pydantic models that are the one source of\n"
        "each XRD and its CEL rules, the step input, the phase vocabulary of a status, the user's\n"
        "part of a composite's spec, readable validation messages and layered partial specs\n"
        "(flavors, presets). Imported by composers (their models), the library, the composition\n"
        "view, the engine, the server and the generators under tools/; imports only the request\n"
        "package and the shared vocabulary."
    ),
    "fnplatform.rules": (
        "The rules run over a composer's desired resources, the same for every module: holds\n"
        "and deletion order (Usages), the guard for stateful resources, conditions that vouch\n"
        "for a control, each kind's readiness, provider health, nothing created inside imported\n"
        "infrastructure. Imported by the engine's runner, by composers and by cloud builders that\n"
        "declare controls or guard a replacement; imports the composition view and below, never\n"
        "a composer, a cloud or the library."
    ),
    "fnplatform.observation": (
        "Reading observed state: which composed resources exist, their fields and conditions,\n"
        "and what provider-kubernetes observed inside a cluster. Imported by the composition\n"
        "view, the rules and composers; imports only the request package and the shared\n"
        "vocabulary."
    ),
    "providersim": (
        "A simulation of the providers, for rendering and tests without a cloud.\n\n"
        "What a provider and the cloud behind it would report after applying the function's\n"
        "desired resources: ids the cloud computes, status fields, connection details, the\n"
        "Ready and Synced conditions. ``make render CONVERGE=1`` (tools/render_own.py), the\n"
        "fixture generators under tools/ and the tests use it; the function itself never does\n"
        "(it is not part of the wheel)."
    ),
}

#: Where a dotted module lives, relative to the repository.
ROOTS = {
    "fnplatform": "platform/fnplatform",
    "tests": "tests",
    "providersim": "platform/providersim",
}

#: The text files whose references are rewritten.
SUFFIXES = {".py", ".md", ".yaml", ".yml", ".toml", ".cfg", ".sh", ".txt"}
NAMES = {"Makefile", "Dockerfile"}


def module_path(dotted: str, package: bool = False) -> Path:
    """The file of a dotted module (``package``: the ``__init__.py`` of a package)."""
    head, *rest = dotted.split(".")
    base = Path(ROOTS[head], *rest)
    return base / "__init__.py" if package else base.with_suffix(".py")


def references() -> list[tuple[re.Pattern[str], str]]:
    """The rewrites: dotted names and slash paths of every move, longest first so that a name
    never rewrites the front of a longer one; each pattern refuses a following word character,
    so ``fnplatform.environment`` leaves ``fnplatform.environment_configs`` alone."""
    pairs: list[tuple[re.Pattern[str], str]] = []
    for old, new in sorted(MOVES.items(), key=lambda kv: -len(kv[0])):
        pairs.append((re.compile(rf"(?<![\w.]){re.escape(old)}(?!\w)"), new))
        old_path, new_path = module_path(old).as_posix(), module_path(new).as_posix()
        if old_path.startswith("platform/"):
            # "platform/fnplatform/runner.py" and the shorter "fnplatform/runner.py".
            short_old = old_path.removeprefix("platform/")
            short_new = new_path.removeprefix("platform/")
            pairs.append((re.compile(rf"(?<![\w/]){re.escape(short_old)}(?!\w)"), short_new))
            pairs.append(
                (re.compile(rf"(?<![\w/])platform/{re.escape(short_old)}(?!\w)"), new_path)
            )
        else:
            pairs.append((re.compile(rf"(?<![\w/]){re.escape(old_path)}(?!\w)"), new_path))
    return pairs


def tracked_files() -> list[Path]:
    """The tree's text files git knows (tracked or untracked, not ignored)."""
    out = subprocess.run(
        ["git", "ls-files", "-co", "--exclude-standard"],
        cwd=REPO,
        check=True,
        capture_output=True,
        text=True,
    ).stdout.split("\n")
    files = []
    for name in out:
        path = REPO / name
        if (
            name
            and (path.suffix in SUFFIXES or path.name in NAMES)
            and path.is_file()
            and not name.startswith(("tests/golden/", "tests/upgrade/", "CHANGELOG.md"))
            and name not in KEEP
        ):
            files.append(path)
    return files


def rewrite(files: list[Path]) -> list[Path]:
    """Rewrite every old reference in ``files``; the files changed."""
    pairs = references()
    changed = []
    for path in files:
        text = path.read_text()
        new = text
        for literal, replacement in LITERAL_REWRITES.items():
            new = new.replace(literal, replacement)
        for pattern, replacement in pairs:
            new = pattern.sub(replacement, new)
        if new != text:
            path.write_text(new)
            changed.append(path)
    return changed


def move() -> list[str]:
    """``git mv`` every module still at its old place; write each new package's ``__init__``."""
    done = []
    for old, new in {**MOVES, **TO_PACKAGE}.items():
        src = REPO / module_path(old)
        dst = REPO / module_path(new, package=old in TO_PACKAGE)
        if not src.exists():
            continue
        dst.parent.mkdir(parents=True, exist_ok=True)
        subprocess.run(["git", "mv", str(src), str(dst)], cwd=REPO, check=True)
        done.append(f"{src.relative_to(REPO)} -> {dst.relative_to(REPO)}")
    for package, doc in PACKAGES.items():
        init = REPO / module_path(package, package=True)
        if not init.exists():
            init.parent.mkdir(parents=True, exist_ok=True)
            init.write_text(f'"""{doc}\n"""\n')
            subprocess.run(["git", "add", str(init)], cwd=REPO, check=True)
            done.append(f"wrote {init.relative_to(REPO)}")
    return done


def leftovers(files: list[Path]) -> list[str]:
    """Lines that still name an old module or path."""
    pairs = references()
    found = []
    for path in files:
        for number, line in enumerate(path.read_text().splitlines(), 1):
            if any(literal in line for literal in LITERAL_REWRITES) or any(
                pattern.search(line) for pattern, _ in pairs
            ):
                found.append(f"{path.relative_to(REPO)}:{number}: {line.strip()}")
    return found


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    action = parser.add_mutually_exclusive_group(required=True)
    action.add_argument("--apply", action="store_true", help="move modules, rewrite references")
    action.add_argument("--rewrite", action="store_true", help="only rewrite references")
    action.add_argument("--check", action="store_true", help="exit 1 while old references remain")
    args = parser.parse_args(argv)
    if args.check:
        left = leftovers(tracked_files())
        print("\n".join(left) or "no reference to an old module is left")
        return 1 if left else 0
    if args.apply:
        for line in move():
            print(line)
    for path in rewrite(tracked_files()):
        print(f"rewrote {path.relative_to(REPO)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
