"""Preview an upgrade: what installing the candidate function would do to every composite.

    python -m fnplatform.upgrade preview --running v0.1.0 --kubeconfig ~/.kube/config
    python -m fnplatform.upgrade preview --running de7f94b --from export.yaml
    make upgrade-preview RUNNING=de7f94b KUBECONFIG=~/.kube/config   # or FROM=export.yaml

Reads the composites of the function's XRDs with their inputs (:mod:`.inputs`: a cluster
through kubectl, or an export), serves the running release and the candidate
(:mod:`.functions`), renders each composite with both through ``crossplane composition render``
(:mod:`.render`), and prints what the upgrade creates, changes, deletes or replaces
(:mod:`.plan`, :mod:`.report`; docs/upgrading.md "Preview an upgrade").

Exit codes, the highest that applies (as crossplane-diff orders its own by severity):
0 nothing stateful deleted or replaced and no composite refused; 1 a composite could not be
rendered (its section says why); 2 bad input (nothing rendered); 3 a composite would be
refused (a fatal result); 4 a stateful resource would be deleted or replaced.
"""

from __future__ import annotations

import argparse
import contextlib
import shutil
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path

from fnplatform.upgrade import inputs, render
from fnplatform.upgrade.functions import CHECKOUT, served
from fnplatform.upgrade.inputs import BadInputError, Composite
from fnplatform.upgrade.plan import CompositePlan, compare
from fnplatform.upgrade.report import as_json, report

EXIT_SAFE = 0
EXIT_RENDER_FAILED = 1
EXIT_BAD_INPUT = 2
EXIT_REFUSED = 3
EXIT_DATA_LOSS = 4
FUNCTION_NAME = "function-platform"


def exit_code(plans: Sequence[CompositePlan]) -> int:
    """The highest exit code that applies to ``plans``."""
    code = EXIT_SAFE
    for plan in plans:
        if plan.error is not None:
            code = max(code, EXIT_RENDER_FAILED)
        if plan.refused:
            code = max(code, EXIT_REFUSED)
        if any(change.loses_data for change in plan.changes):
            code = max(code, EXIT_DATA_LOSS)
    return code


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m fnplatform.upgrade preview",
        description="What installing the candidate function would do to every composite of "
        "its XRDs: created, changed, deleted, replaced, refused (docs/upgrading.md).",
        epilog="Exit codes: 0 safe; 1 a composite could not be rendered; 2 bad input; "
        "3 a composite would be refused; 4 a stateful resource would be deleted or replaced. "
        "Make: make upgrade-preview RUNNING=<rev|dir|host:port> [CANDIDATE=...] "
        "KUBECONFIG=<file>|FROM=<export.yaml> [SAVE_EXPORT=<file>]",
    )
    parser.add_argument(
        "--running",
        required=True,
        metavar="REV|DIR|HOST:PORT",
        help="the release the cluster runs: a git revision of this repository (v0.1.0, "
        "de7f94b), a source tree, or the address of a function served without TLS",
    )
    parser.add_argument(
        "--candidate",
        default=str(CHECKOUT),
        metavar="REV|DIR|HOST:PORT",
        help="the function to upgrade to (default: this checkout)",
    )
    source = parser.add_mutually_exclusive_group(required=True)
    source.add_argument("--kubeconfig", type=Path, metavar="FILE", help="read this cluster")
    source.add_argument(
        "--from",
        dest="export",
        type=Path,
        metavar="FILE",
        help="read an export instead (kubectl get -o yaml output: a List or a YAML stream)",
    )
    parser.add_argument("--context", help="the kubeconfig context (default: its current one)")
    parser.add_argument("--kubectl", help="the kubectl binary (default: kubectl on PATH)")
    parser.add_argument(
        "--save-export",
        type=Path,
        metavar="FILE",
        help="also write what was read from the cluster, to preview it again with --from",
    )
    parser.add_argument(
        "-o",
        "--output",
        choices=("diff", "json"),
        default="diff",
        help="diff: crossplane-diff's human format (default); json: the same for a program",
    )
    parser.add_argument(
        "--function-name",
        default=FUNCTION_NAME,
        help=f"the Function's name in the Compositions (default: {FUNCTION_NAME})",
    )
    parser.add_argument(
        "--crossplane",
        type=Path,
        help="the Crossplane CLI (default: .bin/crossplane of this checkout, else on PATH)",
    )
    parser.add_argument(
        "--crossplane-binary",
        type=Path,
        help="the render engine, Crossplane core (default: .bin/crossplane-core of this checkout)",
    )
    return parser


