"""Write docs/graphs/: the pictures docs/graphs.md shows, drawn from goldens by composed_graph.

    python tools/make_graph_docs.py            # (re)write docs/graphs/
    python tools/make_graph_docs.py --check    # exit 1 naming what is stale

One picture per module from a converged golden (every resource composed and Ready), and the
first pass of the GCP cluster, where most of it is still held back. Each is
``docs/graphs/<module>/<case>/<composite>.{dot,mmd,svg}``, drawn with the render case's
observed state (tests/render-cases/<module>.yaml). The .dot and .mmd must be what this writes
now, byte for byte; the .svg must be Graphviz's drawing of that .dot (its provenance comment
names the .dot's digest: Graphviz's layout depends on its version and the fonts installed, so
the SVG's own bytes are not compared). Writing the .svg needs Graphviz (``dot``).
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path
from typing import Any

import yaml

TOOLS = Path(__file__).resolve().parent
ROOT = TOOLS.parent
sys.path[:0] = [p for p in (str(TOOLS),) if p not in sys.path]

import composed_graph  # noqa: E402

DOCS = ROOT / "docs" / "graphs"
GOLDEN = ROOT / "tests" / "golden"
CASES = ROOT / "tests" / "render-cases"
#: ``<module>/<case>`` of each picture, as docs/graphs.md shows them.
PICTURES = (
    "cluster/gcp",
    "cluster/gcp-ready",
    "async-actor/ready",
    "environment/gcp-ready",
    "contact-center/gcp-ready",
    "openstack/customer-a-prod-ready",
)
SVG_PROVENANCE = re.compile(r"<!-- tools/composed_graph\.py: drawn from (\S+), sha256 (\w+) -->")


def observed_of(picture: str) -> list[Any]:
    """The observed resources the picture's render case gave the render (none: empty)."""
    module, case = picture.split("/")
    entries = yaml.safe_load((CASES / f"{module}.yaml").read_text()) or []
    entry = next(e for e in entries if e["name"] == case)
    if not entry.get("observed"):
        return []
    return [d for d in yaml.safe_load_all((ROOT / entry["observed"]).read_text()) if d]


def _documents(picture: str) -> list[dict[str, Any]]:
    return [d for d in yaml.safe_load_all((GOLDEN / f"{picture}.yaml").read_text()) if d]


def write(out: Path) -> list[Path]:
    """Every picture under ``out``; the paths written."""
    written: list[Path] = []
    for picture in PICTURES:
        written += composed_graph.write_graph(
            _documents(picture), out / picture, observed_of(picture)
        )
    return written


def stale() -> list[str]:
    """What in docs/graphs/ differs from what :func:`write` makes now, one line each."""
    problems: list[str] = []
    wanted: set[Path] = set()
    for picture in PICTURES:
        graph = composed_graph.composed_graph(_documents(picture), observed_of(picture))
        dot = composed_graph.to_dot(graph)
        stem = Path(picture) / graph.name
        texts = {
            ".dot": dot,
            ".mmd": composed_graph.to_mermaid(graph),
            ".svg": composed_graph.svg_provenance(dot, f"{graph.name}.dot"),
        }
        for suffix, text in texts.items():
            relative = stem.with_suffix(suffix)
            wanted.add(relative)
            committed = DOCS / relative
            if not committed.exists():
                problems.append(f"docs/graphs/{relative} is missing")
            elif suffix == ".svg":
                read = SVG_PROVENANCE.search(committed.read_text())
                if read is None or read.group(0) != text:
                    problems.append(f"docs/graphs/{relative} was not drawn from the current .dot")
            elif committed.read_text() != text:
                problems.append(f"docs/graphs/{relative} differs from what is drawn now")
    extra = (
        sorted(
            p.relative_to(DOCS)
            for p in DOCS.rglob("*")
            if p.is_file() and p.relative_to(DOCS) not in wanted
        )
        if DOCS.exists()
        else []
    )
    problems += [f"docs/graphs/{p} is drawn by no picture" for p in extra]
    return problems


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--check", action="store_true", help="exit 1 when docs/graphs/ is stale")
    args = parser.parse_args(argv)
    if args.check:
        problems = stale()
        for problem in problems:
            print(problem, file=sys.stderr)
        if problems:
            print(
                "run `python tools/make_graph_docs.py` (with Graphviz installed)", file=sys.stderr
            )
        return 1 if problems else 0
    for path in write(DOCS):
        print(path.relative_to(ROOT))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
