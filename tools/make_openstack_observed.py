"""Write ``tests/render-cases/openstack/observed-<case>.yaml``: a composite's resources Ready.

    python tools/make_openstack_observed.py [observed-<case>.yaml ...]

For each render case listed in ``OBSERVED`` it composes (through the function, in process) until
the desired set is stable with every composed resource observed Ready, as providers would
report it (platform/providersim/simulation.py): ``Ready``/``Synced`` conditions, and for the wrapped
kinds the status the Objects' readiness reads (a Shoot's ``status.lastOperation``, Rook's
``status.phase``, the ControlPlane's ``status.services``, an encrypted pool's CephCluster
asking Rook for encrypted OSDs). The result is the observed state
of a steady pass. Deterministic: no clocks, no randomness.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "platform"), str(ROOT)]

import providersim  # noqa: E402

from tests.support.harness import FunctionClient, request, start_server  # noqa: E402

CASES = ROOT / "tests" / "render-cases" / "openstack"
ENVIRONMENT = (
    ROOT / "examples" / "openstack" / "apps" / "platform-config" / ("environment-eu-de-1.yaml")
)
#: observed file -> (XR file, required-resources file or None)
OBSERVED = {
    "observed-hv-pool-a-ready.yaml": ("xr-hv-pool-a.yaml", None),
    "observed-customer-a-prod-ready.yaml": ("xr-customer-a-prod.yaml", "pools-ready.yaml"),
    "observed-st-pool-encrypted-ready.yaml": ("xr-st-pool-encrypted.yaml", None),
}
STAMP = "2026-11-20T10:00:00Z"
#: The controllers of wrapped objects whose status these fixtures show (not the kubelet's:
#: the Shoot access refresh Job is shown as applied, not yet run).
CONTROLLERS = ("gardener", "rook", "c5c3")


class _Dumper(yaml.SafeDumper):
    """No anchors/aliases: every document reads on its own."""

    def ignore_aliases(self, data: Any) -> bool:
        return True


def observe(name: str, body: dict[str, Any]) -> dict[str, Any]:
    """``body`` as its provider reports it once Ready (platform/providersim/simulation.py)."""
    return providersim.report(
        body,
        name=name,
        stamp=STAMP,
        ids=False,
        generation=1,
        controllers=CONTROLLERS,
        keep_empty=False,
    )


def _fetched(required: str | None) -> dict[str, list[dict[str, Any]]]:
    found = {"environment-0": [yaml.safe_load(ENVIRONMENT.read_text())]}
    if required:
        roles = {
            "XHypervisorCluster": "hypervisor",
            "XStorageCluster": "storage",
            "XControlPlaneCluster": "control-plane",
        }
        for pool in yaml.safe_load_all((CASES / required).read_text()):
            if "namespace" in pool["metadata"]:
                continue  # the namespaced twin, for the namespaced form's renders
            claim = pool["metadata"]["labels"]["crossplane.io/claim-name"]
            found[f"pool-{roles[pool['kind']]}-{claim}"] = [pool]
            # who else runs on the pool (the Usages protecting it): nobody
            found[f"holders-{roles[pool['kind']]}-{claim}"] = []
    return found


def converge(client: FunctionClient, xr: dict[str, Any], required: str | None) -> list[Any]:
    step = {
        "apiVersion": "platform.fn.crossplane.io/v1beta1",
        "kind": "Input",
        "module": "openstack",
        "environment": [{"name": "openstack-eu-de-1"}],
    }
    observed: dict[str, dict[str, Any]] = {}
    for _ in range(6):
        rendered = client.run(request(xr, step, observed=observed, required=_fetched(required)))
        assert not rendered.fatal, rendered.fatal
        now = {n: observe(n, b) for n, b in sorted(rendered.resources.items())}
        if set(now) == set(observed):
            break
        observed = now
    return [observed[n] for n in sorted(observed)]


def _arguments(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "observed",
        nargs="*",
        metavar="FILE",
        help="an observed file to write (default: all): " + ", ".join(sorted(OBSERVED)),
    )
    args = parser.parse_args(argv)
    unknown = sorted(set(args.observed) - set(OBSERVED))
    if unknown:
        parser.error(
            f"unknown observed file(s) {', '.join(unknown)}: one of {', '.join(sorted(OBSERVED))}"
        )
    return args


def main(argv: list[str]) -> int:
    only = set(_arguments(argv).observed)  # names of observed files to write; default all
    server, address = start_server()
    client = FunctionClient(address)
    try:
        for target, (xr_file, required) in OBSERVED.items():
            if only and target not in only:
                continue
            xr = yaml.safe_load((CASES / xr_file).read_text())
            documents = converge(client, xr, required)
            header = f"# {target}: generated by tools/make_openstack_observed.py from {xr_file}.\n"
            text = yaml.dump_all(documents, Dumper=_Dumper, sort_keys=True)
            (CASES / target).write_text(header + text)
            print(f"wrote {target}: {len(documents)} resources")
    finally:
        client.close()
        server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
