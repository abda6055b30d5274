"""Render your own claim or composite, of any module, with the module's shipped settings.

    python tools/render_own.py my-claim.yaml                  # `make render XR=my-claim.yaml`
    python tools/render_own.py my-claim.yaml --converge       # ... CONVERGE=1
    python tools/render_own.py xr.yaml --observed observed.yaml   # ... OBSERVED=observed.yaml

The file holds one claim (v1, namespaced), one cluster-scoped composite (v1 XR) or one
namespaced composite (Crossplane v2 XR) of any module. Its module, API and form come from the
XRDs under ``apis/`` (group and kind, or claim kind); a claim becomes the composite Crossplane
creates for it (``tests/support/composition_selection.composite_of_claim``: the XRD's
composite kind, the claim's labels, annotations and spec). It is rendered by the real
Crossplane CLI and engine (``crossplane composition render --crossplane-binary``), against
this function served locally, with the module's shipped platform settings as required
resources (:data:`PLATFORM_SETTINGS`: folders that hold only what a cluster holds, never a
claim or a composite, which the render engine would reconcile in place of yours) and the
Composition the composite names (``compositionRef``/``compositionSelector``, chosen by
Crossplane's rules), else its API's own.

``--converge`` plays the providers (``platform/providersim/simulation.py``, as
``tools/make_observed.py`` does): every composed resource observed Ready with the connection
Secret it writes, rendered again, until a pass composes nothing new; the converged pass is
printed, one line per pass on stderr.
``--observed`` renders against a live composite's exported composed resources instead.
Every run ends with a summary on stderr: composed, held back (on what), warnings, fatal.
The rendered documents go to stdout, as ``make render CASE=...`` prints them.
"""

from __future__ import annotations

import argparse
import copy
import dataclasses
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

TOOLS = Path(__file__).resolve().parent
sys.path[:0] = [p for p in (str(TOOLS), str(TOOLS.parent)) if p not in sys.path]

import composed_graph  # noqa: E402
import make_observed  # noqa: E402
import providersim  # noqa: E402
import render_examples as tool  # noqa: E402
from fnplatform.holds import WAITING, parse_waiting_summary  # noqa: E402

from tests.support import composition_selection  # noqa: E402

ROOT = tool.ROOT
EXAMPLES = tool.EXAMPLES
#: Each module's shipped platform settings: what a cluster holds for it (EnvironmentConfigs,
#: ConfigMaps, provider objects), never a claim or a composite. The openstack module's are its
#: GitOps tree's platform-config (examples/openstack mirrors the design's c5c3-gitops layout).
PLATFORM_SETTINGS: dict[str, Path] = {
    "async-actor": EXAMPLES / "async-actor" / "platform",
    "cluster": EXAMPLES / "cluster" / "platform",
    "contact-center": EXAMPLES / "contact-center" / "platform",
    "environment": EXAMPLES / "environment" / "platform",
    "openstack": EXAMPLES / "openstack" / "apps" / "platform-config",
}
MAX_PASSES = 12
COMPOSITION_RESOURCE_NAME = "crossplane.io/composition-resource-name"
DEFAULT_NAMESPACE = "default"


class BadInputError(Exception):
    """Input the tool cannot render; its message names the file and the reason."""


@dataclass(frozen=True)
class Api:
    """One API of a module, as its cluster-scoped XRD under ``apis/`` defines it."""

    module: str
    plural: str | None  # the API folder of a multi-API module (apis/openstack/<plural>/)
    group: str
    kind: str
    claim_kind: str | None
    versions: frozenset[str]
    xrd: dict[str, Any] = field(hash=False, compare=False)


def apis() -> list[Api]:
    """Every API of every module: ``apis/<module>/definition.yaml`` and
    ``apis/<module>/<plural>/definition.yaml`` (the namespaced XRDs define the same kinds)."""
    found = []
    for path in tool.definitions(namespaced=False):
        parts = path.relative_to(ROOT / "apis").parts
        xrd = yaml.safe_load(path.read_text())
        spec = xrd["spec"]
        found.append(
            Api(
                module=parts[0],
                plural=parts[1] if len(parts) == 3 else None,
                group=spec["group"],
                kind=spec["names"]["kind"],
                claim_kind=(spec.get("claimNames") or {}).get("kind"),
                versions=frozenset(v["name"] for v in spec["versions"] if v.get("served")),
                xrd=xrd,
            )
        )
    return found


