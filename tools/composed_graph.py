"""Draw what one render composed: its resources, what waits for what, which Usage protects what.

    python tools/composed_graph.py RENDERED.yaml --out DIR [--observed OBSERVED.yaml]

RENDERED.yaml is what ``crossplane composition render --include-function-results`` prints
(``make render`` writes it): the composite (XR), then its composed resources, then ``Result``
objects; several renders one after another are drawn one composite each. For each composite
it writes ``DIR/<composite-name>.dot`` (Graphviz), ``.mmd`` (Mermaid, which GitHub and GitLab
show as a picture) and, where Graphviz's ``dot`` is installed, ``.svg``; without ``dot`` it
says on stderr how to install it and writes the other two.

Nodes are the composed resources (composition resource name, kind, readiness as the render
reports it), the resources the function holds back (dashed: not composed yet, named in the
composite's ``Composed`` condition, read with :func:`fnplatform.holds.parse_waiting_summary`)
and what a hold or Usage names outside the composite (dotted). Edges: a hold, dashed, from
the held resource to what it waits for, labelled with the detail ("Ready", a status field);
a Usage, solid, from ``spec.by`` to ``spec.of``, labelled "uses" (Usages are edges, not
nodes). docs/graphs.md says how to read it. Same input, same bytes.

Other tools import it (tools/ on ``sys.path``): :func:`write_graph` for one composite's
documents, :func:`split_renders` to cut a file of several renders into composites.
"""

from __future__ import annotations

import argparse
import hashlib
import re
import shutil
import subprocess
import sys
import textwrap
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT / "platform") not in sys.path:
    sys.path.insert(0, str(ROOT / "platform"))

from fnplatform.holds import WAITING, Hold, parse_waiting_summary  # noqa: E402

RESOURCE_NAME = "crossplane.io/composition-resource-name"
COMPOSITE_LABEL = "crossplane.io/composite"
#: The Usage kinds, by API group: Crossplane v2's and the deprecated v1 one.
USAGE_KINDS = {
    ("protection.crossplane.io", "Usage"),
    ("protection.crossplane.io", "ClusterUsage"),
    ("apiextensions.crossplane.io", "Usage"),
}
RESULT_API_VERSIONS = ("render.crossplane.io/",)
#: The render engine's event for each composed resource that isn't ready (Crossplane core
#: ``internal/controller/apiextensions/composite``: "Composed resource %q is not yet ready").
NOT_YET_READY = re.compile(r'Composed resource "(?P<name>[^"]+)" is not yet ready')
#: How the composite's Ready condition begins while composed resources are not ready.
UNREADY_PREFIX = "Unready resources: "

# Node roles.
COMPOSED = "composed"
HELD = "held"
#: Of the composite, but neither composed nor held in this pass: a hold waits for it, and the
#: composer emits it once what it needs exists.
UNCOMPOSED = "uncomposed"
OUTSIDE = "outside"
COMPOSITE = "composite"
# Edge roles.
WAITS = "waits"
USES = "uses"

# Readiness shown on a composed resource.
READY = "Ready"
CREATING = "creating"
NOT_READY = "not ready"
UNKNOWN = "readiness unknown"

#: Under the composite's kind and name, at the top of every picture.
LEGEND = (
    "solid arrow: uses (a Usage); dashed arrow: waits for (held back); dashed box: not "
    "composed yet; green: Ready, amber: not yet"
)
WRAP = 34  # characters per line of a long label (a wait on something outside the composite)


@dataclass(frozen=True, order=True)
class Node:
    """One box: ``lines`` are its label, top to bottom; ``ready`` colours a composed one."""

    id: str
    role: str
    lines: tuple[str, ...]
    ready: bool | None = None


@dataclass(frozen=True, order=True)
class Edge:
    """``source`` waits for or uses ``target``: a hold (``label`` its detail) or a Usage."""

    source: str
    target: str
    role: str
    label: str


