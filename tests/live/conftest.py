"""Session fixtures of the live control plane (make test-live; docs/live.md).

One control plane per session, built up in layers so each test asks for only what it needs:
control_plane (etcd, kube-apiserver, kube-controller-manager) -> crossplane (core init + start,
the kubelet stand-in running the function, the Function installed from examples/install) ->
platform (provider-kubernetes, the cloud stand-ins, every XRD and Composition of apis/).
"""

from __future__ import annotations

import contextlib
import json
import os
import time
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
import yaml
from prometheus_client.parser import text_string_to_metric_families

from tests.live import crossplane as xp
from tests.live.controlplane import (
    REGISTRY,
    REPO,
    ControlPlane,
    Processes,
    binaries,
    in_private_namespace,
    wait_for,
)
from tests.live.kube import Kube, docs_of, is_true, xrd_serving
from tests.live.providers import (
    SHOOT_CRD,
    SHOOT_DELETION_CONFIRMATION,
    CloudStandIn,
    GardenerStandIn,
    OperatorStandIn,
    start_provider_kubernetes,
)
from tests.live.standins import METRICS_PORT, KubeletStandIn, Loop


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Live tests run only when asked for (-m live, as make test-live does): `make test` and
    a bare pytest stay fast and need no built binaries.

    Tests marked ``own_apis`` install module APIs themselves (from a package), which define the
    kinds the ``platform`` fixture applies from apis/: they run first, before any form of the
    platform is installed (pytest would otherwise run tests without the parametrized
    ``platform`` last, while its last form is still installed). Last of the hooks, so after
    pytest grouped the tests by that fixture's forms."""
    if "live" not in (config.getoption("-m") or ""):
        live = [i for i in items if i.get_closest_marker("live")]
        if live:
            config.hook.pytest_deselected(items=live)
            items[:] = [i for i in items if not i.get_closest_marker("live")]
        return
    first = [i for i in items if i.get_closest_marker("own_apis")]
    items[:] = first + [i for i in items if not i.get_closest_marker("own_apis")]


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


@pytest.fixture(scope="session")
def live_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The run's directory (logs/, pki/, kubeconfig); LIVE_DIR keeps it at a known place."""
    fixed = os.environ.get("LIVE_DIR")
    if fixed:
        Path(fixed).mkdir(parents=True, exist_ok=True)
        return Path(fixed)
    return tmp_path_factory.mktemp("live")


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


@pytest.fixture(scope="session")
def control_plane(live_dir: Path) -> Iterator[Live]:
    """etcd + kube-apiserver + kube-controller-manager, ready."""
    if not in_private_namespace():
        pytest.fail(
            "the live tests run in a private network namespace: use `make test-live` "
            "(tools/live/netns.sh .venv/bin/python -m pytest -m live tests/live)"
        )
    live = start_control_plane(live_dir)
    try:
        yield live
    finally:
        stop(live)


@pytest.fixture(scope="session")
def crossplane(control_plane: Live) -> Live:
    """Crossplane core running, its webhooks reachable, the Function installed and Healthy."""
    start_crossplane(control_plane)
    return control_plane


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


@pytest.fixture(scope="session")
def provider_crds(crossplane: Live) -> Live:
    """The CRDs of what the modules compose (tests/live/crds), Established."""
    establish_provider_crds(crossplane)
    return crossplane


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


@pytest.fixture(scope="session")
def providers(provider_crds: Live) -> Live:
    """provider-kubernetes (real) and the stand-ins for the providers and operators that
    cannot run here, with the ProviderConfigs of examples/install/20-provider-configs.yaml;
    every composite's Responsive condition watched (ResponsiveWatch)."""
    live = provider_crds
    live.responsive = ResponsiveWatch(live.kube, xr_kinds())
    live.responsive.loop.start()
    start_providers(live)
    return live


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


def replica_samples(address: str, name: str) -> list[Any]:
    """The samples named ``name`` one function replica serves on its metrics port (README
    "Metrics"); none when it does not answer (down, restarting)."""
    try:
        with urllib.request.urlopen(f"http://{address}:{METRICS_PORT}/metrics", timeout=5) as rsp:
            text = rsp.read().decode()
    except OSError:
        return []
    return [
        sample
        for family in text_string_to_metric_families(text)
        for sample in family.samples
        if sample.name == name
    ]


def replica_calls(address: str) -> float:
    """RunFunction calls one replica has answered since it started."""
    return sum(s.value for s in replica_samples(address, "function_platform_requests_total"))


