"""Every provider-kubernetes install this repository ships runs the provider in server-side
apply mode (`--enable-server-side-apply`), so a hand edit of a field a module composes through
an Object (a Deployment's replicas, a Ceph pool's quota, a Shoot's workers) is applied back
(docs/drift.md). Run in `make test`, without a control plane; the live test
(tests/live/test_live_drift.py) shows the revert itself.

In that mode the provider's `Observe` compares the fields its field manager owns on the live
object with a dry-run apply of the manifest (provider-kubernetes
internal/controller/cluster/object/syncer.go, `SSAResourceSyncer.GetObservedState` and
`GetDesiredState`); without it, the manifest with its own last-applied annotation
(`PatchingResourceSyncer`), which a hand edit never changes. The flag's default is `true`
since v1.2.0 (cmd/provider/main.go), but an install that says nothing inherits whatever a
release or a values file decides: every install says it, and gives the install set's args.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest
import yaml

from tests.live.providers import INSTALL, provider_kubernetes_command, shipped_args

ROOT = Path(__file__).resolve().parent.parent
FLAG = "--enable-server-side-apply"
CHART = ROOT / "deploy/helm-charts/asya-crossplane"
#: (where it is, the args Crossplane gives the provider there, read how): every install of
#: provider-kubernetes the repository ships. test_every_install_is_listed_here finds them.
INSTALLS = [
    pytest.param(
        INSTALL,
        "the install set (docs/install.md): its DeploymentRuntimeConfig provider-kubernetes",
        id="install-set",
    ),
    pytest.param(
        ROOT / "examples/openstack/apps/crossplane-packages",
        "the openstack GitOps tree's packages (Flux applies them as they are)",
        id="gitops-tree",
    ),
    pytest.param(
        CHART,
        "the asya-crossplane chart with providers.install=true (helm template)",
        id="asya-crossplane-chart",
    ),
]
#: The first provider-kubernetes release whose `--enable-server-side-apply` defaults to true
#: (v1.1.0: false; cmd/provider/main.go): a Configuration's dependency, which Crossplane
#: installs with its default runtime config (no args), must not allow an older one.
SSA_BY_DEFAULT_SINCE = (1, 2, 0)


def _install_dir(where: Path, helm: Path, tmp_path: Path) -> Path:
    """The folder whose YAML files install the provider: the chart rendered into tmp_path."""
    if where != CHART:
        return where
    rendered = subprocess.run(
        [str(helm), "template", "asya-crossplane", str(CHART), "--set", "providers.install=true"],
        check=True,
        capture_output=True,
        text=True,
        timeout=120,
    ).stdout
    (tmp_path / "rendered.yaml").write_text(rendered)
    return tmp_path


@pytest.mark.parametrize(("where", "reason"), INSTALLS)
def test_every_install_runs_the_provider_in_server_side_apply_mode(
    where: Path, reason: str, helm: Path, tmp_path: Path
) -> None:
    args = shipped_args("provider-kubernetes", _install_dir(where, helm, tmp_path))
    assert FLAG in args, f"{reason}: no {FLAG} in {args}"
    assert f"--no-{FLAG[2:]}" not in args, f"{reason}: server-side apply turned off: {args}"
    # one setting everywhere: watches and the poll too (examples/install says why each)
    assert args == shipped_args("provider-kubernetes"), (
        f"{reason}: {args} differ from the install set's {shipped_args('provider-kubernetes')}"
    )


def test_the_live_test_runs_the_provider_in_server_side_apply_mode() -> None:
    assert FLAG in provider_kubernetes_command(Path("/bin/provider"))


def _installs_provider_kubernetes(text: str) -> bool:
    """Whether a file (YAML, or a Helm template read as text) declares a Provider package of
    provider-kubernetes."""
    return bool(re.search(r"kind:\s*Provider\b", text)) and bool(
        re.search(r"package:\s*\S*/provider-kubernetes:", text)
    )


def test_every_install_is_listed_here() -> None:
    """A new file that installs provider-kubernetes fails here until it is in INSTALLS (and
    so checked for the flag)."""
    found = {
        CHART if CHART in path.parents else path.parent
        for top in ("examples", "deploy")
        for path in (ROOT / top).rglob("*.yaml")
        if _installs_provider_kubernetes(path.read_text())
    }
    listed = {p.values[0] for p in INSTALLS}
    assert found == listed, f"installs of provider-kubernetes not in INSTALLS: {found - listed}"


def _floor(constraint: str) -> tuple[int, ...]:
    """The lowest release a Crossplane dependency constraint (`^v1.2.1`, `>=v1.2.1`) allows."""
    found = re.search(r"v?(\d+)\.(\d+)\.(\d+)", constraint)
    assert found, f"no version in the constraint {constraint!r}"
    return tuple(int(n) for n in found.groups())


@pytest.mark.parametrize(
    "package",
    sorted(p.parent.name for p in (ROOT / "configurations").glob("*/crossplane.yaml")),
)
def test_a_configuration_never_allows_a_provider_without_server_side_apply_by_default(
    package: str,
) -> None:
    meta = yaml.safe_load((ROOT / "configurations" / package / "crossplane.yaml").read_text())
    deps = [
        d
        for d in (meta.get("spec") or {}).get("dependsOn") or []
        if str(d.get("package", d.get("provider", ""))).endswith("/provider-kubernetes")
    ]
    for dep in deps:
        assert _floor(str(dep["version"])) >= SSA_BY_DEFAULT_SINCE, (
            f"{package}: provider-kubernetes {dep['version']} allows releases before v1.2.0, "
            f"whose {FLAG} defaults to false (a dependency Crossplane installs gets no args)"
        )