def _tools(args: argparse.Namespace) -> tuple[Path, Path]:
    cli = args.crossplane
    if cli is None:
        local = CHECKOUT / ".bin" / "crossplane"
        found = shutil.which("crossplane")
        cli = local if local.exists() else Path(found) if found else None
    engine = args.crossplane_binary or CHECKOUT / ".bin" / "crossplane-core"
    if cli is None or not cli.exists():
        raise BadInputError("the Crossplane CLI is not found: give --crossplane (make cli)")
    if not engine.exists():
        raise BadInputError(f"{engine}: no render engine (give --crossplane-binary; make cli)")
    return cli, engine


def _composites(args: argparse.Namespace) -> tuple[list[Composite], str]:
    if args.export is not None:
        documents = inputs.read_export(args.export)
        where = str(args.export)
        found = inputs.inventory(documents, args.function_name, where)
        if not found:
            raise BadInputError(
                f"{where}: holds no composite of the function {args.function_name!r}"
            )
        return found, where
    kubectl = inputs.Kubectl.find(args.kubectl, args.kubeconfig, args.context)
    documents = inputs.from_cluster(kubectl, args.function_name)
    if args.save_export is not None:
        inputs.write_export(documents, args.save_export)
        print(f"preview: wrote {len(documents)} objects to {args.save_export}", file=sys.stderr)
    where = f"the cluster of {args.kubeconfig}"
    return inputs.inventory(documents, args.function_name, where), where


def _plan(
    composite: Composite,
    tools: tuple[Path, Path],
    function_name: str,
    addresses: tuple[str, str],
    workdir: Path,
) -> CompositePlan:
    try:
        running, candidate = (
            render.render(
                *tools,
                composite,
                function_name=function_name,
                address=address,
                workdir=workdir / role,
            )
            for role, address in zip(("running", "candidate"), addresses, strict=True)
        )
    except render.RenderError as error:
        return CompositePlan(composite, error=f"crossplane composition render failed: {error}")
    return compare(composite, running, candidate)


def preview(args: argparse.Namespace, workdir: Path) -> int:
    tools = _tools(args)
    composites, where = _composites(args)
    with contextlib.ExitStack() as stack:
        running = stack.enter_context(served(args.running, "running", workdir))
        candidate = stack.enter_context(served(args.candidate, "candidate", workdir))
        print(
            f"preview: {len(composites)} composites of {args.function_name} in {where}",
            file=sys.stderr,
        )
        print(f"preview: running: {running.description}", file=sys.stderr)
        print(f"preview: candidate: {candidate.description}", file=sys.stderr)
        plans = [
            _plan(
                composite,
                tools,
                args.function_name,
                (running.address, candidate.address),
                workdir / f"composite-{index}",
            )
            for index, composite in enumerate(composites)
        ]
    print(as_json(plans) if args.output == "json" else report(plans), end="")
    return exit_code(plans)


def main(argv: Sequence[str]) -> int:
    if list(argv[:1]) != ["preview"]:
        print(
            "usage: python -m fnplatform.upgrade preview --running REV|DIR|HOST:PORT "
            "(--kubeconfig FILE | --from FILE) [options]; --help for more",
            file=sys.stderr,
        )
        return EXIT_BAD_INPUT
    args = _parser().parse_args(list(argv[1:]))
    with tempfile.TemporaryDirectory(prefix="upgrade-preview-") as tmp:
        try:
            return preview(args, Path(tmp))
        except BadInputError as error:
            print(f"preview: {error}", file=sys.stderr)
            return EXIT_BAD_INPUT