@dataclass(frozen=True)
class Graph:
    """What one render composed: nodes and edges, sorted (the output is deterministic)."""

    name: str
    title: str
    nodes: tuple[Node, ...]
    edges: tuple[Edge, ...]


def split_renders(documents: Iterable[Any]) -> list[list[dict[str, Any]]]:
    """The documents of each composite in a render's output, in order: a composite starts at
    each document that is neither a composed resource nor a ``Result``."""
    renders: list[list[dict[str, Any]]] = []
    for index, document in enumerate(documents):
        if document is None:
            continue
        if not isinstance(document, dict):
            msg = f"document {index + 1}: expected a Kubernetes object, got {document!r:.60}"
            raise ValueError(msg)
        if _is_composed(document) or _is_result(document):
            if not renders:
                msg = (
                    f"document {index + 1} ({document.get('kind')}): a render starts with "
                    "its composite (XR), not a composed resource or Result"
                )
                raise ValueError(msg)
            renders[-1].append(document)
        else:
            renders.append([document])
    return renders


def composed_graph(
    documents: Sequence[Mapping[str, Any]],
    observed: Sequence[Mapping[str, Any]] | None = None,
) -> Graph:
    """The graph of one composite's render: ``documents`` as the render prints them.

    ``observed`` (the render's ``--observed-resources``; empty when it had none) tells a
    resource being created (not observed) from one observed and not Ready, which the render
    alone can't; without it (None) both show "not ready".
    """
    xr = _composite(documents)
    composite_name = str(xr["metadata"]["name"])
    composed = [d for d in documents[1:] if _is_composed(d)]
    usages = [d for d in composed if _is_usage(d)]
    resources = {_resource_name(d): d for d in composed if not _is_usage(d)}
    unready = _unready(xr, documents)
    seen = (
        None
        if observed is None
        else {
            _resource_name(d): d
            for d in observed
            if _is_composed(d) and _labels(d).get(COMPOSITE_LABEL, composite_name) == composite_name
        }
    )
    nodes: dict[str, Node] = {}
    for name, body in resources.items():
        ready, shown = _readiness(name, unready, seen)
        nodes[name] = Node(name, COMPOSED, (name, str(body.get("kind", "")), shown), ready)
    held = holds(xr)
    for name in held:
        nodes.setdefault(name, Node(name, HELD, (name, "held back: not composed yet")))
    edges: set[Edge] = set()
    for name, hold in held.items():
        for wait in hold.waits_for:
            if wait.resource is None:
                target = f"outside: {wait.detail}"
                nodes.setdefault(
                    target,
                    Node(
                        target,
                        OUTSIDE,
                        (
                            *textwrap.wrap(
                                wait.detail, WRAP, break_long_words=False, break_on_hyphens=False
                            ),
                            "outside the composite",
                        ),
                    ),
                )
                edges.add(Edge(name, target, WAITS, ""))
                continue
            nodes.setdefault(
                wait.resource,
                Node(wait.resource, UNCOMPOSED, (wait.resource, "not composed in this pass")),
            )
            edges.add(Edge(name, wait.resource, WAITS, wait.detail))
    for usage in usages:
        spec = usage.get("spec") or {}
        namespace = (usage.get("metadata") or {}).get("namespace")
        users = (
            _resolve(spec["by"], namespace, resources, xr, nodes)
            if spec.get("by")
            else [_composite_node(xr, nodes)]
        )
        used = _resolve(spec.get("of") or {}, namespace, resources, xr, nodes)
        edges.update(Edge(user, of, USES, USES) for user in users for of in used)
    title = f"{xr.get('kind')} {composite_name}\n{LEGEND}"
    return Graph(composite_name, title, tuple(sorted(nodes.values())), tuple(sorted(edges)))


