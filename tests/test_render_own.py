"""``make render XR=<file>`` (tools/render_own.py): a user's own claim or composite, of any
module and either form, rendered by the real CLI and engine with the module's shipped
settings; CONVERGE plays the providers to the converged pass, OBSERVED renders against an
exported state; a summary ends every run; bad input is one line and exit 2.

The end-to-end tests (marker ``e2e``) run the tool as a user does (``python
tools/render_own.py``, what ``make render XR=...`` runs) on example claims copied to a temporary
folder and edited, so the output can only show the edit if the file on the command line is the
one rendered.
"""

from __future__ import annotations

import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from tests.support.table import case
from tests.support.tools import load_tool

ROOT = Path(__file__).resolve().parent.parent
render_tool = load_tool("render_examples")
own = load_tool("render_own")
GOLDEN = ROOT / "tests" / "golden"
MODULES = ("async-actor", "cluster", "contact-center", "environment", "openstack")


def _documents(text: str) -> list[dict[str, Any]]:
    return [d for d in yaml.safe_load_all(text) if d]


# ---- the examples' platform folders: what a cluster holds, nothing a render would reconcile --


def test_every_module_has_a_platform_settings_folder() -> None:
    assert sorted(own.PLATFORM_SETTINGS) == sorted({api.module for api in own.apis()})


@pytest.mark.parametrize("module", MODULES)
def test_a_platform_folder_holds_no_composite_and_no_claim(module: str) -> None:
    """``--required-resources <folder>`` puts every object of the folder (its files, not its
    subfolders: crossplane/cli v2.5 cmd/crossplane/render/load.go ``getYAMLFiles``) in the
    engine's store; a composite there of the kind being rendered is reconciled in place of the
    one on the command line. So a platform folder holds no composite and no claim of any
    module, and no subfolder a user might think is read."""
    folder = own.PLATFORM_SETTINGS[module]
    kinds = {a.kind for a in own.apis()} | {a.claim_kind for a in own.apis() if a.claim_kind}
    found = [
        f"{path.name}: {doc['kind']}"
        for path in sorted(folder.glob("*.yaml"))
        for doc in _documents(path.read_text())
        if doc["kind"] in kinds
    ]
    assert found == [], f"{folder} holds composites or claims"
    assert [p.name for p in folder.iterdir() if p.is_dir()] == []


# ---- claim or composite -> the composite to render ------------------------------------------


@dataclass(frozen=True)
class Given:
    path: str
    kind: str
    module: str
    namespaced: bool
    given: str
    why: str


GIVEN = [
    Given(
        "examples/environment/claim-aws.yaml",
        "UnifiedEnvironment",
        "environment",
        False,
        "claim",
        "the claim kind EnvironmentClaim is no X-prefix of its composite's kind: "
        "the XRD's names.kind says UnifiedEnvironment (xr generate would guess "
        "XEnvironmentClaim)",
    ),
    Given(
        "examples/contact-center/claim-azure.yaml",
        "ContactCenterEndpoint",
        "contact-center",
        False,
        "claim",
        "ContactCenterEndpointClaim's composite is ContactCenterEndpoint",
    ),
    Given(
        "examples/cluster/claim-gcp.yaml",
        "XCluster",
        "cluster",
        False,
        "claim",
        "Cluster claims XCluster",
    ),
    Given(
        "examples/openstack/tenants/finance/prod.yaml",
        "XOpenStackCluster",
        "openstack",
        False,
        "claim",
        "a multi-API module: the API is found by group and claim kind",
    ),
    Given(
        "examples/async-actor/xr.yaml",
        "XAsyncActor",
        "async-actor",
        False,
        "composite",
        "a v1 composite is rendered as written, cluster-scoped",
    ),
    Given(
        "examples/cluster/namespaced/xr-gcp.yaml",
        "XCluster",
        "cluster",
        True,
        "composite",
        "a v2 XR with a namespace is the namespaced form",
    ),
]


@pytest.mark.parametrize("case", GIVEN, ids=[g.path for g in GIVEN])
def test_a_claim_or_composite_is_found_in_its_module(case: Given) -> None:
    target = own.target_of(ROOT / case.path)
    assert (target.composite["kind"], target.api.module, target.namespaced, target.given) == (
        case.kind,
        case.module,
        case.namespaced,
        case.given,
    ), case.why


