"""Crossplane core (v2.4.0, tools/live/crossplane/go.mod) as two local processes (`crossplane
core init`, then `core start`), set up the way its Helm chart sets up the pod, and the function's
package served from a local OCI registry (see docs/live.md for each choice).
"""

from __future__ import annotations

import base64
import os
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

from tests.live.controlplane import (
    CROSSPLANE_NS,
    CROSSPLANE_WEBHOOK_PORT,
    REGISTRY,
    REPO,
    ControlPlane,
    wait_for,
)
from tests.live.kube import Kube, docs_of

# The secret names the Helm chart gives init and start (cluster/charts/crossplane/templates/
# deployment.yaml, secret.yaml): without them init fails with "cannot get TLS secret: resource
# name may not be empty".
TLS_ENV = {
    "TLS_CA_SECRET_NAME": "crossplane-root-ca",
    "TLS_SERVER_SECRET_NAME": "crossplane-tls-server",
    "TLS_CLIENT_SECRET_NAME": "crossplane-tls-client",
}
WEBHOOK_SERVICE = "crossplane-webhooks"
HEALTH_PORT = 8181
#: `core start --metrics-port`: Crossplane's metrics (circuit breaker counters among them).
METRICS_PORT = 8180

# The package reference examples/install/40-function.yaml installs; an ImageConfig rewrites its
# prefix to the local registry, so the file is applied unchanged.
PUBLISHED_PREFIX = "xpkg.upbound.io/myplatform/"
FUNCTION_REF = "xpkg.upbound.io/myplatform/function-platform:v0.1.0"


def _b64(s: str) -> str:
    return base64.b64decode(s).decode()


def publish_function(cp: ControlPlane, cli: Path) -> str:
    """Build the function's package with the CLI (package/ + examples/) and push it to the local
    registry at the path the ImageConfig rewrites FUNCTION_REF to; return that reference."""
    xpkg = cp.dir / "function-platform.xpkg"
    subprocess.run(
        [
            str(REPO / "tools/build-package.sh"),
            "--metadata-only",
            "--out",
            str(xpkg),
        ],
        check=True,
        capture_output=True,
        cwd=REPO,
    )
    ref = FUNCTION_REF.replace(PUBLISHED_PREFIX, f"{REGISTRY}/myplatform/")
    subprocess.run(
        [str(cli), "xpkg", "push", "-f", str(xpkg), ref], check=True, capture_output=True
    )
    return ref


def configuration_ref(package: str) -> str:
    """The published reference of a Configuration package (tools/make_configurations.py), the
    one README "Installing one module" installs: the function's registry and tag."""
    return FUNCTION_REF.replace("/function-platform:", f"/{package}:")


#: A Configuration package installed in the cluster (pkg.crossplane.io).
CONFIGURATION = ("pkg.crossplane.io/v1", "Configuration")


def configuration(name: str, ref: str) -> dict[str, Any]:
    """The object `crossplane xpkg install configuration <ref> <name>` creates (README), with
    dependency resolution skipped: the providers here are processes with their CRDs applied,
    not packages, so Crossplane's package manager would find none of the Configuration's
    dependencies in its lock and install nothing (docs/live.md, "A module from its
    Configuration package")."""
    return {
        "apiVersion": CONFIGURATION[0],
        "kind": CONFIGURATION[1],
        "metadata": {"name": name},
        "spec": {"package": ref, "skipDependencyResolution": True},
    }


def package_xrds(module: str, namespaced: bool) -> list[dict[str, Any]]:
    """The XRDs a module's Configuration package ships: one form's definition files of
    apis/<module>/ (namespaced/ holds the v2 form)."""
    root = REPO / "apis" / module
    return [
        d
        for p in sorted(root.rglob("definition.yaml"))
        if ("namespaced" in p.relative_to(root).parts) == namespaced
        for d in docs_of(p)
    ]