def holds(xr: Mapping[str, Any]) -> dict[str, Hold]:
    """What the composite's ``Composed`` condition says is held back (none unless waiting)."""
    for condition in (xr.get("status") or {}).get("conditions") or []:
        if condition.get("type") == "Composed" and condition.get("reason") == WAITING:
            return parse_waiting_summary(str(condition.get("message", "")))
    return {}


def to_dot(graph: Graph) -> str:
    """The graph in Graphviz's language."""
    lines = [
        f"digraph {_dot_quote(graph.name)} {{",
        f"  graph [rankdir=LR, label={_dot_quote(graph.title)}, labelloc=t, fontname=Helvetica,"
        " fontsize=12, nodesep=0.2, ranksep=0.5];",
        '  node [shape=box, style="rounded,filled", fontname=Helvetica, fontsize=10,'
        ' color="#555555", fillcolor=white];',
        '  edge [fontname=Helvetica, fontsize=9, color="#555555", fontcolor="#333333"];',
    ]
    for node in graph.nodes:
        attributes = {"label": "\n".join(node.lines), **_DOT_STYLE[_style(node)]}
        lines.append(f"  {_dot_quote(node.id)} [{_dot_attributes(attributes)}];")
    for edge in graph.edges:
        attributes = {"label": edge.label} if edge.label else {}
        if edge.role == WAITS:
            attributes |= {"style": "dashed", "color": "#b7791f", "fontcolor": "#8a5a00"}
        attribute_text = f" [{_dot_attributes(attributes)}]" if attributes else ""
        lines.append(f"  {_dot_quote(edge.source)} -> {_dot_quote(edge.target)}{attribute_text};")
    lines.append("}")
    return "\n".join(lines) + "\n"


def to_mermaid(graph: Graph) -> str:
    """The graph as a Mermaid flowchart."""
    ids = mermaid_ids(graph)
    lines = [*(f"%% {line}" for line in graph.title.splitlines()), "flowchart LR"]
    lines += [
        f'  {ids[node.id]}["{"<br/>".join(_mermaid_text(line) for line in node.lines)}"]'
        for node in graph.nodes
    ]
    for edge in graph.edges:
        start, end = ("-.", ".->") if edge.role == WAITS else ("--", "-->")
        link = f'{start} "{_mermaid_text(edge.label)}" {end}' if edge.label else start + end[1:]
        lines.append(f"  {ids[edge.source]} {link} {ids[edge.target]}")
    by_style: dict[str, list[str]] = {}
    for node in graph.nodes:
        by_style.setdefault(_style(node), []).append(ids[node.id])
    for style, members in sorted(by_style.items()):
        lines.append(f"  classDef {style} {_MERMAID_STYLE[style]}")
        lines.append(f"  class {','.join(members)} {style}")
    return "\n".join(lines) + "\n"


def mermaid_ids(graph: Graph) -> dict[str, str]:
    """A Mermaid id per node: ``r_<name>`` for a composition resource name (those have no
    underscore, so no two collide), ``x<n>`` for the others, numbered in sorted order."""
    ids: dict[str, str] = {}
    others = 0
    for node in graph.nodes:
        if re.fullmatch(r"[a-z0-9-]+", node.id):
            ids[node.id] = "r_" + node.id.replace("-", "_")
        else:
            others += 1
            ids[node.id] = f"x{others}"
    return ids


def to_svg(dot_source: str, dot_name: str) -> str | None:
    """``dot_source`` drawn by Graphviz, or None when ``dot`` is not installed (or fails: the
    render it illustrates never fails for its picture; stderr says why)."""
    dot = shutil.which("dot")
    if dot is None:
        _say_once(
            "composed_graph: Graphviz's `dot` is not installed, so no .svg was written (the "
            ".dot and .mmd were). Install it (`apt-get install graphviz` on Debian or Ubuntu, "
            "`brew install graphviz` on macOS) or open the .mmd in a Mermaid viewer "
            "(GitHub and GitLab show it)."
        )
        return None
    drawn = subprocess.run(
        [dot, "-Tsvg"], input=dot_source, capture_output=True, text=True, check=False
    )
    if drawn.returncode != 0:
        print(
            f"composed_graph: dot failed on {dot_name}, no .svg written: {drawn.stderr.strip()}",
            file=sys.stderr,
        )
        return None
    head, _, rest = drawn.stdout.partition("\n")
    return f"{head}\n{svg_provenance(dot_source, dot_name)}\n{rest}"


