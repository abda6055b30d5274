"""tools/composed_graph.py draws what a render composed, and only that.

Over every golden of every module in both forms (what the real Crossplane CLI rendered
through the function): the .dot it writes has an edge for every hold the composite's
``Composed`` condition says and every Usage the render composed, and no other; each composed
resource shows the readiness the render reports (the engine's "not yet ready" events, checked
against the composite's ``Ready`` condition); the .mmd draws the same nodes and edges; the
output is the same bytes whatever order the documents come in; and the SVG, where Graphviz is
installed, is well-formed and says which .dot it was drawn from. The tool's command line and
the pictures docs/graphs.md shows are checked below.
"""

from __future__ import annotations

import copy
import hashlib
import json
import re
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest
import yaml
from fnplatform.holds import WAITING, parse_waiting_summary

from tests.support.table import case
from tests.support.tools import load_tool

composed_graph = load_tool("composed_graph")
make_graph_docs = load_tool("make_graph_docs")

ROOT = Path(__file__).resolve().parent.parent
GOLDEN = ROOT / "tests" / "golden"
GOLDENS = sorted(GOLDEN.glob("*/*.yaml")) + sorted(GOLDEN.glob("*/namespaced/*.yaml"))
RESOURCE_NAME = "crossplane.io/composition-resource-name"
USAGE_KINDS = {"Usage", "ClusterUsage"}
DOT = shutil.which("dot")

_QUOTED = r'"(?:[^"\\]|\\.)*"'
DOT_NODE = re.compile(rf"  ({_QUOTED}) \[(.*)\];")
DOT_EDGE = re.compile(rf"  ({_QUOTED}) -> ({_QUOTED})(?: \[(.*)\])?;")
DOT_ATTRIBUTE = re.compile(rf"(\w+)=({_QUOTED})")


def _documents(golden: Path) -> list[dict[str, Any]]:
    return [d for d in yaml.safe_load_all(golden.read_text()) if d]


def _is_composed(document: dict[str, Any]) -> bool:
    return RESOURCE_NAME in (document.get("metadata", {}).get("annotations") or {})


def _condition(xr: dict[str, Any], kind: str) -> dict[str, Any]:
    return next((c for c in xr["status"].get("conditions", []) if c["type"] == kind), {})


def _held(xr: dict[str, Any]) -> dict[str, Any]:
    composed = _condition(xr, "Composed")
    return parse_waiting_summary(composed["message"]) if composed.get("reason") == WAITING else {}


def _row(golden: Path) -> tuple[Path, str]:
    """A golden and what it shows, said on failure."""
    documents = _documents(golden)
    composed = [d for d in documents[1:] if _is_composed(d)]
    usages = sum(d["kind"] in USAGE_KINDS for d in composed)
    held = len(_held(documents[0]))
    return golden, (
        f"{golden.relative_to(GOLDEN)}: {len(composed) - usages} composed, "
        f"{held} held back, {usages} Usages"
    )


ROWS = [_row(g) for g in GOLDENS]


def _read_dot(text: str) -> tuple[dict[str, dict[str, str]], list[tuple[str, str, dict[str, str]]]]:
    """The nodes (id -> attributes) and edges a .dot file draws, read from its text."""
    nodes: dict[str, dict[str, str]] = {}
    edges: list[tuple[str, str, dict[str, str]]] = []
    for line in text.splitlines():
        if edge := DOT_EDGE.fullmatch(line):
            attributes = {k: json.loads(v) for k, v in DOT_ATTRIBUTE.findall(edge[3] or "")}
            edges.append((json.loads(edge[1]), json.loads(edge[2]), attributes))
        elif node := DOT_NODE.fullmatch(line):
            assert json.loads(node[1]) not in nodes, f"node {node[1]} drawn twice"
            attributes = DOT_ATTRIBUTE.findall(node[2])
            nodes[json.loads(node[1])] = {k: json.loads(v) for k, v in attributes}
    return nodes, edges


def _what(node_id: str, nodes: dict[str, dict[str, str]]) -> str:
    """A node as the tests name it: its composition name, or its text when outside."""
    lines = nodes[node_id]["label"].split("\n")
    return f"outside: {' '.join(lines[:-1])}" if lines[-1] == "outside the composite" else node_id