def publish_configurations(cp: ControlPlane, cli: Path, packages: list[str]) -> dict[str, str]:
    """Build Configuration packages as `make package` does (tools/make_configurations.py
    --build) and push each where the ImageConfig rewrites its published reference; return
    package -> published reference."""
    out = cp.dir / "configurations"
    subprocess.run(
        [
            sys.executable,
            str(REPO / "tools/make_configurations.py"),
            "--build",
            str(out),
            f"--crossplane={cli}",
            *(f"--only={p}" for p in packages),
        ],
        check=True,
        capture_output=True,
        cwd=REPO,
    )
    refs = {}
    for package in packages:
        ref = configuration_ref(package)
        local = ref.replace(PUBLISHED_PREFIX, f"{REGISTRY}/myplatform/")
        subprocess.run(
            [str(cli), "xpkg", "push", "-f", str(out / f"{package}.xpkg"), local],
            check=True,
            capture_output=True,
        )
        refs[package] = ref
    return refs


def prepare(kube: Kube) -> None:
    """What the Helm chart creates before Crossplane's pod starts: the namespace, the service
    account, the empty TLS secrets init fills, and the webhook Service (here without a
    selector: the apiserver reaches it at its cluster IP, local in the private namespace)."""
    kube.apply({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": CROSSPLANE_NS}})
    kube.apply(
        {
            "apiVersion": "v1",
            "kind": "ServiceAccount",
            "metadata": {"name": "crossplane", "namespace": CROSSPLANE_NS},
        }
    )
    for name in TLS_ENV.values():
        if kube.get("v1", "Secret", name, CROSSPLANE_NS) is None:
            kube.apply(
                {
                    "apiVersion": "v1",
                    "kind": "Secret",
                    "metadata": {"name": name, "namespace": CROSSPLANE_NS},
                    "type": "Opaque",
                }
            )
    kube.apply(
        {
            "apiVersion": "v1",
            "kind": "Service",
            "metadata": {"name": WEBHOOK_SERVICE, "namespace": CROSSPLANE_NS},
            "spec": {
                "ports": [
                    {
                        "protocol": "TCP",
                        "port": CROSSPLANE_WEBHOOK_PORT,
                        "targetPort": CROSSPLANE_WEBHOOK_PORT,
                    }
                ]
            },
        }
    )


def _env(cp: ControlPlane, bins: dict[str, Path]) -> dict[str, str]:
    cluster = bins["crossplane-cluster"]
    return {
        "KUBECONFIG": str(cp.kubeconfig),
        "POD_NAMESPACE": CROSSPLANE_NS,
        "POD_SERVICE_ACCOUNT": "crossplane",
        "CRDS_PATH": str(cluster / "crds"),
        "WEBHOOK_CONFIGS_PATH": str(cluster / "webhookconfigurations"),
        "WEBHOOK_SERVICE_NAME": WEBHOOK_SERVICE,
        "WEBHOOK_SERVICE_NAMESPACE": CROSSPLANE_NS,
        "WEBHOOK_SERVICE_PORT": str(CROSSPLANE_WEBHOOK_PORT),
        **TLS_ENV,
    }


def write_tls(kube: Kube, secret: str, into: Path) -> None:
    """Write a TLS secret's keys as files, as the pod's secret volume would."""
    into.mkdir(parents=True, exist_ok=True)
    data = kube.get("v1", "Secret", secret, CROSSPLANE_NS).to_dict().get("data") or {}
    for key, value in data.items():
        (into / key).write_text(_b64(value))


def start(cp: ControlPlane, kube: Kube, bins: dict[str, Path]) -> dict[str, float]:
    """Run `crossplane core init` to completion, then start `crossplane core start`; return
    the seconds each took (init; start until its readiness probe answers)."""
    prepare(kube)
    env = _env(cp, bins)
    t0 = time.monotonic()
    log = cp.dir / "logs" / "crossplane-init.log"
    log.parent.mkdir(parents=True, exist_ok=True)
    # init applies the core CRDs, then objects of those kinds at once: on a fresh apiserver the
    # kinds may not be served yet ("no matches for kind"); the init container's restart covers
    # that in a pod, so retry as the kubelet would.
    rc = -1
    for attempt in range(6):
        with log.open("ab") as out:
            rc = subprocess.run(
                [str(bins["crossplane"]), "core", "init"],
                env={**os.environ, **env},
                stdout=out,
                stderr=subprocess.STDOUT,
                timeout=300,
                check=False,
            ).returncode
        if rc == 0:
            break
        time.sleep(1 + attempt)
    if rc != 0:
        raise RuntimeError(f"crossplane core init failed ({rc}):\n{log.read_text()[-3000:]}")
    init_took = time.monotonic() - t0
    tls = cp.dir / "tls"
    write_tls(kube, TLS_ENV["TLS_SERVER_SECRET_NAME"], tls / "server")
    write_tls(kube, TLS_ENV["TLS_CLIENT_SECRET_NAME"], tls / "client")
    # the pod's emptyDir volumes: the package cache must exist (an unwritable cache fails every
    # unpack with "io: read/write on closed pipe")
    for cache in ("xpkg", "xfn"):
        (cp.dir / "cache" / cache).mkdir(parents=True, exist_ok=True)
    t1 = time.monotonic()
    cp.procs.start(
        "crossplane",
        [
            str(bins["crossplane"]),
            "core",
            "start",
            f"--webhook-port={CROSSPLANE_WEBHOOK_PORT}",
            f"--metrics-port={METRICS_PORT}",
            f"--health-probe-port={HEALTH_PORT}",
            f"--cache-dir={cp.dir / 'cache' / 'xpkg'}",
            f"--xfn-cache-dir={cp.dir / 'cache' / 'xfn'}",
            # Then exactly the arguments the platform installs Crossplane with (the chart's
            # `args` value, which its deployment.yaml appends to `core start`): realtime
            # watches, the function's TTL, no poll interval, the circuit breaker sized for
            # the modules' composites (docs/crossplane.md).
            *shipped_core_args(),
        ],
        env={
            **env,
            "TLS_SERVER_CERTS_DIR": str(tls / "server"),
            "TLS_CLIENT_CERTS_DIR": str(tls / "client"),
        },
    )

    wait_ready(cp)
    return {"init": init_took, "start": time.monotonic() - t1}


#: How the platform installs Crossplane: the GitOps tree's HelmRelease, whose `values.args` the
#: README's `helm install` repeats (tests/test_install_examples.py keeps them equal).
CROSSPLANE_HELMRELEASE = REPO / "examples/openstack/apps/crossplane/helmrelease.yaml"


def shipped_core_args(release: Path = CROSSPLANE_HELMRELEASE) -> list[str]:
    """The chart `args` the platform installs Crossplane with (`core start` gets them after
    the chart's own: cluster/charts/crossplane/templates/deployment.yaml at v2.4.0).
    LIVE_CORE_ARGS (space separated) replaces them, only to measure another setting
    (bench/results.md "Watch events")."""
    override = os.environ.get("LIVE_CORE_ARGS")
    if override is not None:
        return override.split()
    (doc,) = docs_of(release)
    return [str(a) for a in (doc["spec"].get("values") or {}).get("args") or []]


def wait_ready(cp: ControlPlane) -> None:
    """Wait until `crossplane core start` answers its readiness probe."""

    def ready() -> bool:
        with urllib.request.urlopen(f"http://127.0.0.1:{HEALTH_PORT}/readyz", timeout=2) as r:
            return bool(r.status == 200)

    wait_for("crossplane readyz", ready, 120, cp.procs)


def restart(cp: ControlPlane) -> float:
    """Restart `crossplane core start` (as its pod restarting would); the seconds to ready."""
    t = time.monotonic()
    cp.procs.restart("crossplane")
    wait_ready(cp)
    return time.monotonic() - t


def install_function(kube: Kube) -> None:
    """The ImageConfig that points the published reference at the local registry, then
    examples/install/40-function.yaml as a user applies it."""
    kube.apply(
        {
            "apiVersion": "pkg.crossplane.io/v1beta1",
            "kind": "ImageConfig",
            "metadata": {"name": "function-platform-local-registry"},
            "spec": {
                "matchImages": [{"type": "Prefix", "prefix": PUBLISHED_PREFIX}],
                "rewriteImage": {"prefix": f"{REGISTRY}/myplatform/"},
            },
        }
    )
    kube.apply_all(docs_of(REPO / "examples/install/40-function.yaml"))


def function_status(kube: Kube) -> dict[str, Any]:
    """The Function's status (conditions), for messages."""
    fn = kube.get("pkg.crossplane.io/v1", "Function", "function-platform")
    return dict((fn.to_dict().get("status") or {}) if fn else {})