@dataclass(frozen=True)
class Target:
    """What to render: the composite (a claim already turned into its composite), its API and
    form, and what the user gave (``claim`` or ``composite``)."""

    api: Api
    composite: dict[str, Any]
    namespaced: bool
    given: str

    @property
    def form(self) -> str:
        return tool.NAMESPACED if self.namespaced else tool.CLUSTER_SCOPED


def _load_one(path: Path) -> dict[str, Any]:
    """The one YAML document of ``path``, a mapping with apiVersion and kind."""
    if not path.is_file():
        raise BadInputError(f"{path}: no such file")
    try:
        documents = [d for d in yaml.safe_load_all(path.read_text()) if d is not None]
    except (yaml.YAMLError, UnicodeDecodeError) as error:
        reason = str(error).splitlines()[0]
        raise BadInputError(f"{path}: not YAML ({reason})") from None
    if len(documents) != 1:
        raise BadInputError(
            f"{path}: holds {len(documents)} documents; give one claim or composite"
        )
    (document,) = documents
    if not isinstance(document, dict) or not document.get("apiVersion") or not document.get("kind"):
        raise BadInputError(f"{path}: not a Kubernetes object (no apiVersion and kind)")
    return document


def target_of(path: Path) -> Target:
    """The composite to render for the claim or composite in ``path``."""
    document = _load_one(path)
    group, _, version = str(document["apiVersion"]).rpartition("/")
    kind = str(document["kind"])
    known = apis()
    for api in known:
        if api.group != group or kind not in (api.kind, api.claim_kind):
            continue
        if version not in api.versions:
            served = ", ".join(sorted(api.versions))
            raise BadInputError(
                f"{path}: {kind} is served as {group}/{served}, not {document['apiVersion']}"
            )
        metadata = document.get("metadata")
        if not isinstance(metadata, dict) or not metadata.get("name"):
            raise BadInputError(f"{path}: {kind} has no metadata.name")
        if not isinstance(document.get("spec"), dict):
            raise BadInputError(f"{path}: {kind} {metadata['name']} has no spec")
        if kind == api.claim_kind:
            composite = composition_selection.composite_of_claim(document, api.xrd)
            return Target(api, composite, namespaced=False, given="claim")
        return Target(api, *_composite_as_given(document), given="composite")
    kinds = sorted({a.kind for a in known} | {a.claim_kind for a in known if a.claim_kind})
    raise BadInputError(
        f"{path}: {document['apiVersion']} {kind} is not a composite or claim "
        f"of any module (known kinds: {', '.join(kinds)})"
    )


def _composite_as_given(document: dict[str, Any]) -> tuple[dict[str, Any], bool]:
    """A composite and whether it is the namespaced (v2) form: it has a namespace or keeps
    Crossplane's fields under ``spec.crossplane``; one without a namespace gets ``default``,
    as ``kubectl apply`` would put it."""
    composite = copy.deepcopy(document)
    metadata = composite["metadata"]
    namespaced = bool(metadata.get("namespace")) or "crossplane" in composite["spec"]
    if namespaced:
        metadata.setdefault("namespace", DEFAULT_NAMESPACE)
    return composite, namespaced