def test_a_claim_becomes_the_composite_crossplane_creates() -> None:
    """As ``crossplane xr generate`` writes it (labels, annotations, spec and claimRef kept,
    claim labels added), named ``<claim>-<suffix>``, the suffix the same on every run."""
    claim = yaml.safe_load((ROOT / "examples/cluster/claim-gcp.yaml").read_text())
    composite = own.target_of(ROOT / "examples/cluster/claim-gcp.yaml").composite
    again = own.target_of(ROOT / "examples/cluster/claim-gcp.yaml").composite
    assert composite == again
    assert composite["metadata"]["name"].startswith("prod-eu-gcp-")
    assert len(composite["metadata"]["name"]) == len("prod-eu-gcp-") + 5
    assert composite["metadata"]["labels"] == {
        **claim["metadata"]["labels"],
        "crossplane.io/claim-name": "prod-eu-gcp",
        "crossplane.io/claim-namespace": "team-payments",
    }
    assert composite["spec"]["claimRef"] == {
        "apiVersion": "myplatform.io/v1alpha1",
        "kind": "Cluster",
        "name": "prod-eu-gcp",
        "namespace": "team-payments",
    }
    assert composite["spec"]["pools"] == claim["spec"]["pools"]


def test_a_claims_composition_reference_selects_the_composition(tmp_path: Path) -> None:
    """A claim naming a Composition renders with it (Crossplane copies the reference to the
    composite), not with the API's own."""
    claim = yaml.safe_load((ROOT / "examples/async-actor/claim.yaml").read_text())
    claim["spec"]["compositionRef"] = {"name": "asyncactor-sqs"}
    path = tmp_path / "claim.yaml"
    path.write_text(yaml.safe_dump(claim))
    case = own.case_for(own.target_of(path), tmp_path, ())
    assert case.composition == ROOT / "apis/async-actor/compositions/asyncactor-sqs.yaml"
    plain = own.case_for(own.target_of(ROOT / "examples/async-actor/claim.yaml"), tmp_path, ())
    assert plain.composition == ROOT / "apis/async-actor/composition.yaml"


# ---- bad input: one line naming the file and the reason, exit 2 -----------------------------


@dataclass(frozen=True)
class Bad:
    name: str
    text: str | None  # None: the file does not exist
    says: str
    args: tuple[str, ...] = ()


BAD = [
    Bad("missing", None, "no such file"),
    Bad("not-yaml", "kind: [unclosed\n", "not YAML"),
    Bad(
        "two-documents",
        "apiVersion: v1\nkind: A\n---\napiVersion: v1\nkind: B\n",
        "holds 2 documents; give one claim or composite",
    ),
    Bad("not-an-object", "- a\n- b\n", "not a Kubernetes object"),
    Bad(
        "unknown-kind",
        "apiVersion: example.org/v1\nkind: Database\nspec: {}\n",
        "example.org/v1 Database is not a composite or claim of any module (known kinds: ",
    ),
    Bad(
        "unserved-version",
        "apiVersion: myplatform.io/v9\nkind: Cluster\nspec: {}\n",
        "Cluster is served as myplatform.io/v1alpha1, not myplatform.io/v9",
    ),
    Bad(
        "no-spec",
        "apiVersion: myplatform.io/v1alpha1\nkind: Cluster\nmetadata: {name: a}\n",
        "Cluster a has no spec",
    ),
    Bad(
        "no-name",
        "apiVersion: myplatform.io/v1alpha1\nkind: XCluster\nspec: {}\n",
        "XCluster has no metadata.name",
    ),
    Bad(
        "observed-missing",
        "apiVersion: myplatform.io/v1alpha1\nkind: XCluster\nmetadata: {name: a}\nspec: {}\n",
        "observed.yaml: no such file",
        ("--observed", "{tmp}/observed.yaml"),
    ),
]