def _expected_edges(documents: list[dict[str, Any]]) -> set[tuple[str, str, str, bool]]:
    """(source, target, label, dashed) of every hold and every Usage, from the render alone."""
    xr = documents[0]
    expected = set()
    for name, hold in _held(xr).items():
        for wait in hold.waits_for:
            if wait.resource is None:  # the text is the node's, the edge has none
                expected.add((name, f"outside: {wait.detail}", "", True))
            else:
                expected.add((name, wait.resource, wait.detail, True))
    composed = [d for d in documents[1:] if _is_composed(d)]
    named = {
        (d["apiVersion"], d["kind"], d["metadata"]["name"]): d
        for d in composed
        if d["kind"] not in USAGE_KINDS
    }

    def side(reference: dict[str, Any]) -> str:
        ref = reference["resourceRef"]  # the function names each by resourceRef
        found = named.get((reference["apiVersion"], reference["kind"], ref["name"]))
        if found is not None and ref.get("namespace") in (None, found["metadata"].get("namespace")):
            return str(found["metadata"]["annotations"][RESOURCE_NAME])
        where = "/".join(p for p in (ref.get("namespace"), ref["name"]) if p)
        return f"outside: {reference['kind']} {where} {reference['apiVersion']}"

    for usage in (d for d in composed if d["kind"] in USAGE_KINDS):
        user = (
            side(usage["spec"]["by"])
            if "by" in usage["spec"]
            else (f"composite: {xr['metadata']['name']}")
        )
        expected.add((user, side(usage["spec"]["of"]), "uses", False))
    return expected


def _unready(documents: list[dict[str, Any]]) -> set[str]:
    """What the render reports not ready: the engine's events, which the composite's Ready
    condition must agree with (it names up to three)."""
    events = {
        m[1]
        for d in documents
        if d.get("kind") == "Result"
        if (m := re.fullmatch(r'Composed resource "(.+)" is not yet ready', d["message"]))
    }
    message = _condition(documents[0], "Ready").get("message", "")
    if message.startswith("Unready resources: "):
        shown = message.removeprefix("Unready resources: ").replace(", and ", ", ").split(", ")
        assert {n for n in shown if not n.endswith(" more")} <= events, "the XR names them too"
    else:
        assert not events, "the XR's Ready condition names no unready resource"
    return events


@pytest.mark.parametrize(("golden", "reason"), ROWS, ids=[r[1].split(":")[0] for r in ROWS])
def test_the_graph_of_every_golden_draws_its_holds_usages_and_readiness(
    golden: Path,
    reason: str,
    tmp_path: Path,
) -> None:
    documents = _documents(golden)
    xr_name = documents[0]["metadata"]["name"]
    written = composed_graph.write_graph(documents, tmp_path / "first")
    assert [p.name for p in written] == [f"{xr_name}.{s}" for s in ("dot", "mmd", "svg")][
        : 3 if DOT else 2
    ], reason

    nodes, edges = _read_dot(written[0].read_text())
    drawn = {
        (_what(s, nodes), _what(t, nodes), a.get("label", ""), a.get("style") == "dashed")
        for s, t, a in edges
    }
    assert len(drawn) == len(edges), f"{reason}: an edge drawn twice"
    expected = _expected_edges(documents)
    assert drawn - expected == set(), f"{reason}: edges that are no hold and no Usage"
    assert expected - drawn == set(), f"{reason}: holds or Usages not drawn"

    unready = _unready(documents)
    resources = {
        d["metadata"]["annotations"][RESOURCE_NAME]: d
        for d in documents[1:]
        if _is_composed(d) and d["kind"] not in USAGE_KINDS
    }
    for name, body in resources.items():
        shown = "not ready" if name in unready else "Ready"
        assert nodes[name]["label"] == f"{name}\n{body['kind']}\n{shown}", (
            f"{reason}: {name}'s readiness as the render reports it"
        )
    for name in _held(documents[0]):
        assert nodes[name]["label"] == f"{name}\nheld back: not composed yet", reason
        assert "dashed" in nodes[name]["style"], f"{reason}: {name} held back, dashed"

    mermaid = written[1].read_text()
    declared = re.findall(r"^  (\w+)\[", mermaid, re.MULTILINE)
    links = re.findall(
        r'^  (\w+) (?:-\.->|-->|-\. "[^"]*" \.->|-- "[^"]*" -->) (\w+)$', mermaid, re.MULTILINE
    )
    assert len(declared) == len(set(declared)) == len(nodes), f"{reason}: Mermaid nodes"
    assert len(links) == len(edges), f"{reason}: Mermaid draws the same edges"
    assert {i for link in links for i in link} <= set(declared), f"{reason}: undeclared id"

    reordered = [documents[0], *reversed(copy.deepcopy(documents[1:]))]
    again = composed_graph.write_graph(reordered, tmp_path / "again")
    for first, second in zip(written, again, strict=True):
        assert first.read_bytes() == second.read_bytes(), f"{reason}: {first.name} not the same"

    if DOT:
        svg = written[2].read_text()
        root = ET.fromstring(svg)
        assert root.tag == "{http://www.w3.org/2000/svg}svg", f"{reason}: an SVG document"
        digest = hashlib.sha256(written[0].read_bytes()).hexdigest()
        assert f"drawn from {xr_name}.dot, sha256 {digest}" in svg, f"{reason}: provenance"