def svg_provenance(dot_source: str, dot_name: str) -> str:
    """The comment an SVG carries: which .dot it was drawn from, by digest, so a check can
    tell a current picture without Graphviz (whose layout depends on its version and fonts)."""
    digest = hashlib.sha256(dot_source.encode()).hexdigest()
    return f"<!-- tools/composed_graph.py: drawn from {dot_name}, sha256 {digest} -->"


def write_graph(
    documents: list[dict[str, Any]],
    out_dir: Path,
    observed: Sequence[Mapping[str, Any]] | None = None,
) -> list[Path]:
    """Write ``<composite-name>.dot``, ``.mmd`` and (with Graphviz) ``.svg`` of one
    composite's render into ``out_dir`` (made if missing); returns the paths written.

    ``documents``: the XR first, then what the render printed after it. ``observed``: see
    :func:`composed_graph`. Raises ValueError, naming the document, on input that is not a
    render.
    """
    graph = composed_graph(documents, observed)
    out_dir.mkdir(parents=True, exist_ok=True)
    dot_path = out_dir / f"{graph.name}.dot"
    dot_source = to_dot(graph)
    written = [dot_path, out_dir / f"{graph.name}.mmd"]
    written[0].write_text(dot_source)
    written[1].write_text(to_mermaid(graph))
    svg = to_svg(dot_source, dot_path.name)
    if svg is not None:
        written.append(out_dir / f"{graph.name}.svg")
        written[2].write_text(svg)
    return written


_DOT_STYLE: dict[str, dict[str, str]] = {
    "ready": {"fillcolor": "#e3f4e1", "color": "#2e7d32"},
    "unready": {"fillcolor": "#fff4d6", "color": "#b7791f"},
    "unknown": {"fillcolor": "#eeeeee"},
    "held": {"style": "rounded,dashed", "color": "#777777"},
    "uncomposed": {"style": "rounded,dashed", "color": "#777777", "fontcolor": "#555555"},
    "outside": {"shape": "note", "style": "dotted", "color": "#777777"},
    "composite": {"shape": "box3d", "style": "filled", "fillcolor": "#e8eef7"},
}
_MERMAID_STYLE = {
    "ready": "fill:#e3f4e1,stroke:#2e7d32",
    "unready": "fill:#fff4d6,stroke:#b7791f",
    "unknown": "fill:#eeeeee,stroke:#555555",
    "held": "fill:#ffffff,stroke:#777777,stroke-dasharray:5 5",
    "uncomposed": "fill:#ffffff,stroke:#777777,stroke-dasharray:5 5,color:#555555",
    "outside": "fill:#ffffff,stroke:#777777,stroke-dasharray:2 2",
    "composite": "fill:#e8eef7,stroke:#555555",
}


def _style(node: Node) -> str:
    if node.role == COMPOSED:
        return {True: "ready", False: "unready", None: "unknown"}[node.ready]
    return node.role


def _composite(documents: Sequence[Mapping[str, Any]]) -> Mapping[str, Any]:
    if not documents:
        msg = "no documents: expected a render (the composite first)"
        raise ValueError(msg)
    xr = documents[0]
    name = (xr.get("metadata") or {}).get("name") if isinstance(xr, Mapping) else None
    if _is_composed(xr) or _is_result(xr) or not isinstance(name, str) or not name:
        msg = "document 1: expected the composite (XR) with metadata.name, first in a render"
        raise ValueError(msg)
    if not re.fullmatch(r"[A-Za-z0-9][-.A-Za-z0-9]*", name):
        msg = f"document 1: metadata.name {name!r} is no Kubernetes name (it names the files)"
        raise ValueError(msg)
    extra = [i + 2 for i, d in enumerate(documents[1:]) if not (_is_composed(d) or _is_result(d))]
    if extra:
        msg = (
            f"document {extra[0]} ({documents[extra[0] - 1].get('kind')}): a second "
            "composite; split a file of several renders with split_renders"
        )
        raise ValueError(msg)
    return xr