def observed_resources(path: Path, target: Target) -> list[dict[str, Any]]:
    """The composed resources of a live composite as ``kubectl get -o yaml`` exports them (a
    ``List`` or a YAML stream), each controlled by the composite being rendered (the engine
    refuses an observed resource another uid controls); the composite itself, if exported
    with them, left out."""
    if not path.is_file():
        raise BadInputError(f"{path}: no such file")
    try:
        documents = [d for d in yaml.safe_load_all(path.read_text()) if d is not None]
    except (yaml.YAMLError, UnicodeDecodeError) as error:
        raise BadInputError(f"{path}: not YAML ({str(error).splitlines()[0]})") from None
    items: list[Any] = []
    for document in documents:
        if isinstance(document, dict) and str(document.get("kind", "")).endswith("List"):
            items.extend(document.get("items") or [])
        else:
            items.append(document)
    resources = []
    for item in items:
        if not isinstance(item, dict) or not item.get("apiVersion") or not item.get("kind"):
            raise BadInputError(f"{path}: holds something that is not a Kubernetes object")
        annotations = (item.get("metadata") or {}).get("annotations") or {}
        is_the_composite = item["kind"] == target.composite["kind"]
        if is_the_composite and COMPOSITION_RESOURCE_NAME not in annotations:
            continue
        resources.append(tool.controlled_by(item, target.composite))
    return resources


@dataclass(frozen=True)
class Rendered:
    """One render's output, read back: the composite, the composed resources by composition
    resource name, and the function's results by severity."""

    composite: dict[str, Any]
    composed: dict[str, dict[str, Any]]
    warnings: tuple[str, ...]
    fatal: tuple[str, ...]

    @property
    def held_back(self) -> list[tuple[str, str]]:
        condition = composed_condition(self.composite)
        if condition.get("reason") != WAITING:
            return []
        return held_back(str(condition.get("message") or ""))

    @property
    def not_composed(self) -> str | None:
        """Why the function composed nothing, when it says so (``Composed`` False for another
        reason than waiting: a provider not Healthy, a setting missing)."""
        condition = composed_condition(self.composite)
        if condition.get("status") != "False" or condition.get("reason") == WAITING:
            return None
        return f"{condition.get('reason')}: {' '.join(str(condition.get('message')).split())}"


def read_output(stdout: str, composite_kind: str) -> Rendered:
    documents = [d for d in yaml.safe_load_all(stdout) if isinstance(d, dict)]
    composite = next((d for d in documents if d.get("kind") == composite_kind), {})
    results = [d for d in documents if d.get("kind") == "Result"]
    return Rendered(
        composite=composite,
        composed=make_observed.composed_by_name(stdout, composite_kind),
        warnings=tuple(str(r.get("message")) for r in results if r.get("severity") == "Warning"),
        fatal=tuple(str(r.get("message")) for r in results if r.get("severity") == "Fatal"),
    )


def composed_condition(composite: dict[str, Any]) -> dict[str, Any]:
    """The composite's ``Composed`` condition (empty when it has none)."""
    conditions = (composite.get("status") or {}).get("conditions") or []
    return next((c for c in conditions if c.get("type") == "Composed"), {})


def held_back(message: str) -> list[tuple[str, str]]:
    """``[(resource, what it waits for)]`` of the ``Composed`` message the function writes
    while resources wait, read back by the function's own parser
    (:func:`fnplatform.holds.parse_waiting_summary`, the inverse of the message's writer)."""
    held = parse_waiting_summary(" ".join(message.split()))
    return [(name, ", ".join(str(wait) for wait in hold.waits_for)) for name, hold in held.items()]


@dataclass
class Run:
    """One ``render_own`` run: the function served, a work folder, the case to render."""

    cli: Path
    port: int
    workdir: Path
    case: tool.Case

    def render(
        self, observed: Path | None, connection_secrets: Path | None = None
    ) -> tuple[str, Rendered]:
        case = dataclasses.replace(self.case, observed=observed)
        if connection_secrets is not None:
            case = dataclasses.replace(case, required=(*case.required, connection_secrets))
        result = tool.render(self.cli, case, self.port, self.workdir)
        if result.returncode != 0:
            raise RenderFailedError(result.stderr.strip())
        return result.stdout, read_output(result.stdout, self.case.composite()["kind"])


@dataclass(frozen=True)
class Pass:
    """One pass of :func:`converge`: its number, the CLI's output and what it says, the
    composition resource names new in it, and the observed file it was rendered against."""

    number: int
    stdout: str
    rendered: Rendered
    new: set[str]
    observed: Path | None


class RenderFailedError(Exception):
    """``crossplane composition render`` exited non-zero; the message is its stderr."""


