"""Write ``tests/render-cases/<module>/observed-<case>.yaml``: the passes before the last,
all Ready.

    python tools/make_observed.py cluster/gcp cluster/aws cluster/azure
    python tools/make_observed.py contact-center/namespaced/azure

For each named first-pass case it renders pass 1, marks every composed resource Ready as a
provider would (``Ready``/``Synced`` conditions, the external-name annotation and the
``status.atProvider`` fields the modules read: endpoints, CA data, OIDC issuer, ids), and
renders again with those observed, until a pass composes nothing new (the cluster once its
network is Ready, node pools once the cluster is, Helm releases once a pool is Ready...). The
result is the observed state of the last pass, which composes everything and fills the XR
status. Values are fake but deterministic (hashes of names), so goldens stay byte-identical.

A namespaced twin's ready case converts the cluster-scoped observed state, unless the namespaced
form has its own (``<module>/namespaced/observed-<case>-ready.yaml``, made from a
``<module>/namespaced/<case>`` id): where the namespaced composite names things differently
(cloud-global names carry its uid), its own keeps the ready render a new composite's.
"""

from __future__ import annotations

import argparse
import dataclasses
import difflib
import sys
import tempfile
from pathlib import Path
from typing import Any

import yaml

TOOLS = Path(__file__).resolve().parent
sys.path[:0] = [str(TOOLS), str(TOOLS.parent)]

import providersim  # noqa: E402
import render_examples as tool  # noqa: E402

MAX_PASSES = 10
#: When every condition of the written state last changed (fixed: same input, same file).
STAMP = "2024-01-01T00:00:00Z"


def mark_ready(body: dict[str, Any]) -> dict[str, Any]:
    """``body`` as the provider would report it once the real resource exists
    (platform/providersim/simulation.py: every id, the kind's attributes, the external name)."""
    return providersim.report(yaml.safe_load(yaml.safe_dump(body)), stamp=STAMP, external=True)


def composed_by_name(stdout: str, xr_kind: str) -> dict[str, dict[str, Any]]:
    """Rendered composed resources by composition-resource-name."""
    out = {}
    for doc in yaml.safe_load_all(stdout):
        if not doc or doc.get("kind") in (xr_kind, "Result"):
            continue
        name = doc["metadata"]["annotations"]["crossplane.io/composition-resource-name"]
        out[name] = doc
    return out


def _render(cli: Path, case: tool.Case, port: int, tmp: Path) -> str:
    result = tool.render(cli, case, port, tmp)
    if result.returncode != 0:
        msg = f"{case.id}: {result.stderr}"
        raise SystemExit(msg)
    return result.stdout


def observed_for(cli: Path, case: tool.Case, port: int, tmp: Path) -> list[dict[str, Any]]:
    """Every resource the passes before the last composed, all Ready."""
    xr_kind = yaml.safe_load(case.xr.read_text())["kind"]
    composed = composed_by_name(_render(cli, case, port, tmp), xr_kind)
    ready: dict[str, dict[str, Any]] = {}
    for number in range(1, MAX_PASSES):
        new = {name: body for name, body in composed.items() if name not in ready}
        if not new:
            break
        ready.update({name: mark_ready(body) for name, body in new.items()})
        observed_file = tmp / f"observed-pass-{number}.yaml"
        observed_file.write_text(yaml.safe_dump_all(list(ready.values()), sort_keys=False))
        next_case = dataclasses.replace(case, observed=observed_file)
        composed = composed_by_name(_render(cli, next_case, port, tmp), xr_kind)
    return [ready[name] for name in sorted(ready)]


def converged_for(cli: Path, case: tool.Case, port: int, tmp: Path) -> list[dict[str, Any]]:
    """Every resource Ready: render, mark all Ready, repeat until nothing new appears.

    For modules whose resources wait on each other's provider-reported ids over several
    passes (contact-center on Azure: identity, key, grant, account).
    """
    xr_kind = yaml.safe_load(case.xr.read_text())["kind"]
    observed_file: Path | None = None
    ready: dict[str, dict[str, Any]] = {}
    for attempt in range(10):
        current = dataclasses.replace(case, observed=observed_file)
        rendered = composed_by_name(_render(cli, current, port, tmp), xr_kind)
        if set(rendered) == set(ready):
            break
        ready = {name: mark_ready(body) for name, body in rendered.items()}
        observed_file = tmp / f"observed-pass-{attempt + 1}.yaml"
        observed_file.write_text(yaml.safe_dump_all(list(ready.values()), sort_keys=False))
    return [ready[name] for name in sorted(ready)]


#: Modules whose "ready" state is every resource Ready (not the cluster's foundations).
CONVERGED_MODULES = ("contact-center",)


def _arguments(argv: list[str], known: list[str]) -> argparse.Namespace:
    """The case ids to write, each one of the registered render cases."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "cases",
        nargs="+",
        metavar="CASE",
        help="a render case id, <module>/<case> or <module>/namespaced/<case> "
        "(tests/render-cases/<module>.yaml)",
    )
    args = parser.parse_args(argv)
    for case_id in args.cases:
        if case_id not in known:
            near = difflib.get_close_matches(case_id, known, n=3)
            hint = f"; did you mean {', '.join(near)}?" if near else ""
            parser.error(f"unknown case {case_id!r}{hint}")
    return args


def main(argv: list[str]) -> int:
    cases = {c.id: c for c in tool.load_cases()}
    chosen = _arguments(argv, sorted(cases)).cases
    cli = tool.find_cli()
    if cli is None:
        print("Crossplane CLI not found: run `make cli` (tools/install-cli.sh)", file=sys.stderr)
        return 2
    # Observed states are written for the cases as written; twins convert them when rendering
    # unless a namespaced id (<module>/namespaced/<case>) writes the namespaced form's own.
    port = tool.free_port()
    with tempfile.TemporaryDirectory() as tmp, tool.serve_function(port):
        for case_id in chosen:
            case = cases[case_id]
            make = converged_for if case.module in CONVERGED_MODULES else observed_for
            documents = make(cli, case, port, Path(tmp))
            folder = tool.CASES_DIR / case.module
            if case.namespaced:
                folder = folder / tool.NAMESPACED
                folder.mkdir(exist_ok=True)
            target = folder / f"observed-{case.name}-ready.yaml"
            header = (
                f"# Observed state of {case.xr.name}{' (namespaced)' if case.namespaced else ''}"
                " once the foundations are Ready\n"
                f"# (tools/make_observed.py {case_id}; provider values are fake, deterministic).\n"
            )
            target.write_text(header + yaml.safe_dump_all(documents, sort_keys=False))
            print(f"wrote {target.relative_to(tool.ROOT)}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