@pytest.mark.parametrize(
    ("picture", "observed", "expected", "reason"),
    [
        case(
            "a first pass: nothing observed, so what is not ready is being created",
            "cluster/gcp",
            [],
            {"network": "creating"},
            "a first pass: nothing observed, so what is not ready is being created",
        ),
        case(
            "observed state not given: not ready, whether observed or not",
            "async-actor/queue-ready",
            None,
            {"queue": "Ready", "deployment": "not ready"},
            "observed state not given: not ready, whether observed or not",
        ),
        case(
            "the Deployment is not observed yet: this pass creates it once the queue is Ready",
            "async-actor/queue-ready",
            "tests/render-cases/async-actor/observed-queue-ready.yaml",
            {"queue": "Ready", "deployment": "creating"},
            "the Deployment is not observed yet: this pass creates it once the queue is Ready",
        ),
    ],
)
def test_observed_state_tells_creating_from_observed_and_not_ready(
    picture: str,
    observed: Any,
    expected: dict[str, str],
    reason: str,
) -> None:
    if isinstance(observed, str):
        observed = [d for d in yaml.safe_load_all((ROOT / observed).read_text()) if d]
    graph = composed_graph.composed_graph(_documents(GOLDEN / f"{picture}.yaml"), observed)
    shown = {n.id: n.lines[-1] for n in graph.nodes if n.id in expected}
    assert shown == expected, reason


def test_an_observed_resource_not_ready_shows_its_ready_condition() -> None:
    documents = _documents(GOLDEN / "async-actor" / "queue-ready.yaml")
    observed = [
        {
            "apiVersion": "kubernetes.crossplane.io/v1alpha2",
            "kind": "Object",
            "metadata": {"name": "d", "annotations": {RESOURCE_NAME: "deployment"}},
            "status": {"conditions": [{"type": "Ready", "status": "False", "reason": "Creating"}]},
        }
    ]
    graph = composed_graph.composed_graph(documents, observed)
    shown = next(n for n in graph.nodes if n.id == "deployment").lines[-1]
    assert shown == "Ready: False (Creating)", "the observed Ready condition, as the provider says"


