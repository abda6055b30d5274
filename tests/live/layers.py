"""The live control plane's layers as functions: what the session fixtures of
tests/live/conftest.py build (and `make playground`, tools/live/playground.py, builds the same
way), and the helpers tests use on a running plane.

control_plane (etcd, kube-apiserver, kube-controller-manager: :func:`start_control_plane`) ->
crossplane (core init + start, the kubelet stand-in running the function, the Function
installed from examples/install: :func:`start_crossplane`) -> platform (provider-kubernetes,
the cloud stand-ins: :func:`start_providers`; every XRD and Composition of apis/ of a form:
:func:`form_files`, :func:`with_ttl`, :func:`delete_composites`).
"""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from tests.live import crossplane as xp
from tests.live.controlplane import (
    REGISTRY,
    REPO,
    ControlPlane,
    Processes,
    binaries,
    wait_for,
)
from tests.live.kube import Kube, docs_of, is_true
from tests.live.providers import (
    SHOOT_CRD,
    SHOOT_DELETION_CONFIRMATION,
    CloudStandIn,
    GardenerStandIn,
    OperatorStandIn,
    start_provider_kubernetes,
)
from tests.live.standins import KubeletStandIn, Loop


@dataclass
class Live:
    """The running control plane: its client, processes, directory and measured timings."""

    cp: ControlPlane
    kube: Kube
    procs: Processes
    timings: dict[str, float] = field(default_factory=dict)
    kubelet: KubeletStandIn | None = None
    form: str = ""  # the platform form installed now (FORMS)
    cloud: CloudStandIn | None = None
    operators: OperatorStandIn | None = None
    garden: GardenerStandIn | None = None
    responsive: ResponsiveWatch | None = None

    def record(self, key: str, seconds: float) -> None:
        """Keep a timing for bench/results.md (written at session end to the run directory)."""
        self.timings[key] = round(seconds, 1)
        (self.cp.dir / "timings.json").write_text(json.dumps(self.timings, indent=2))

    def wait(self, what: str, ready: Any, timeout: float = 120) -> float:
        """Wait until ready() is true (failing on a process exit or after timeout)."""
        return wait_for(what, ready, timeout, self.procs)


def start_control_plane(run_dir: Path) -> Live:
    """etcd + kube-apiserver + kube-controller-manager started in ``run_dir`` and ready (the
    control_plane fixture's, and `make playground`'s: tools/live/playground.py); stop() it."""
    procs = Processes(run_dir)
    bins = binaries()
    cp = ControlPlane(run_dir, bins, procs)
    cp.write_pki()
    kube = Kube(cp.kubeconfig)
    live = Live(cp, kube, procs)
    try:
        live.record("apiserver_ready_s", cp.start(kube.readyz))
    except BaseException:
        stop(live)
        raise
    return live


def stop(live: Live) -> None:
    """Stop the stand-ins' loops, the informers and every process, newest first."""
    for standin in (live.kubelet, live.cloud, live.operators, live.responsive):
        if standin:
            standin.loop.stop()
    if live.cloud:
        live.cloud.shutdown()
    live.kube.stop_informers()
    live.procs.stop()


def start_crossplane(live: Live) -> None:
    """Crossplane core running, its webhooks reachable, the Function installed and Healthy
    (the crossplane fixture's, and the playground's)."""
    bins = binaries()
    live.procs.start("registry", [str(bins["registry"]), "-port", REGISTRY.split(":")[1]])
    ref = xp.publish_function(live.cp, REPO / ".bin/crossplane")
    assert ref.startswith(REGISTRY)
    for step, took in xp.start(live.cp, live.kube, bins).items():
        live.record(f"crossplane_{step}_s", took)
    live.kubelet = KubeletStandIn(live.kube, live.procs, live.cp.dir)
    live.kubelet.loop.start()
    t = time.monotonic()
    xp.install_function(live.kube)

    def healthy() -> bool:
        fn = live.kube.get("pkg.crossplane.io/v1", "Function", "function-platform")
        return is_true(fn, "Healthy") and is_true(fn, "Installed")

    try:
        live.wait("Function function-platform Healthy", healthy, 180)
    except TimeoutError as e:
        raise AssertionError(
            f"{e}\nFunction status: {xp.function_status(live.kube)}\n"
            f"kubelet stand-in errors: {live.kubelet.loop.errors}"
        ) from e
    live.record("function_healthy_s", time.monotonic() - t)