def function_calls(live: Live) -> float:
    """RunFunction calls the function's replicas have answered so far (their own metrics)."""
    if live.kubelet is None:
        return 0.0
    return sum(replica_calls(a) for a in live.kubelet.addresses())


#: Where `crossplane core start` serves its metrics here.
CROSSPLANE_METRICS = f"http://127.0.0.1:{xp.METRICS_PORT}/metrics"


def crossplane_counters(name: str) -> dict[tuple[tuple[str, str], ...], float]:
    """One counter family of Crossplane core's metrics, by its sorted labels: e.g.
    ``circuit_breaker_events_total`` by ``controller`` and ``result`` (core v2.4
    internal/circuit/circuit_metrics.go)."""
    with urllib.request.urlopen(CROSSPLANE_METRICS, timeout=5) as rsp:
        text = rsp.read().decode()
    return {
        tuple(sorted(sample.labels.items())): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
        if sample.name == name
    }


def counter_delta(
    after: dict[tuple[tuple[str, str], ...], float],
    before: dict[tuple[tuple[str, str], ...], float],
) -> dict[tuple[tuple[str, str], ...], float]:
    """What each series of a counter family grew by (series new since ``before`` count whole)."""
    return {k: v - before.get(k, 0.0) for k, v in after.items() if v - before.get(k, 0.0) > 0}


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


@pytest.fixture(scope="session", params=FORMS)
def platform(request: pytest.FixtureRequest, providers: Live) -> Iterator[Live]:
    """One form of the platform installed as a user installs it: every XRD and Composition
    of apis/ of that form, the XRDs Established (and Offered where they have claims). At the
    end the form is uninstalled (XRDs deleted: Crossplane removes their CRDs)."""
    live = providers
    live.form = request.param
    kube = live.kube
    t = time.monotonic()
    xrds = docs_of(*form_files(live.form, "definition.yaml"))
    kube.apply_all(xrds)

    def established() -> bool:
        return all(xrd_serving(kube.get(*XRD, doc["metadata"]["name"]), doc) for doc in xrds)

    # on a timeout test_every_xrd_becomes_established names which XRDs, with their conditions
    with contextlib.suppress(TimeoutError):
        live.wait(f"every {live.form} XRD Established", established, 240)
    live.record(f"xrds_established_{live.form}_s", time.monotonic() - t)
    # the other form served the same kinds with the other scope: forget what discovery said
    kube.invalidate()
    comps = [
        with_ttl(c, os.environ.get("LIVE_TTL", ""))
        for c in docs_of(*form_files(live.form, "composition.yaml"))
    ]
    kube.apply_all(comps)
    yield live
    delete_composites(live, xrds)
    for doc in comps:
        kube.delete("apiextensions.crossplane.io/v1", "Composition", doc["metadata"]["name"])
    for doc in xrds:
        kube.delete(*XRD, doc["metadata"]["name"])
    # Crossplane deletes an XRD's CRDs (composite and claim) before it lets the XRD go; the
    # other form's XRD has the same name, so applying it while this one is still terminating
    # would patch the terminating object and the new form would never be served
    crds = [doc["metadata"]["name"] for doc in xrds] + [
        f"{doc['spec']['claimNames']['plural']}.{doc['spec']['group']}"
        for doc in xrds
        if "claimNames" in doc["spec"]
    ]

    def gone() -> bool:
        # an operator confirms Gardener's deletion of the Shoots that pools still hold (the
        # load's shared pools, load.prepare, stay until the form goes): without it a pool's
        # Shoot Object, and so its composite and the XRD's CRD, never go
        from tests.live import openstack  # here: it imports this module

        with contextlib.suppress(Exception):  # no Gardener stand-in in this run
            openstack.confirm_shoot_deletion(live)
        return all(kube.get(*XRD, doc["metadata"]["name"]) is None for doc in xrds) and all(
            kube.get("apiextensions.k8s.io/v1", "CustomResourceDefinition", name) is None
            for name in crds
        )

    live.wait(f"every {live.form} XRD and its CRDs deleted", gone, 420)
    # The other form defines the same kinds with the other scope. Observed here: a Crossplane
    # that served the cluster-scoped kinds never reconciles their namespaced re-definitions
    # (the composites get no status at all), as if it kept the kinds' old scope; a restarted
    # Crossplane serves them. A real installation picks one form (docs/namespaced.md).
    live.record(f"crossplane_restart_after_{live.form}_s", xp.restart(live.cp))
    live.wait(
        f"{live.form} XRDs deleted",
        lambda: all(kube.get(*XRD, d["metadata"]["name"]) is None for d in xrds),
        240,
    )
