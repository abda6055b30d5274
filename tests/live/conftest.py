"""Session fixtures of the live control plane (make test-live; docs/live.md): fixtures only,
the layers they start are functions of tests/live/layers.py.

One control plane per session, built up in layers so each test asks for only what it needs:
control_plane (etcd, kube-apiserver, kube-controller-manager) -> crossplane (core init + start,
the kubelet stand-in running the function, the Function installed from examples/install) ->
platform (provider-kubernetes, the cloud stand-ins, every XRD and Composition of apis/).
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.live import crossplane as xp
from tests.live import openstack
from tests.live.controlplane import (
    in_private_namespace,
)
from tests.live.kube import docs_of, xrd_serving
from tests.live.layers import (
    FORMS,
    XRD,
    Live,
    ResponsiveWatch,
    delete_composites,
    establish_provider_crds,
    form_files,
    start_control_plane,
    start_crossplane,
    start_providers,
    stop,
    with_ttl,
    xr_kinds,
)


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


@pytest.fixture(scope="session")
def live_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The run's directory (logs/, pki/, kubeconfig); LIVE_DIR keeps it at a known place."""
    fixed = os.environ.get("LIVE_DIR")
    if fixed:
        Path(fixed).mkdir(parents=True, exist_ok=True)
        return Path(fixed)
    return tmp_path_factory.mktemp("live")


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


@pytest.fixture(scope="session")
def provider_crds(crossplane: Live) -> Live:
    """The CRDs of what the modules compose (tests/live/crds), Established."""
    establish_provider_crds(crossplane)
    return crossplane


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
