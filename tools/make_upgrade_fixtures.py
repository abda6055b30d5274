"""Write ``tests/upgrade/<version>/``: what a cluster running a release holds once each of that
release's render cases converged, composed by THAT release's own function.

    python tools/make_upgrade_fixtures.py --release v0.1.0=de7f94b
    python tools/make_upgrade_fixtures.py --release v0.1.0=de7f94b --check

The commit is checked out into a temporary git worktree (``git worktree add --detach``) and
this script runs again inside it (``converge``), with ``PYTHONPATH`` at that tree, so the
release's function, its render cases (``tests/render-cases/<module>.yaml``, each in both
forms), its examples and its provider simulation (``tests/support/providersim.py``) are the
release's own; only the Python packages are this checkout's ``.venv`` (the same ``uv.lock``
as v0.1.0). It serves the release's function over gRPC (its ``tests/support/harness.py``) and
plays Crossplane for each case, pass after pass:

- the composite carries what earlier passes wrote into its status (the function's memory of
  what exists) and the uid the render engine would give it;
- each pass is called until its requirements are answered, from the case's own
  EnvironmentConfigs and required files (:func:`fetch`, Crossplane's selector rules);
- every desired resource is observed Ready as its provider reports it (providersim), with
  the labels and annotations Crossplane sets on a composed resource;
- it stops at the fixpoint: the release desires exactly what the cluster holds and writes the
  same status. A case that reaches none within :data:`MAX_PASSES` fails the tool.

Each fixture holds the step input, the composite, the required resources it was given, the
observed composed resources and, per composition-resource-name, what the release desired:
apiVersion, kind, external name (and whether the release set it) and the values of the fields
``platform/fnplatform/upgrade/immutable-fields.yaml`` lists for the kind. Render cases whose
converged composite is the same (a first pass and its ``-ready`` twin) share one file, which
lists them all under ``cases``. ``tests/test_upgrade.py`` runs today's function over every fixture.
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import filecmp
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parent.parent
UPGRADE_DIR = ROOT / "tests" / "upgrade"
FUNCTION_STEP = "function-platform"
EXTERNAL_NAME = "crossplane.io/external-name"
RESOURCE_NAME = "crossplane.io/composition-resource-name"
COMPOSITE_LABEL = "crossplane.io/composite"
CLAIM_LABELS = ("crossplane.io/claim-name", "crossplane.io/claim-namespace")
#: Passes after which a case that still changes is reported as not converging.
MAX_PASSES = 16
#: Calls of one pass while its requirements change (Crossplane v2.4 gives up after five more:
#: internal/xfn/required_resources.go, MaxRequirementsIterations).
MAX_REQUIREMENT_ROUNDS = 6
#: When every condition last changed (fixed: same release, same files).
STAMP = "2024-01-01T00:00:00Z"

Body = dict[str, Any]


# -- what both sides share: Crossplane's answer to a requirement ------------------------------


def matches(selector: Mapping[str, Any], resource: Mapping[str, Any]) -> bool:
    """Whether Crossplane's ``ResourceSelector`` (as JSON: ``apiVersion``, ``kind``,
    ``matchName`` or ``matchLabels.labels``, optional ``namespace``) selects ``resource``."""
    metadata = resource.get("metadata") or {}
    if (resource.get("apiVersion"), resource.get("kind")) != (
        selector.get("apiVersion"),
        selector.get("kind"),
    ):
        return False
    if selector.get("namespace") and metadata.get("namespace") != selector["namespace"]:
        return False
    if "matchName" in selector:
        return bool(metadata.get("name") == selector["matchName"])
    labels = metadata.get("labels") or {}
    wanted = (selector.get("matchLabels") or {}).get("labels") or {}
    return all(labels.get(key) == value for key, value in wanted.items())


def fetch(
    requirements: Mapping[str, Mapping[str, Any]], pool: Iterable[Mapping[str, Any]]
) -> dict[str, list[Body]]:
    """What Crossplane fetches for ``requirements`` (key to selector) from the resources the
    cluster holds (``pool``): every match, sorted by namespace and name as the API server
    lists them; a key with no match is answered with no items."""
    resources = list(pool)
    answer: dict[str, list[Body]] = {}
    for key, selector in sorted(requirements.items()):
        found = [copy.deepcopy(dict(r)) for r in resources if matches(selector, r)]
        found.sort(
            key=lambda r: (
                (r.get("metadata") or {}).get("namespace") or "",
                (r.get("metadata") or {}).get("name") or "",
            )
        )
        answer[key] = found
    return answer


def _load_immutable() -> Any:
    """``fnplatform/upgrade/immutable.py`` of THIS checkout, loaded by its file path: inside a
    release's tree ``fnplatform`` is the release's own, which may not have it. The one table of
    immutable fields and the one reading of it (the upgrade preview uses the same)."""
    path = ROOT / "platform" / "fnplatform" / "upgrade" / "immutable.py"
    spec = importlib.util.spec_from_file_location("fnplatform_upgrade_immutable", path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_immutable = _load_immutable()
group_of = _immutable.group_of
get_path = _immutable.get_path
immutable_fields = _immutable.immutable_fields


def release_desired(
    observed: Mapping[str, Body], desired: Mapping[str, Body], table: Mapping[str, Any]
) -> dict[str, Body]:
    """Per composition-resource-name what the release desired and the test compares: the
    kind, its external name (the release's own, else the one its provider set) and the value
    of each field the cloud cannot change in place."""
    out: dict[str, Body] = {}
    for name, body in sorted(desired.items()):
        annotations = (body.get("metadata") or {}).get("annotations") or {}
        seen = (observed[name].get("metadata") or {}).get("annotations") or {}
        entry: Body = {
            "apiVersion": body["apiVersion"],
            "kind": body["kind"],
            "externalName": annotations.get(EXTERNAL_NAME, seen.get(EXTERNAL_NAME)),
            "externalNameSetByRelease": EXTERNAL_NAME in annotations,
        }
        fields = {}
        for rule in immutable_fields(table, body["apiVersion"], body["kind"]):
            value = get_path(body, rule["path"])
            if value is not None:
                fields[rule["path"]] = value
        if fields:
            entry["fields"] = fields
        out[name] = entry
    return out


# -- run inside the release's tree -----------------------------------------------------------


def _load_tree_tool(tree: Path, name: str) -> Any:
    """``<tree>/tools/<name>.py`` as the module ``name`` (tools/ is no package)."""
    spec = importlib.util.spec_from_file_location(name, tree / "tools" / f"{name}.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def _documents(paths: Iterable[Path]) -> list[Body]:
    return [doc for path in paths for doc in yaml.safe_load_all(path.read_text()) if doc]


def _step_input(composition: Path) -> Body:
    """The function's step input of the Composition the case renders with."""
    document = yaml.safe_load(composition.read_text())
    for step in document["spec"]["pipeline"]:
        if step["functionRef"]["name"] == FUNCTION_STEP:
            return dict(step["input"])
    msg = f"{composition}: no pipeline step runs {FUNCTION_STEP}"
    raise ValueError(msg)


def _composed_metadata(body: Body, name: str, composite: Body) -> Body:
    """``body`` with what Crossplane sets on every composed resource: its
    composition-resource-name annotation and the composite's (and claim's) labels."""
    out = copy.deepcopy(body)
    metadata = out.setdefault("metadata", {})
    metadata.setdefault("annotations", {})[RESOURCE_NAME] = name
    labels = metadata.setdefault("labels", {})
    labels[COMPOSITE_LABEL] = composite["metadata"]["name"]
    for label in CLAIM_LABELS:
        value = (composite["metadata"].get("labels") or {}).get(label)
        if value:
            labels[label] = value
    return out


#: Groups whose kinds a provider reconciles (an external name, ``status.atProvider``); a
#: Usage or ClusterUsage is Crossplane's own and reports its Ready condition only.
PROVIDER_GROUPS = ("upbound.io", "kubernetes.crossplane.io", "helm.crossplane.io")


def _observe(providersim: Any, body: Body, name: str) -> Body:
    """``body`` as the cluster holds it once Ready: as its provider reports it
    (tests/support/providersim.py of the release), or, for Crossplane's own kinds, Ready."""
    if group_of(str(body["apiVersion"])).endswith(PROVIDER_GROUPS):
        return dict(providersim.report(body, name=name, stamp=STAMP, external=True))
    return dict(providersim.observed(body, None, name=name, stamp=STAMP))


class RefusedError(RuntimeError):
    """The release answers a case with a fatal result: it never composed that composite."""


def _converge_case(case: Any, client: Any, modules: Mapping[str, Any]) -> Body:
    """Play Crossplane over ``case`` until the release desires what the cluster holds."""
    tool, harness, providersim = modules["tool"], modules["harness"], modules["providersim"]
    composite = case.composite()
    composite["metadata"]["uid"] = tool.engine_uid(composite)
    step = _step_input(case.composition)
    pool = _documents(case.environment + case.required)
    if case.namespaced:
        from tests.support.namespaced import CLAIM_NAME, namespaced_composite

        pool = [
            namespaced_composite(doc)
            if CLAIM_NAME in ((doc.get("metadata") or {}).get("labels") or {})
            else doc
            for doc in pool
        ]
    observed: dict[str, Body] = {}
    for _ in range(MAX_PASSES):
        given: dict[str, list[Body]] = {}
        connection = published(providersim, observed)
        for _ in range(MAX_REQUIREMENT_ROUNDS):
            rendered = client.run(
                harness.request(
                    composite,
                    step,
                    observed=observed,
                    required=given,
                    observed_connection={
                        n: {k: v.encode() for k, v in d.items()} for n, d in connection.items()
                    },
                )
            )
            wanted = fetch(rendered.requirements, pool)
            if wanted == given:
                break
            given = wanted
        if rendered.fatal:
            msg = f"{case.id}: the release refuses it: {'; '.join(rendered.fatal)}"
            raise RefusedError(msg)
        desired = rendered.resources
        now = {
            name: _observe(providersim, _composed_metadata(body, name, composite), name)
            for name, body in desired.items()
        }
        status = _status_after(rendered)
        if now == observed and status == composite.get("status"):
            return {
                "input": step,
                "composite": composite,
                "required": _given_once(given),
                "observed": dict(sorted(now.items())),
                "connection": connection,
                "desired": desired,
            }
        observed = now
        composite = {**composite, "status": status}
    msg = f"{case.id}: no fixpoint within {MAX_PASSES} passes"
    raise RuntimeError(msg)


def published(providersim: Any, observed: Mapping[str, Body]) -> dict[str, dict[str, str]]:
    """The connection details Crossplane observes: what each provider publishes for every
    observed resource that writes a connection Secret (providersim.connection_details of
    the release), as text."""
    return {
        name: {
            key: value.decode()
            for key, value in sorted(providersim.connection_details(body).items())
        }
        for name, body in sorted(observed.items())
        if (body.get("spec") or {}).get("writeConnectionSecretToRef")
    }


def _status_after(rendered: Any) -> Body:
    """The composite's status once Crossplane applied the pass: what the function wrote, its
    conditions, and Crossplane's Synced (Ready from the composed resources' readiness)."""
    status = copy.deepcopy(rendered.status)
    from crossplane.function.proto.v1 import run_function_pb2 as fnv1

    words = {fnv1.STATUS_CONDITION_TRUE: "True", fnv1.STATUS_CONDITION_FALSE: "False"}
    conditions = [
        {
            "type": c.type,
            "status": words.get(c.status, "Unknown"),
            "reason": c.reason,
            **({"message": c.message} if c.message else {}),
            "lastTransitionTime": STAMP,
        }
        for c in rendered.response.conditions
    ]
    every_ready = all(rendered.ready(name) for name in rendered.resources)
    conditions.append(
        {
            "type": "Ready",
            "status": "True" if every_ready else "False",
            "reason": "Available" if every_ready else "Creating",
            "lastTransitionTime": STAMP,
        }
    )
    conditions.append(
        {
            "type": "Synced",
            "status": "True",
            "reason": "ReconcileSuccess",
            "lastTransitionTime": STAMP,
        }
    )
    status["conditions"] = sorted(conditions, key=lambda c: c["type"])
    return status


def canonical(value: Any) -> Any:
    """``value`` with every map's keys sorted: the function's Structs come back in an order
    that varies between processes, and a fixture must be the same bytes every time."""
    if isinstance(value, Mapping):
        return {key: canonical(value[key]) for key in sorted(value)}
    if isinstance(value, list):
        return [canonical(item) for item in value]
    return value


def _given_once(given: Mapping[str, list[Body]]) -> list[Body]:
    """The required resources the converged pass was given, each once, in a stable order."""
    seen: dict[str, Body] = {}
    for items in given.values():
        for item in items:
            seen.setdefault(json.dumps(item, sort_keys=True), item)
    return [seen[key] for key in sorted(seen)]


def later_cases(tool: Any, tree: Path, known: set[str]) -> Iterator[Any]:
    """Render cases of this checkout the release has none of (by id), in both forms, for an
    API the release serves: composites a user of the release could hold that its own cases
    do not show (a pool layout, a setting added to the cases later). Each file is the
    release's own where it has one at that path (its EnvironmentConfigs), else this
    checkout's. The release must compose them without a fatal result to get a fixture."""

    def where(relative: str) -> Path:
        return tree / relative if (tree / relative).exists() else ROOT / relative

    for cases_file in sorted((ROOT / "tests" / "render-cases").glob("*.yaml")):
        for entry in yaml.safe_load(cases_file.read_text()) or []:
            case = tool.Case(
                module=cases_file.stem,
                name=entry["name"],
                xr=where(entry["xr"]),
                environment=tuple(where(f) for f in entry.get("environment") or ()),
                required=tuple(where(f) for f in entry.get("required") or ()),
                api=entry.get("api"),
                reference=entry.get("reference"),
            )
            for form in (case, case.twin()):
                if form.id not in known and (form.api_folder / "composition.yaml").exists():
                    yield form


def converge(tree: Path, version: str, commit: str, out: Path) -> int:
    """Write every fixture of the release checked out at ``tree`` into ``out``."""
    sys.path[:0] = [str(tree / "platform"), str(tree)]
    tool = _load_tree_tool(tree, "render_examples")
    from tests.support import harness, providersim

    table = _immutable.load_table()
    modules = {"tool": tool, "harness": harness, "providersim": providersim}
    server, address = harness.start_server()
    client = harness.FunctionClient(address)
    written: dict[str, tuple[Path, Body]] = {}  # content digest -> file, fixture
    own = tool.load_cases()
    later = list(later_cases(tool, tree, {case.id for case in own}))
    try:
        for case in [*own, *later]:
            try:
                state = _converge_case(case, client, modules)
            except RefusedError as refused:
                if case in own:  # a release composes every one of its own cases
                    raise
                print(f"{case.id} (later case): skipped, {refused}", file=sys.stderr)
                continue
            digest = json.dumps(
                {k: state[k] for k in ("input", "composite", "required")}, sort_keys=True
            )
            if digest in written:
                written[digest][1]["cases"].append(case.id)
                continue
            folder = out / case.module / ("namespaced" if case.namespaced else "")
            fixture: Body = {
                "release": version,
                "commit": commit,
                "cases": [case.id],
                "laterCase": case not in own,
                "form": case.form,
                "input": state["input"],
                "composite": state["composite"],
                "required": state["required"],
                "observed": state["observed"],
                "connection": state["connection"],
                "desired": release_desired(state["observed"], state["desired"], table),
            }
            written[digest] = (folder / f"{case.name}.yaml", fixture)
            composed: Body = next(
                (
                    c
                    for c in state["composite"]["status"].get("conditions", [])
                    if c["type"] == "Composed"
                ),
                {},
            )
            print(
                f"{case.id}: {len(state['observed'])} composed resources, Composed="
                f"{composed.get('status')} {composed.get('message', '')}",
                file=sys.stderr,
            )
    finally:
        client.close()
        server.stop()
    for path, fixture in written.values():
        path.parent.mkdir(parents=True, exist_ok=True)
        header = (
            f"# What a cluster running function-platform {version} holds once the render "
            f"case(s) below converged.\n# Generated by tools/make_upgrade_fixtures.py "
            f"--release v{version}={commit[:7]} (provider values are fake, "
            "deterministic); do not edit.\n"
        )
        ordered = {key: canonical(value) for key, value in fixture.items()}
        path.write_text(header + yaml.safe_dump(ordered, sort_keys=False, width=100))
    return 0


# -- run in this checkout --------------------------------------------------------------------


def _git(*args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=ROOT, check=True, capture_output=True, text=True
    ).stdout.strip()


@contextlib.contextmanager
def release_tree(commit: str) -> Iterator[Path]:
    """The release's commit checked out in a temporary worktree, removed afterwards."""
    with tempfile.TemporaryDirectory(prefix="release-") as tmp:
        tree = Path(tmp) / "tree"
        _git("worktree", "add", "--detach", str(tree), commit)
        try:
            yield tree
        finally:
            _git("worktree", "remove", "--force", str(tree))


def _release(value: str) -> tuple[str, str]:
    version, sep, commit = value.partition("=")
    if not sep or not version or not commit:
        msg = f"{value!r}: expected v<version>=<commit> (v0.1.0=de7f94b)"
        raise argparse.ArgumentTypeError(msg)
    return version.removeprefix("v"), commit


def _same_tree(left: Path, right: Path) -> list[str]:
    """Files that differ between two fixture folders (relative paths)."""
    files = {p.relative_to(left) for p in left.rglob("*.yaml")} | {
        p.relative_to(right) for p in right.rglob("*.yaml")
    }
    return sorted(
        str(f)
        for f in files
        if not (
            (left / f).exists()
            and (right / f).exists()
            and filecmp.cmp(left / f, right / f, shallow=False)
        )
    )


def main(argv: list[str]) -> int:
    if argv[:1] == ["converge"]:
        parser = argparse.ArgumentParser(prog="make_upgrade_fixtures.py converge")
        parser.add_argument("--tree", type=Path, required=True)
        parser.add_argument("--version", required=True)
        parser.add_argument("--commit", required=True)
        parser.add_argument("--out", type=Path, required=True)
        args = parser.parse_args(argv[1:])
        return converge(args.tree, args.version, args.commit, args.out)
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--release",
        type=_release,
        required=True,
        metavar="vVERSION=COMMIT",
        help="the release and the commit it was cut from (v0.1.0=de7f94b)",
    )
    parser.add_argument(
        "--check",
        action="store_true",
        help="regenerate into a temporary folder and compare, writing nothing",
    )
    args = parser.parse_args(argv)
    version, commit = args.release
    full = _git("rev-parse", "--verify", f"{commit}^{{commit}}")
    said = _git("show", f"{full}:function/__version__.py")
    if f'"{version}"' not in said:
        print(f"{commit}: function/__version__.py does not say {version}", file=sys.stderr)
        return 2
    target = UPGRADE_DIR / version
    with release_tree(full) as tree, tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / version
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tree / "platform"), str(tree)])}
        subprocess.run(
            [
                sys.executable,
                str(Path(__file__).resolve()),
                "converge",
                "--tree",
                str(tree),
                "--version",
                version,
                "--commit",
                full,
                "--out",
                str(out),
            ],
            cwd=tree,
            env=env,
            check=True,
        )
        if args.check:
            stale = _same_tree(out, target)
            for name in stale:
                print(
                    f"tests/upgrade/{version}/{name} differs from what {commit} composes",
                    file=sys.stderr,
                )
            return 1 if stale else 0
        if target.exists():
            for old in target.rglob("*.yaml"):
                old.unlink()
        for new in sorted(out.rglob("*.yaml")):
            path = target / new.relative_to(out)
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_bytes(new.read_bytes())
        print(
            f"wrote {len(list(out.rglob('*.yaml')))} fixtures into {target.relative_to(ROOT)}",
            file=sys.stderr,
        )
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