FORMS = ("v1-claims", "v2-namespaced")


def form_files(form: str, name: str) -> list[Path]:
    """apis/**/<name> of one form: namespaced/ holds the v2 form. Both forms of a module share
    the XRD's name (same group and plural), so a cluster serves one form at a time. For
    ``composition.yaml``, each API's own Composition, as the README's install steps apply them:
    the optional copies under design documents' names (``compositions/<name>.yaml``, the same
    pipeline, rendered by tests/test_e2e_render.py) are not installed."""
    return [
        p
        for p in sorted((REPO / "apis").rglob(name))
        if ("namespaced" in p.parts) == (form == "v2-namespaced")
    ]


def establish_provider_crds(live: Live, wanted: Callable[[str], bool] | None = None) -> None:
    """The CRDs of what the modules compose (tests/live/crds) applied, and Established;
    ``wanted``: only those whose name it accepts (the playground's one module)."""
    kube = live.kube
    t = time.monotonic()
    crds = [
        c
        for c in docs_of(REPO / "tests/live/crds")
        if wanted is None or wanted(c["metadata"]["name"])
    ]
    kube.apply_all(crds)

    def established() -> bool:
        return all(
            is_true(
                kube.get(
                    "apiextensions.k8s.io/v1", "CustomResourceDefinition", c["metadata"]["name"]
                ),
                "Established",
            )
            for c in crds
        )

    live.wait("composed kinds' CRDs Established", established, 180)
    live.record("provider_crds_established_s", time.monotonic() - t)


XRD = ("apiextensions.crossplane.io/v1", "CompositeResourceDefinition")


def xr_kinds() -> list[tuple[str, str]]:
    """(apiVersion, kind) of every composite of apis/ (both forms: the same kinds)."""
    out = []
    for doc in docs_of(*sorted((REPO / "apis").rglob("definition.yaml"))):
        spec = doc["spec"]
        for v in spec["versions"]:
            item = (f"{spec['group']}/{v['name']}", spec["names"]["kind"])
            if item not in out:
                out.append(item)
    return out


def start_providers(live: Live) -> None:
    """provider-kubernetes (real) and the stand-ins for the providers and operators that
    cannot run here, with the ProviderConfigs of examples/install/20-provider-configs.yaml
    (the providers fixture's, and the playground's)."""
    kube = live.kube
    bins = binaries()
    pk_crds = docs_of(bins["provider-kubernetes-package"] / "crds")
    for crd in pk_crds:
        # Object serves v1alpha1 and v1alpha2 through the provider's conversion webhook, which
        # Crossplane's package manager wires to the provider's Service; the provider runs as a
        # process here, and everything (compositions, the provider) uses v1alpha2, the storage
        # version: no conversion is needed (docs/live.md)
        if (crd["spec"].get("conversion") or {}).get("strategy") == "Webhook":
            crd["spec"]["conversion"] = {"strategy": "None"}
    kube.apply_all([*pk_crds, SHOOT_CRD])
    live.wait(
        "provider-kubernetes CRDs Established",
        lambda: all(
            is_true(
                kube.get(
                    "apiextensions.k8s.io/v1", "CustomResourceDefinition", c["metadata"]["name"]
                ),
                "Established",
            )
            for c in [*pk_crds, SHOOT_CRD]
        ),
        120,
    )
    kube.apply_all(SHOOT_DELETION_CONFIRMATION)
    start_provider_kubernetes(live.cp, live.procs, bins, kube)
    # the install step a user on v2.4 applies: the providers here are processes with their
    # CRDs applied directly (no MRDs to activate), so this proves the policy is one core v2.4
    # accepts as shipped
    kube.apply_all(docs_of(REPO / "examples/install/15-activation-policy.yaml"))
    # keyless ProviderConfigs as shipped (the stand-ins call no cloud, so the identity they
    # name is never exchanged); the static-keys fallback only as a server-side dry run: the
    # API server accepts it against the same CRDs, and it does not replace the default
    kube.apply_all(docs_of(REPO / "examples/install/20-provider-configs.yaml"))
    for doc in docs_of(REPO / "examples/install/static-keys/20-provider-configs.yaml"):
        kube.apply(doc, dry_run=True)
    live.cloud = CloudStandIn(kube, xr_kinds())
    live.cloud.loop.start()
    live.garden = GardenerStandIn(kube, live.cp)
    if live.kubelet is not None:
        live.kubelet.garden = live.garden  # the refresher Jobs' pods call the garden
    live.operators = OperatorStandIn(kube, live.garden)
    live.operators.loop.start()