def _is_composed(document: Mapping[str, Any]) -> bool:
    return RESOURCE_NAME in ((document.get("metadata") or {}).get("annotations") or {})


def _is_result(document: Mapping[str, Any]) -> bool:
    return document.get("kind") == "Result" and str(document.get("apiVersion", "")).startswith(
        RESULT_API_VERSIONS
    )


def _is_usage(document: Mapping[str, Any]) -> bool:
    group = str(document.get("apiVersion", "")).partition("/")[0]
    return (group, document.get("kind")) in USAGE_KINDS


def _labels(document: Mapping[str, Any]) -> Mapping[str, Any]:
    return (document.get("metadata") or {}).get("labels") or {}


def _resource_name(document: Mapping[str, Any]) -> str:
    return str(document["metadata"]["annotations"][RESOURCE_NAME])


def _unready(
    xr: Mapping[str, Any],
    documents: Sequence[Mapping[str, Any]],
) -> tuple[set[str], bool] | None:
    """The composed resources the render reports not ready, and whether that list is whole
    (else the others' readiness is unknown); None when the render says nothing of it.

    The engine records an event per resource not ready, which ``--include-function-results``
    prints as a ``Result``; the composite's ``Ready`` condition names at most three
    ("Unready resources: a, b, c, and 4 more", crossplane-runtime ``StableNAndSomeMore``) and
    says nothing when every composed resource is ready.
    """
    events = {
        read["name"]
        for d in documents
        if _is_result(d)
        if (read := NOT_YET_READY.fullmatch(str(d.get("message", ""))))
    }
    if events:
        return events, True
    condition = next(
        (c for c in (xr.get("status") or {}).get("conditions") or [] if c.get("type") == READY),
        None,
    )
    if condition is None:
        return None
    message = str(condition.get("message", ""))
    if not message.startswith(UNREADY_PREFIX):
        return set(), True
    names = [name.removeprefix("and ") for name in message[len(UNREADY_PREFIX) :].split(", ")]
    truncated = names[-1].endswith(" more")
    return set(names[:-1] if truncated else names), not truncated


def _readiness(
    name: str,
    unready: tuple[set[str], bool] | None,
    observed: Mapping[str, Mapping[str, Any]] | None,
) -> tuple[bool | None, str]:
    if unready is None or (name not in unready[0] and not unready[1]):
        return None, UNKNOWN
    if name not in unready[0]:
        return True, READY
    if observed is None:
        return False, NOT_READY
    seen = observed.get(name)
    if seen is None:
        return False, CREATING
    for condition in (seen.get("status") or {}).get("conditions") or []:
        if condition.get("type") == READY:
            reason = condition.get("reason")
            return False, f"{READY}: {condition.get('status')}" + (f" ({reason})" if reason else "")
    return False, f"{NOT_READY} (no {READY} condition)"