def test_usages_by_selector_and_without_a_user_are_drawn() -> None:
    """The function names Usage sides by resourceRef; Crossplane's CRDs also allow a
    resourceSelector (matchLabels, matchControllerRef) and a Usage without ``by``."""
    documents = _documents(GOLDEN / "cluster" / "gcp-ready.yaml")
    usage = copy.deepcopy(next(d for d in documents if d.get("kind") == "ClusterUsage"))
    usage["metadata"]["annotations"][RESOURCE_NAME] = "usage-by-selector"
    usage["spec"] = {
        "of": {
            "apiVersion": "compute.gcp.upbound.io/v1beta1",
            "kind": "Network",
            "resourceSelector": {
                "matchControllerRef": True,
                "matchLabels": {"crossplane.io/composite": "prod-eu-gcp-7xk2p"},
            },
        },
        "reason": "kept while the composite exists",
    }
    orphan = copy.deepcopy(usage)
    orphan["metadata"]["annotations"][RESOURCE_NAME] = "usage-of-nothing"
    orphan["spec"]["of"]["resourceSelector"] = {"matchLabels": {"team": "nobody"}}
    graph = composed_graph.composed_graph([*documents, usage, orphan])
    uses = {(e.source, e.target) for e in graph.edges if e.role == "uses"}
    assert ("composite: prod-eu-gcp-7xk2p", "network") in uses, "selector resolved, XR the user"
    outside = next(n for n in graph.nodes if n.lines[0] == "Network matching team=nobody")
    assert ("composite: prod-eu-gcp-7xk2p", outside.id) in uses, "an unmatched selector"


def test_without_graphviz_the_dot_and_mermaid_are_written_and_stderr_says_how(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))  # no dot on it
    monkeypatch.setattr(composed_graph, "_said", set())
    written = composed_graph.write_graph(_documents(GOLDEN / "cluster" / "gcp.yaml"), tmp_path)
    assert [p.suffix for p in written] == [".dot", ".mmd"]
    assert not list(tmp_path.glob("*.svg"))
    assert "apt-get install graphviz" in capsys.readouterr().err


def _cli(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(ROOT / "tools" / "composed_graph.py"), *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )


def test_cli_help_writes_nothing(tmp_path: Path) -> None:
    shown = _cli("--help", cwd=tmp_path)
    assert shown.returncode == 0 and "--out" in shown.stdout
    assert not list(tmp_path.iterdir())


def test_cli_draws_each_composite_of_a_file_of_several_renders(tmp_path: Path) -> None:
    rendered = tmp_path / "rendered.yaml"
    rendered.write_text(
        (GOLDEN / "cluster" / "gcp.yaml").read_text()
        + (GOLDEN / "async-actor" / "ready.yaml").read_text()
    )
    drawn = _cli(str(rendered), "--out", str(tmp_path / "out"), cwd=tmp_path)
    assert drawn.returncode == 0, drawn.stderr
    assert {p.stem for p in (tmp_path / "out").iterdir()} == {
        "prod-eu-gcp-7xk2p",
        "text-processor-x7k2p",
    }


@pytest.mark.parametrize(
    ("text", "refusal", "reason"),
    [
        case(
            "a composed resource before any composite",
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n  annotations:\n"
            f"    {RESOURCE_NAME}: x\n",
            "document 1 (ConfigMap): a render starts with its composite",
            "a composed resource before any composite",
        ),
        case("not YAML", "a: [unclosed\n", "rendered ", "not YAML"),
        case("an empty file", "", "no documents", "an empty file"),
        case(
            "not an object",
            "- a list\n",
            "document 1: expected a Kubernetes object",
            "not an object",
        ),
    ],
)
def test_cli_refuses_what_is_no_render_naming_it(
    text: str,
    refusal: str,
    reason: str,
    tmp_path: Path,
) -> None:
    rendered = tmp_path / "rendered.yaml"
    rendered.write_text(text)
    drawn = _cli(str(rendered), "--out", str(tmp_path / "out"), cwd=tmp_path)
    assert drawn.returncode == 2, reason
    assert refusal in drawn.stderr and "Traceback" not in drawn.stderr, reason
    assert not (tmp_path / "out").exists(), reason


def test_the_pictures_in_the_docs_are_current() -> None:
    """docs/graphs/ is what tools/make_graph_docs.py draws from the goldens today."""
    assert make_graph_docs.stale() == [], "run python tools/make_graph_docs.py"
    for picture in make_graph_docs.PICTURES:
        assert (ROOT / "docs" / "graphs.md").read_text().count(f"graphs/{picture}/") >= 1, (
            f"docs/graphs.md shows {picture}"
        )