def converge(run: Run, observed: Path | None) -> Iterator[Pass]:
    """Pass after pass (:class:`Pass`): every composed resource
    observed Ready as its provider reports it (``make_observed.mark_ready``), with the
    connection Secret it writes (``providersim.connection_secret``, given to the engine as a
    required resource: it reads connection details from the Secret), until a pass composes
    nothing new."""
    seen: set[str] = set()
    if observed is not None:
        seen = {
            ((d.get("metadata") or {}).get("annotations") or {}).get(COMPOSITION_RESOURCE_NAME, "")
            for d in yaml.safe_load_all(observed.read_text())
            if d
        }
    secrets: Path | None = None
    for number in range(1, MAX_PASSES + 1):
        stdout, rendered = run.render(observed, secrets)
        new = set(rendered.composed) - seen
        yield Pass(number, stdout, rendered, new, observed)
        if not new:
            return
        seen |= new
        bodies = [body for _, body in sorted(rendered.composed.items())]
        observed = run.workdir / f"observed-pass-{number}.yaml"
        observed.write_text(
            yaml.safe_dump_all([make_observed.mark_ready(b) for b in bodies], sort_keys=False)
        )
        written = [s for b in bodies if (s := providersim.connection_secret(b)) is not None]
        secrets = None
        if written:
            secrets = run.workdir / f"connection-secrets-pass-{number}.yaml"
            secrets.write_text(yaml.safe_dump_all(written, sort_keys=False))


def summary(rendered: Rendered) -> list[str]:
    """The end-of-run lines: per composite, composed, held back (on what), warnings, fatal."""
    composite = rendered.composite
    metadata = composite.get("metadata") or {}
    where = f"{metadata.get('namespace')}/" if metadata.get("namespace") else ""
    held = rendered.held_back
    lines = [
        f"summary: {composite.get('kind')} {where}{metadata.get('name')}: "
        f"{len(rendered.composed)} composed, {len(held)} held back, "
        f"{len(rendered.warnings)} warnings, {len(rendered.fatal)} fatal"
    ]
    if rendered.not_composed:
        lines.append(f"  not composed: {rendered.not_composed}")
    lines += [f"  held back: {name} (waits for {on})" for name, on in held]
    lines += [f"  warning: {message}" for message in rendered.warnings]
    lines += [f"  fatal: {message}" for message in rendered.fatal]
    return lines


def case_for(target: Target, workdir: Path, required: tuple[Path, ...]) -> tool.Case:
    """The render case of ``target``, its composite written to ``workdir``: its API's
    Composition (or the one its composition fields select), the module's platform settings
    (the folder's files in name order, as the CLI reads a folder), ``required`` after them."""
    api = target.api
    xr_file = workdir / "xr.yaml"
    xr_file.write_text(yaml.safe_dump(target.composite, sort_keys=False))
    settings = tuple(
        sorted(p for p in PLATFORM_SETTINGS[api.module].iterdir() if p.suffix in (".yaml", ".yml"))
    )
    fields = target.composite["spec"]
    if target.namespaced:
        fields = fields.get("crossplane") or {}
    reference = {k: fields[k] for k in composition_selection.SELECTION_FIELDS if k in fields}
    return tool.Case(
        module=api.module,
        name=xr_file.stem,
        xr=xr_file,
        environment=settings,
        required=required,
        api=api.plural,
        form=target.form,
        reference=reference or None,
        as_written=True,
    )


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n")[0],
        epilog="Make: make render XR=<file> [CONVERGE=1] [OBSERVED=<file>] [REQUIRED=<file>] "
        "[GRAPH=<dir>]",
    )
    parser.add_argument(
        "xr",
        type=Path,
        help="a claim, a cluster-scoped XR or a namespaced XR of any module (one YAML document)",
    )
    parser.add_argument(
        "--converge",
        action="store_true",
        help="play the providers pass after pass until nothing new appears; "
        "print the converged pass (make: CONVERGE=1)",
    )
    parser.add_argument(
        "--observed",
        type=Path,
        metavar="FILE",
        help="a live composite's composed resources, as `kubectl get -o yaml` "
        "exports them (a List or a YAML stream) (make: OBSERVED=<file>)",
    )
    parser.add_argument(
        "--required",
        type=Path,
        action="append",
        default=[],
        metavar="FILE",
        help="more objects the cluster holds, after the module's platform "
        "settings (an OpenStack tenant's pools...) (make: REQUIRED=<file>)",
    )
    parser.add_argument(
        "--graph",
        type=Path,
        metavar="DIR",
        help="draw what was composed, what waits for what and which Usage "
        "protects what: <composite>.dot, .mmd and, with Graphviz, .svg "
        "(docs/graphs.md) (make: GRAPH=<dir>)",
    )
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory() as tmp:
        return _render(args, Path(tmp))