def _resolve(
    reference: Mapping[str, Any],
    namespace: str | None,
    resources: Mapping[str, Mapping[str, Any]],
    xr: Mapping[str, Any],
    nodes: dict[str, Node],
) -> list[str]:
    """The nodes a Usage's ``of`` or ``by`` names: composed resources by ``resourceRef`` or
    ``resourceSelector``, else one node outside the composite."""
    api_version, kind = reference.get("apiVersion"), reference.get("kind")
    ref = reference.get("resourceRef")
    selector = reference.get("resourceSelector") or {}
    where = (ref or selector).get("namespace") or namespace
    found = []
    for name, body in sorted(resources.items()):
        metadata = body.get("metadata") or {}
        if (body.get("apiVersion"), body.get("kind")) != (api_version, kind):
            continue
        if metadata.get("namespace") and where and metadata["namespace"] != where:
            continue
        if ref is not None:
            if metadata.get("name") == ref.get("name"):
                found.append(name)
        elif _selects(selector, metadata, xr):
            found.append(name)
    if found:
        return found
    if ref is not None:
        shown = f"{kind} {'/'.join(str(p) for p in (ref.get('namespace'), ref.get('name')) if p)}"
    else:
        labels = sorted((selector.get("matchLabels") or {}).items())
        shown = f"{kind} matching {', '.join(f'{k}={v}' for k, v in labels) or 'anything'}"
    node_id = f"outside: {api_version} {shown}"
    nodes.setdefault(
        node_id, Node(node_id, OUTSIDE, (shown, str(api_version), "outside the composite"))
    )
    return [node_id]


def _selects(
    selector: Mapping[str, Any], metadata: Mapping[str, Any], xr: Mapping[str, Any]
) -> bool:
    labels = metadata.get("labels") or {}
    if any(labels.get(key) != value for key, value in (selector.get("matchLabels") or {}).items()):
        return False
    if selector.get("matchControllerRef"):
        owners = metadata.get("ownerReferences") or []
        return any(o.get("controller") and o.get("name") == xr["metadata"]["name"] for o in owners)
    return True


def _composite_node(xr: Mapping[str, Any], nodes: dict[str, Node]) -> str:
    """The composite as a node: the user of a Usage without ``by`` (it lives as long as the
    composite does)."""
    node_id = f"composite: {xr['metadata']['name']}"
    nodes.setdefault(
        node_id,
        Node(
            node_id,
            COMPOSITE,
            (str(xr["metadata"]["name"]), str(xr.get("kind", "")), "the composite"),
        ),
    )
    return node_id


def _dot_quote(text: str) -> str:
    escaped = text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    return f'"{escaped}"'


def _dot_attributes(attributes: Mapping[str, str]) -> str:
    return ", ".join(f"{key}={_dot_quote(value)}" for key, value in attributes.items())


def _mermaid_text(text: str) -> str:
    """``text`` safe inside a quoted Mermaid label (its entity codes, not HTML)."""
    for char, code in (("#", "#35;"), ('"', "#quot;"), ("<", "#lt;"), (">", "#gt;")):
        text = text.replace(char, code)
    return text


_said: set[str] = set()


def _say_once(message: str) -> None:
    if message not in _said:
        _said.add(message)
        print(message, file=sys.stderr)


def _load(path: Path, what: str) -> list[Any]:
    try:
        return [d for d in yaml.safe_load_all(path.read_text()) if d is not None]
    except (OSError, yaml.YAMLError) as error:
        msg = f"{what} {path}: {error}"
        raise ValueError(msg) from None


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        description="Draw what a render composed: per composite, DIR/<name>.dot, .mmd and "
        "(with Graphviz) .svg. See docs/graphs.md."
    )
    parser.add_argument(
        "rendered",
        type=Path,
        help="what `crossplane composition render --include-function-results` "
        "printed (one or more renders)",
    )
    parser.add_argument("--out", type=Path, required=True, help="directory to write into")
    parser.add_argument(
        "--observed",
        type=Path,
        help="the render's --observed-resources file: tells a resource being "
        "created from one observed and not Ready",
    )
    args = parser.parse_args(argv)
    try:
        renders = split_renders(_load(args.rendered, "rendered"))
        observed = _load(args.observed, "observed") if args.observed else None
        if not renders:
            msg = f"rendered {args.rendered}: no documents"
            raise ValueError(msg)
        for documents in renders:
            for path in write_graph(documents, args.out, observed):
                print(path)
    except ValueError as error:
        print(f"composed_graph: {error}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