@pytest.mark.parametrize("bad", BAD, ids=[b.name for b in BAD])
def test_bad_input_is_one_line_and_exit_2(
    bad: Bad, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / f"{bad.name}.yaml"
    if bad.text is not None:
        path.write_text(bad.text)
    args = [a.format(tmp=tmp_path) for a in bad.args]
    assert own.main([str(path), *args]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    (line,) = captured.err.splitlines()
    assert line.startswith("render: ") and bad.says in line, line
    assert "Traceback" not in captured.err


def test_an_unknown_case_names_the_nearest(capsys: pytest.CaptureFixture[str]) -> None:
    assert render_tool.main(["--case", "cluster/gpc-ready"]) == 2
    assert "did you mean cluster/gcp-ready?" in capsys.readouterr().err


# ---- reading the output: held back, warnings, fatal; the summary ----------------------------


def test_held_back_reads_the_composed_condition_the_function_writes() -> None:
    """Every resource the golden's Composed condition names, with what it waits for, and no
    resource both composed and held back."""
    rendered = own.read_output((GOLDEN / "cluster" / "gcp.yaml").read_text(), "XCluster")
    held = dict(rendered.held_back)
    assert held["cluster"] == "network, network-subnet"
    assert held["release-cert-manager"] == "pool-general Ready"
    assert len(held) == 15
    assert not set(held) & set(rendered.composed)


@pytest.mark.parametrize(
    ("message", "expected"),
    [
        case(
            "commas inside the parentheses belong to what a resource waits for",
            "a (waits for b, c Ready), d (waits for e)",
            [("a", "b, c Ready"), ("d", "e")],
        ),
        case(
            "what it waits for may hold parentheses",
            "deployment (waits for ConfigMap asya-runtime (key asya_runtime.py) in namespace ml)",
            [("deployment", "ConfigMap asya-runtime (key asya_runtime.py) in namespace ml")],
        ),
        case(
            "YAML folds a long message: line breaks read as spaces",
            "pool-a (waits\n      for cluster)",
            [("pool-a", "cluster")],
        ),
        case("nothing held back", "", []),
    ],
    ids=["commas", "parentheses", "folded", "empty"],
)
def test_held_back_splits_the_message(message: str, expected: list[tuple[str, str]]) -> None:
    assert own.held_back(message) == expected


def test_summary_lines() -> None:
    golden = (GOLDEN / "cluster" / "gcp.yaml").read_text()
    results = (
        "\n---\napiVersion: render.crossplane.io/v1beta1\nkind: Result\n"
        "message: pool spot has no zones\nseverity: Warning\n"
        "---\napiVersion: render.crossplane.io/v1beta1\nkind: Result\n"
        "message: 'spec.pools.spot: bad'\nseverity: Fatal\n"
    )
    rendered = own.read_output(golden.rstrip("\n") + results, "XCluster")
    lines = own.summary(rendered)
    assert lines[0] == (
        f"summary: XCluster prod-eu-gcp-7xk2p: {len(rendered.composed)} "
        "composed, 15 held back, 1 warnings, 1 fatal"
    )
    assert "  held back: cluster (waits for network, network-subnet)" in lines
    assert lines[-2:] == ["  warning: pool spot has no zones", "  fatal: spec.pools.spot: bad"]


def test_observed_state_may_be_a_list_or_a_stream(tmp_path: Path) -> None:
    """``kubectl get -o yaml`` of several objects is a ``List``; a YAML stream works too. The
    composite, exported with them, is left out; each resource is controlled by the composite
    rendered (a claim's composite gets another name and uid than the live one)."""
    observed = _documents((ROOT / "tests/render-cases/cluster/observed-gcp-ready.yaml").read_text())
    target = own.target_of(ROOT / "examples/cluster/claim-gcp.yaml")
    live_xr = yaml.safe_load((ROOT / "examples/cluster/xr-gcp.yaml").read_text())
    stream = tmp_path / "stream.yaml"
    stream.write_text(yaml.safe_dump_all([live_xr, *observed]))
    listed = tmp_path / "list.yaml"
    listed.write_text(
        yaml.safe_dump({"apiVersion": "v1", "kind": "List", "items": [live_xr, *observed]})
    )
    from_stream = own.observed_resources(stream, target)
    assert from_stream == own.observed_resources(listed, target)
    assert len(from_stream) == len(observed)
    uid = render_tool.engine_uid(target.composite)
    assert all(
        ref["uid"] == uid and ref["name"] == target.composite["metadata"]["name"]
        for doc in from_stream
        for ref in doc["metadata"]["ownerReferences"]
        if ref.get("controller")
    )


# ---- end to end: the real CLI and engine ----------------------------------------------------


def _run_tool(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, str(ROOT / "tools" / "render_own.py"), *map(str, args)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=1200,
        check=False,
    )


@pytest.fixture(scope="module")
def cli() -> Path:
    return render_tool.ensure_cli()


def _set(document: dict[str, Any], field_path: str, value: Any) -> None:
    *parents, last = field_path.split(".")
    for part in parents:
        document = document.setdefault(part, {})
    document[last] = value


@dataclass(frozen=True)
class Edit:
    example: str
    field: str
    value: Any
    shows: str  # what a composed resource shows of the edit once converged
    why: str


EDITS = [
    Edit(
        "examples/cluster/claim-gcp.yaml",
        "spec.pools.extra",
        {"autoscaling": {"minNodeCount": 1, "maxNodeCount": 2}},
        "pool-extra",
        "a new node pool is composed once the cluster is Ready",
    ),
    Edit(
        "examples/async-actor/claim.yaml",
        "spec.image",
        "ghcr.io/example/edited:9.9.9",
        "ghcr.io/example/edited:9.9.9",
        "the actor's Deployment runs the new image once its queue is Ready",
    ),
    Edit(
        "examples/environment/claim-aws.yaml",
        "spec.backend.image",
        "ghcr.io/acme/edited-api:9.9.9",
        "ghcr.io/acme/edited-api:9.9.9",
        "the backend Deployment runs the new image once the database user exists",
    ),
    Edit(
        "examples/contact-center/claim-azure.yaml",
        "spec.taggingPolicy.costCenter",
        "cc-edited-7777",
        "cc-edited-7777",
        "every resource carries the cost-center tag",
    ),
    Edit(
        "examples/openstack/infrastructure/eu-de-1/hypervisor-pools/hv-pool-a.yaml",
        "spec.labels.tier",
        "edited-tier",
        "edited-tier",
        "the pool's nodes carry the pool's labels",
    ),
    Edit(
        "examples/cluster/namespaced/xr-aws.yaml",
        "spec.pools.extra",
        {"autoscaling": {"minNodeCount": 1, "maxNodeCount": 2}},
        "pool-extra",
        "the namespaced form: a new node group once the EKS cluster is Ready",
    ),
    Edit(
        "examples/environment/namespaced/xr-gcp.yaml",
        "spec.backend.image",
        "ghcr.io/acme/edited-api:9.9.9",
        "ghcr.io/acme/edited-api:9.9.9",
        "the namespaced form of the environment module",
    ),
]


def _check_converged(result: subprocess.CompletedProcess[str], shows: str, why: str) -> None:
    assert result.returncode == 0, result.stderr
    documents = _documents(result.stdout)
    composite = documents[0]
    composed = [d for d in documents[1:] if d.get("kind") != "Result"]
    uid = render_tool.engine_uid(composite)
    assert uid
    controllers = [
        ref
        for d in composed
        for ref in d["metadata"].get("ownerReferences") or []
        if ref.get("controller")
    ]
    assert controllers and all(ref["uid"] == uid for ref in controllers), (
        "composed resources are controlled by the composite on the command line"
    )
    names = {d["metadata"]["annotations"][own.COMPOSITION_RESOURCE_NAME] for d in composed}
    assert shows in names or shows in yaml.safe_dump_all(composed), why
    passes = [line for line in result.stderr.splitlines() if line.startswith("pass ")]
    assert len(passes) >= 2 and passes[-1].split(", ")[1] == "0 new", result.stderr
    (summary,) = [line for line in result.stderr.splitlines() if line.startswith("summary: ")]
    assert f": {len(composed)} composed, " in summary
    assert f"pass {len(passes)}: {len(composed)} composed, 0 new" in passes[-1]


@pytest.mark.e2e
@pytest.mark.parametrize("edit", EDITS, ids=[e.example for e in EDITS])
def test_an_edited_example_converges_and_shows_the_edit(
    edit: Edit, cli: Path, tmp_path: Path
) -> None:
    document = yaml.safe_load((ROOT / edit.example).read_text())
    _set(document, edit.field, edit.value)
    path = tmp_path / "mine.yaml"
    path.write_text(yaml.safe_dump(document, sort_keys=False))
    result = _run_tool(path, "--converge", "--graph", tmp_path / "graph")
    _check_converged(result, edit.shows, edit.why)
    _check_drawn(result, tmp_path / "graph")


def _check_drawn(result: subprocess.CompletedProcess[str], graphs: Path) -> None:
    """``--graph`` drew the printed pass: one .dot and .mmd per composite, an edge for every
    Usage the pass composed (tests/test_composed_graph.py checks the drawing itself)."""
    documents = _documents(result.stdout)
    name = documents[0]["metadata"]["name"]
    dot = (graphs / f"{name}.dot").read_text()
    assert (graphs / f"{name}.mmd").is_file()
    usages = [d for d in documents[1:] if d.get("kind") in ("Usage", "ClusterUsage")]
    assert dot.count('[label="uses"]') == len(usages), "every Usage is drawn, and nothing else"
    assert f"render: drew {graphs / name}.dot" in result.stderr


@dataclass(frozen=True)
class Recorded:
    xr: str
    observed: str
    golden: str


RECORDED = [
    Recorded(
        "examples/cluster/xr-gcp.yaml",
        "tests/render-cases/cluster/observed-gcp-ready.yaml",
        "cluster/gcp-ready.yaml",
    ),
    Recorded(
        "examples/environment/xr-aws.yaml",
        "tests/render-cases/environment/observed-aws-ready.yaml",
        "environment/aws-ready.yaml",
    ),
]


@pytest.mark.e2e
@pytest.mark.parametrize("recorded", RECORDED, ids=[r.golden for r in RECORDED])
@pytest.mark.parametrize("as_list", [False, True], ids=["stream", "list"])
def test_observed_gives_exactly_the_goldens_composed_resources(
    recorded: Recorded, as_list: bool, cli: Path, tmp_path: Path
) -> None:
    observed = ROOT / recorded.observed
    if as_list:
        observed = tmp_path / "observed.yaml"
        observed.write_text(
            yaml.safe_dump(
                {
                    "apiVersion": "v1",
                    "kind": "List",
                    "items": [*_documents((ROOT / recorded.observed).read_text())],
                }
            )
        )
    result = _run_tool(ROOT / recorded.xr, "--observed", observed)
    assert result.returncode == 0, result.stderr
    assert result.stdout == (GOLDEN / recorded.golden).read_text(), (
        "the platform folder is the case's settings: the render is the golden, byte for byte"
    )
    assert result.stderr.splitlines()[-1].startswith("summary: ")


@pytest.mark.e2e
def test_a_first_pass_summary_names_what_is_held_back(cli: Path) -> None:
    result = _run_tool(ROOT / "examples/cluster/xr-gcp.yaml")
    assert result.returncode == 0, result.stderr
    assert result.stdout == (GOLDEN / "cluster" / "gcp.yaml").read_text()
    lines = result.stderr.splitlines()
    summary = lines.index(
        "summary: XCluster prod-eu-gcp-7xk2p: 7 composed, 15 held back, 0 warnings, 0 fatal"
    )
    assert "  held back: pool-batch (waits for cluster, cluster-nodes)" in lines[summary:]


@pytest.mark.e2e
def test_make_render_xr_says_what_is_wrong_with_the_file(cli: Path, tmp_path: Path) -> None:
    result = subprocess.run(
        ["make", "--no-print-directory", "render", f"XR={tmp_path / 'nothing.yaml'}"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert result.returncode != 0
    assert f"render: {tmp_path / 'nothing.yaml'}: no such file" in result.stderr
    assert "Traceback" not in result.stderr


def test_a_composite_that_composes_nothing_says_why() -> None:
    """``Composed`` False for another reason than waiting (the AWS provider not Healthy): the
    summary says why instead of listing what is held back."""
    golden = (GOLDEN / "contact-center" / "aws-provider-unhealthy.yaml").read_text()
    rendered = own.read_output(golden, "ContactCenterEndpoint")
    assert rendered.held_back == []
    lines = own.summary(rendered)
    assert lines[1].startswith(
        "  not composed: WaitingForProvider: nothing is created until "
        "then: Provider crossplane-contrib-provider-family-aws"
    )