def _render(args: argparse.Namespace, workdir: Path) -> int:
    """:func:`main` in a work folder: check the input, render, print, summarize."""
    try:
        target = target_of(args.xr)
        observed = None if args.observed is None else observed_resources(args.observed, target)
        for extra in args.required:
            if not extra.is_file():
                raise BadInputError(f"{extra}: no such file")
        case = case_for(target, workdir, tuple(p.resolve() for p in args.required))
        composition = case.composition
    except BadInputError as error:
        print(f"render: {error}", file=sys.stderr)
        return 2
    except (composition_selection.SelectionError, ValueError) as error:  # Case.composition
        print(f"render: {args.xr}: no Composition for it: {error}", file=sys.stderr)
        return 2
    cli = tool.find_cli()
    if cli is None:
        print(
            "render: Crossplane CLI or engine not found at .bin/crossplane, "
            ".bin/crossplane-core: run `make cli`",
            file=sys.stderr,
        )
        return 2
    described = "the composite of claim" if target.given == "claim" else "composite"
    print(
        f"render: {args.xr}: {described} {target.composite['kind']} "
        f"{target.composite['metadata']['name']} ({target.form}), module {target.api.module}, "
        f"{composition.relative_to(ROOT)}, settings "
        f"{PLATFORM_SETTINGS[target.api.module].relative_to(ROOT)}/",
        file=sys.stderr,
    )
    observed_file = None
    if observed is not None:
        observed_file = workdir / "observed.yaml"
        observed_file.write_text(yaml.safe_dump_all(observed, sort_keys=False))
    port = tool.free_port()
    with tool.serve_function(port, workdir / "function.log"):
        run = Run(cli, port, workdir, case)
        try:
            if args.converge:
                last = _converged(run, observed_file)
                stdout, rendered, observed_file = last.stdout, last.rendered, last.observed
            else:
                stdout, rendered = run.render(observed_file)
        except RenderFailedError as error:
            print(
                f"render: {args.xr}: crossplane composition render failed:\n{error}",
                file=sys.stderr,
            )
            return 1
    print(stdout, end="")
    if args.graph is not None:
        for path in draw(stdout, observed_file, args.graph):
            print(f"render: drew {path}", file=sys.stderr)
    for line in summary(rendered):
        print(line, file=sys.stderr)
    return 1 if rendered.fatal else 0


def _converged(run: Run, observed: Path | None) -> Pass:
    """The last pass of :func:`converge`, one line per pass on stderr."""
    passes = list(converge(run, observed))
    for each in passes:
        print(
            f"pass {each.number}: {len(each.rendered.composed)} composed, {len(each.new)} "
            f"new, {len(each.rendered.held_back)} held back",
            file=sys.stderr,
        )
    if passes[-1].new:
        print(
            f"render: still composing new resources after {MAX_PASSES} passes; the last "
            "pass is printed",
            file=sys.stderr,
        )
    return passes[-1]


def draw(stdout: str, observed: Path | None, out_dir: Path) -> list[Path]:
    """The graph of each composite the render printed (tools/composed_graph.py), drawn with
    the observed resources it was rendered against, so readiness is the providers'."""
    documents = list(yaml.safe_load_all(stdout))
    observed_documents = (
        [] if observed is None else [d for d in yaml.safe_load_all(observed.read_text()) if d]
    )
    written: list[Path] = []
    for render in composed_graph.split_renders(documents):
        written += composed_graph.write_graph(render, out_dir, observed_documents)
    return written


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