def with_ttl(composition: dict[str, Any], ttl: str) -> dict[str, Any]:
    """The Composition with this function's step input `ttl` set to ``ttl`` read as YAML
    (LIVE_TTL=60s: both phases; LIVE_TTL='{waiting: 60s}': one phase, for `make bench-live`);
    unchanged if ''."""
    if ttl:
        value = yaml.safe_load(ttl)
        for step in composition["spec"].get("pipeline") or []:
            if step.get("functionRef", {}).get("name") == "function-platform":
                step.setdefault("input", {})["ttl"] = value
    return composition


class ResponsiveWatch:
    """Every composite's ``Responsive`` condition, read from its kind's informer once a second
    for the whole session:
    each composite ever seen ``Responsive=False`` (core v2.4 sets it, reason
    ``WatchCircuitOpen``, while the composite's watch circuit breaker is open: it then drops
    the watch events of its composed resources for the cooldown, 5 minutes by default) is kept
    with the condition's reason and message. The breaker stays open for minutes, so a
    one-second poll cannot miss it; ``circuit_breaker_opens_total`` is checked beside it."""

    def __init__(self, kube: Kube, kinds: list[tuple[str, str]]) -> None:
        self.kube = kube
        self.kinds = kinds
        self.unresponsive: dict[str, str] = {}
        self.loop = Loop("responsive-watch", self.step, 1.0)

    def step(self) -> None:
        for api_version, kind in self.kinds:
            try:  # the kind's informer: a list a second of every composite loaded the plane
                items = self.kube.cached(api_version, kind).items()
            except LookupError:  # the kind is not served in this form (yet): nothing to watch
                continue
            for obj in items:
                for cond in (obj.get("status") or {}).get("conditions") or []:
                    if cond.get("type") == "Responsive" and cond.get("status") == "False":
                        key = f"{kind}/{obj['metadata']['name']}"
                        self.unresponsive.setdefault(
                            key, f"{cond.get('reason')}: {cond.get('message')}"
                        )

    def of(self, names: set[str]) -> dict[str, str]:
        """The unresponsive composites among ``names`` (``Kind/name`` or bare names)."""
        return {
            k: v for k, v in self.unresponsive.items() if k in names or k.split("/", 1)[1] in names
        }


def delete_composites(live: Live, xrds: list[dict[str, Any]]) -> None:
    """Delete every composite of the XRDs that is left (tests' shared ones, e.g. the load's
    pools), each in its namespace, as an uninstall must (docs/namespaced.md, "Uninstalling"):
    Crossplane core v2.4.0 deletes an XRD's composites with one cluster-wide delete-collection
    (internal/controller/apiextensions/definition/reconciler.go:421), which the API server
    answers 404 for a namespaced kind; Crossplane ignores that and waits for them forever
    (reconciler.go:442, "waiting for defined composite resources to be deleted")."""
    for doc in xrds:
        spec = doc["spec"]
        served = [v["name"] for v in spec["versions"] if v.get("served", True)]
        api_version = f"{spec['group']}/{served[0]}"  # one served version lists them all
        # claims first: a claim whose composite went would only compose it again
        kinds = [(spec.get("claimNames") or {}).get("kind"), spec["names"]["kind"]]
        for kind in filter(None, kinds):
            with contextlib.suppress(Exception):  # the kind is not served (any more)
                for obj in live.kube.list(api_version, kind):
                    live.kube.delete(
                        api_version, kind, obj.metadata.name, obj.metadata.get("namespace")
                    )
