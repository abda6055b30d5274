#!/usr/bin/env python3
"""`make playground` / `make playground-down`: the live control plane of `make test-live`
(docs/live.md) left running in the background with one module installed from its Configuration
package, for a user's own kubectl (docs/playground.md).

    tools/live/playground.py up [--module async-actor] [--form v1-claims|v2-namespaced]
    tools/live/playground.py down

The plane runs as the live tests run it: the same binaries, the same stand-ins, in a private
network, mount and PID namespace made by tools/live/netns.sh (its fixed ports, its Service
cluster IPs on the namespace's loopback, its private /etc/hosts). A user's kubectl on the host
reaches the API server through one port: ``up`` binds a free port on 127.0.0.1 in the caller's
namespace *before* the private namespace exists, the socket is inherited across ``unshare``,
and the supervisor inside accepts on it and relays each connection to the API server at
127.0.0.1:6443 in the private namespace (a socket stays in the namespace it was created in).
So the printed kubeconfig works for any kubectl and for `crossplane resource trace`, nothing
else of the plane is reachable from outside, and nothing about the plane changes for the
playground.

The supervisor (``serve``, run only by ``up``) is the namespace's init: when it ends, however
it ends, the kernel ends every process of the plane. State lives in ``.playground/`` of the
checkout (PLAYGROUND_DIR elsewhere): the user's kubeconfig, the supervisor's state and log, and
``plane/``, the run directory the live tests would use (logs/, pki/, etcd/, caches).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import threading
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

REPO = Path(__file__).resolve().parents[2]
sys.path[:0] = [str(REPO), str(REPO / "platform")]

DEFAULT_MODULE = "async-actor"
#: The forms a module's package comes in (tests/live/layers.py FORMS): the v1 claims package
#: platform-<module>, or the namespaced (Crossplane v2) one platform-<module>-namespaced.
FORMS = ("v1-claims", "v2-namespaced")
#: How long `up` waits for the plane: a cold start is about a minute and a half (binaries
#: built; docs/playground.md); the first package builds may take longer on a busy machine.
START_WITHIN_S = 600.0
#: How long `down` gives the supervisor to stop the plane (each process SIGTERM, then SIGKILL
#: after 10 s: tests/live/controlplane.py Processes.stop) before it kills the namespace.
STOP_WITHIN_S = 40.0
#: How long the printed `kubectl wait` waits for Ready: a user's command, so generous (the
#: live tests allow 150 s; tests/live/test_live_examples.py READY_WITHIN_S).
WAIT_READY = "300s"
#: Modules the playground cannot show: openstack's tenants wait on shared pools the live plane
#: cannot make Ready (docs/live.md, "Under load and faults"), so its claims never are.
UNSUPPORTED = {
    "openstack": "its tenants wait on pools the live plane cannot make Ready "
    '(docs/live.md, "Under load and faults")'
}


@dataclass(frozen=True)
class Paths:
    """Where a playground keeps its state (docs/playground.md, "State and logs")."""

    root: Path

    @property
    def kubeconfig(self) -> Path:
        """The user's kubeconfig: the forwarded port on 127.0.0.1, the admin token."""
        return self.root / "kubeconfig"

    @property
    def state(self) -> Path:
        """What the supervisor reports: phase, step, module, port, timings."""
        return self.root / "state.json"

    @property
    def pid(self) -> Path:
        """The pid of the launcher (tools/live/netns.sh) in the caller's namespace."""
        return self.root / "pid"

    @property
    def log(self) -> Path:
        """The supervisor's own output (each step, a process exiting, a traceback)."""
        return self.root / "playground.log"

    @property
    def plane(self) -> Path:
        """The control plane's run directory (logs/ of every process, pki/, etcd/, caches)."""
        return self.root / "plane"

    @property
    def tmp(self) -> Path:
        """TMPDIR of tools/live/netns.sh (its private /etc/hosts copy)."""
        return self.root / "tmp"

    #: what `down` keeps: the logs of the run it stopped
    def kept(self) -> list[Path]:
        return [self.log, self.plane / "logs"]


def paths() -> Paths:
    return Paths(Path(os.environ.get("PLAYGROUND_DIR") or REPO / ".playground").resolve())


def read_state(p: Paths) -> dict[str, Any]:
    try:
        return dict(json.loads(p.state.read_text()))
    except (OSError, ValueError):
        return {}


# --- processes, as the caller's namespace sees them ------------------------------------------


def _stat(pid: int) -> tuple[str, int] | None:
    """(state letter, parent pid) of a process, or None when there is none."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    fields = text[text.rindex(")") + 2 :].split()  # after "pid (comm) "
    return fields[0], int(fields[1])


def alive(pid: int) -> bool:
    """The process exists and is no zombie (an exited child its parent has not reaped)."""
    st = _stat(pid)
    return st is not None and st[0] not in ("Z", "X")


def descendants(pid: int) -> list[int]:
    """Every live process below ``pid`` (through the private PID namespace: its processes
    are visible, with their own pids, in the caller's namespace)."""
    children: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            st = _stat(int(entry.name))
            if st is not None and st[0] not in ("Z", "X"):
                children.setdefault(st[1], []).append(int(entry.name))
    out: list[int] = []
    todo = [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            out.append(child)
            todo.append(child)
    return out


def _argv(pid: int) -> list[str]:
    try:
        return Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace").split("\0")
    except OSError:
        return []


def describe(pid: int) -> str:
    """What a process is, for `down`'s report: its program (and an interpreter's script or
    module, and its first argument: `python -m function`, `python playground.py serve`)."""
    argv = _argv(pid)
    if not argv:
        return "?"
    name = Path(argv[0]).name
    if name.startswith(("python", "bash", "sh")) and len(argv) > 1:
        rest = argv[1:3] if argv[1] == "-m" else [Path(argv[1]).name, *argv[2:3]]
        if name.startswith(("bash", "sh")):
            rest = rest[:1]
        name = f"{name} {' '.join(rest)}"
    return name


def is_supervisor(pid: int) -> bool:
    """The process is `python tools/live/playground.py serve` (not a launcher naming it)."""
    argv = _argv(pid)
    return (
        len(argv) > 2
        and Path(argv[0]).name.startswith("python")
        and argv[1].endswith("playground.py")
        and argv[2] == "serve"
    )


def net_namespace(pid: int) -> str | None:
    """The network namespace of a process (``net:[inode]``), or None when it is gone."""
    try:
        return str(Path(f"/proc/{pid}/ns/net").readlink())
    except OSError:
        return None


def in_namespace(netns: str) -> list[int]:
    """Every live process in the network namespace ``netns``."""
    out = []
    for entry in Path("/proc").iterdir():
        if (
            entry.name.isdigit()
            and alive(int(entry.name))
            and net_namespace(int(entry.name)) == netns
        ):
            out.append(int(entry.name))
    return out


def running(p: Paths) -> int | None:
    """The launcher's pid when this directory's playground runs, else None."""
    try:
        pid = int(p.pid.read_text())
    except (OSError, ValueError):
        return None
    return pid if alive(pid) else None


# --- up ------------------------------------------------------------------------------------


def claim_of(module: str, form: str) -> tuple[Path, dict[str, Any]]:
    """The example a user applies (test_live_examples.EXAMPLES: the one the live tests
    apply), as a path relative to the checkout and its document."""
    from tests.live.kube import docs_of
    from tests.live.test_live_examples import EXAMPLES

    (example,) = [e for e in EXAMPLES if e.module == module]
    path = example.v1 if form == "v1-claims" else example.v2
    if path is None:
        raise SystemExit(f"playground: {module} has no {form} example in examples/")
    (doc,) = docs_of(REPO / path)
    return Path(path), doc


def next_commands(p: Paths, module: str, form: str) -> list[str]:
    """The commands `up` prints: apply the example, wait for Ready, trace, delete, stop."""
    from tests.live.crossplane import package_xrds

    path, doc = claim_of(module, form)
    group = doc["apiVersion"].split("/")[0]
    # the kind's plural, as the module's XRD names it (the claim's or the composite's)
    (plural,) = [
        names["plural"]
        for xrd in package_xrds(module, form == "v2-namespaced")
        for names in (xrd["spec"]["names"], xrd["spec"].get("claimNames") or {})
        if xrd["spec"]["group"] == group and names.get("kind") == doc["kind"]
    ]
    ns = doc["metadata"].get("namespace")
    ref = f"{plural}.{group}/{doc['metadata']['name']}"
    in_ns = f"-n {ns} " if ns else ""
    return [
        f"export KUBECONFIG={p.kubeconfig}",
        f"kubectl apply -f {path}",
        f"kubectl wait {in_ns}--for=condition=Ready --timeout={WAIT_READY} {ref}",
        f".bin/crossplane resource trace {in_ns}{ref}",
        f"kubectl delete -f {path}",
        "make playground-down",
    ]


def report(p: Paths, state: dict[str, Any], took: float | None) -> None:
    """The kubeconfig, where the logs are and the next commands (took: seconds since `up`
    began; None: it was running already)."""
    module, form = state["module"], state["form"]
    head = (
        "A playground is already running" if took is None else f"Playground ready in {took:.0f} s"
    )
    rel = os.path.relpath(p.root, Path.cwd())
    print(
        f"{head}: {module} ({form}) from its Configuration package {state['package']}\n"
        f"  kubeconfig: {p.kubeconfig}  (API server https://127.0.0.1:{state['port']})\n"
        f"  logs:       {rel}/plane/logs/<process>.log, {rel}/playground.log\n"
        f"Next, from {Path.cwd()}:"
    )
    for line in next_commands(p, module, form):
        print(f"  {line}")
    print("  (change it: edit the file and apply it again, or kubectl edit; docs/playground.md)")


def wait_until_ready(
    p: Paths, launcher: subprocess.Popen[bytes] | None, pid: int, start: float
) -> int:
    """Print the supervisor's steps as they come until it is ready (0) or failed (1)."""
    shown = ""
    while time.monotonic() - start < START_WITHIN_S:
        state = read_state(p)
        if state.get("step") and state["step"] != shown:
            shown = state["step"]
            print(f"  [{time.monotonic() - start:5.1f} s] {shown}", flush=True)
        if state.get("phase") == "ready":
            # a second `up` that waited: the supervisor's own time since it started
            report(p, state, time.monotonic() - start if launcher else state.get("ready_s"))
            return 0
        exited = launcher.poll() is not None if launcher else not alive(pid)
        if state.get("phase") == "stopped" or (exited and not p.pid.exists()):
            print("playground: stopped while starting (make playground-down)", file=sys.stderr)
            return 1
        if state.get("phase") == "failed" or exited:
            why = state.get("error") or "the supervisor exited"
            tail = p.log.read_text(errors="replace")[-4000:] if p.log.exists() else ""
            print(f"playground: failed: {why}\n--- {p.log} (tail)\n{tail}", file=sys.stderr)
            down(p, quiet=True)
            return 1
        time.sleep(0.5)
    print(
        f"playground: not ready within {START_WITHIN_S:.0f} s; stopping it (see {p.log})",
        file=sys.stderr,
    )
    down(p, quiet=True)
    return 1


def up(p: Paths, module: str | None, form: str | None) -> int:
    """Start a playground (or, when one runs, say so and print its kubeconfig again)."""
    pid = running(p)
    if pid is not None:
        return _running_already(p, pid, module, form)
    module = module or DEFAULT_MODULE
    form = form or FORMS[0]
    known = sorted(d.name for d in (REPO / "apis").iterdir() if d.is_dir())
    refusal = (
        f"MODULE={module} is no module (one of: {', '.join(known)})"
        if module not in known
        else f"MODULE={module} cannot be shown here: {UNSUPPORTED[module]}"
        if module in UNSUPPORTED
        else ""
    )
    if refusal:
        print(f"playground: {refusal}", file=sys.stderr)
        return 2
    claim_of(module, form)  # the example exists before anything starts
    return _launch(p, module, form)


def _running_already(p: Paths, pid: int, module: str | None, form: str | None) -> int:
    """A second `up`: the running playground's kubeconfig and commands again (after waiting
    for it if it is still starting); another module or form asked for is refused."""
    state = read_state(p)
    want = (module or state.get("module"), form or state.get("form"))
    if state.get("module") and want != (state["module"], state["form"]):
        print(
            f"playground: {state['module']} ({state['form']}) is running in {p.root}; "
            "`make playground-down` first to start another module or form",
            file=sys.stderr,
        )
        return 1
    if state.get("phase") == "ready":
        report(p, state, None)
        return 0
    print(f"A playground is starting in {p.root} (pid {pid}); waiting for it:")
    return wait_until_ready(p, None, pid, time.monotonic())


def _launch(p: Paths, module: str, form: str) -> int:
    """Start the supervisor in a private namespace (tools/live/netns.sh) in the background,
    with the host-side listening socket; wait until it is ready."""
    start = time.monotonic()
    shutil.rmtree(p.root, ignore_errors=True)  # a stopped or crashed run's leftovers
    p.tmp.mkdir(parents=True)
    # The one port the host reaches: bound here, in the caller's network namespace, and
    # inherited by the supervisor inside the private one (module docstring).
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", 0))
    listener.listen(64)
    port = listener.getsockname()[1]
    # a namespace of its own even when called inside another (the live tests' netns.sh):
    # its fixed ports must not meet a test session's plane
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("FNPLATFORM_LIVE_NETNS", "FNPLATFORM_LIVE_HOSTS")
    }
    env["TMPDIR"] = str(p.tmp)
    print(
        f"Starting a playground of {module} ({form}) in {p.root} (API server on 127.0.0.1:{port}):",
        flush=True,
    )
    with p.log.open("ab") as log:
        launcher = subprocess.Popen(
            [
                str(REPO / "tools/live/netns.sh"),
                sys.executable,
                str(Path(__file__).resolve()),
                "serve",
                "--module",
                module,
                "--form",
                form,
                "--listen-fd",
                str(listener.fileno()),
            ],
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            env=env,
            pass_fds=(listener.fileno(),),
            start_new_session=True,
            cwd=REPO,
        )
    listener.close()
    p.pid.write_text(f"{launcher.pid}\n")
    try:
        return wait_until_ready(p, launcher, launcher.pid, start)
    except KeyboardInterrupt:
        print("\ninterrupted: stopping the playground", file=sys.stderr)
        down(p, quiet=True)
        return 130


# --- down ----------------------------------------------------------------------------------


def down(p: Paths, quiet: bool = False) -> int:
    """Stop the playground (every process, its namespaces) and remove its state but the logs;
    say what was stopped. Nothing running: says so, removes leftovers, succeeds. Everything
    is done before the report is printed: a closed stdout cannot leave it half done."""
    pid = running(p)
    lines: list[str] = []
    left = False
    if pid is None:
        lines.append(f"No playground running in {p.root}.")
    else:
        with contextlib.suppress(OSError):
            print(
                f"Stopping the playground in {p.root} ({read_state(p).get('module', '?')}):",
                flush=True,
            )
        left, stopped = _stop(pid)
        lines += stopped
    if not left:
        removed = _remove_state(p)
        kept = ", ".join(os.path.relpath(k, p.root) for k in p.kept() if k.exists())
        if removed:
            lines.append(
                f"  removed  {', '.join(removed)} from {p.root}"
                + (f" (kept: {kept})" if kept else "")
            )
    if not quiet or left:
        with contextlib.suppress(BrokenPipeError):  # `make playground-down | head`
            print("\n".join(lines))
    if left:
        print("playground: processes left running (above)", file=sys.stderr)
    return 1 if left else 0


def _stop(pid: int) -> tuple[bool, list[str]]:
    """SIGTERM the supervisor (it stops the plane and exits: the namespaces go with it), and
    SIGKILL it after STOP_WITHIN_S (the kernel then kills every process of its PID
    namespace). Whether anything is left, and a line per process and for the namespace."""
    tree = [pid, *descendants(pid)]
    names = {t: describe(t) for t in tree}
    supervisor = next((t for t in tree if is_supervisor(t)), None)
    netns = net_namespace(supervisor) if supervisor else None
    if supervisor is not None:
        os.kill(supervisor, signal.SIGTERM)
    deadline = time.monotonic() + STOP_WITHIN_S
    while alive(pid) and time.monotonic() < deadline:
        time.sleep(0.2)
    if any(alive(t) for t in tree):
        for t in [supervisor, *tree]:
            if t is not None and alive(t):
                with contextlib.suppress(ProcessLookupError):
                    os.kill(t, signal.SIGKILL)
        deadline = time.monotonic() + 10
        while any(alive(t) for t in tree) and time.monotonic() < deadline:
            time.sleep(0.2)
    left = [t for t in tree if alive(t)]
    lines = [f"  {'LEFT RUNNING' if t in left else 'stopped'}  {names[t]} (pid {t})" for t in tree]
    stuck = in_namespace(netns) if netns else []
    if netns:
        lines.append(
            f"  {'LEFT: ' + str(stuck) if stuck else 'gone'}  its network, mount and "
            f"PID namespaces ({netns})"
        )
    return bool(left or stuck), lines


def _remove_state(p: Paths) -> list[str]:
    """Remove everything of the directory but the logs (Paths.kept); the names removed."""
    if not p.root.is_dir():
        return []
    kept = {k.resolve() for k in p.kept()}
    removed = []
    for entry in sorted(p.root.iterdir()):
        if entry.resolve() in kept:
            continue
        if entry == p.plane:
            for sub in sorted(entry.iterdir()):
                if sub.resolve() not in kept:
                    _rm(sub)
                    removed.append(f"plane/{sub.name}")
            continue
        _rm(entry)
        removed.append(entry.name)
    return removed


def _rm(path: Path) -> None:
    if path.is_dir() and not path.is_symlink():
        shutil.rmtree(path, ignore_errors=True)
    else:
        path.unlink(missing_ok=True)


# --- serve: the supervisor, inside the private namespace -----------------------------------


class Stopped(BaseException):
    """SIGTERM from `down`: stop the plane and exit."""


def _relay(source: socket.socket, sink: socket.socket) -> None:
    """Copy bytes one way until the source ends, then end the sink's sending side."""
    try:
        while data := source.recv(65536):
            sink.sendall(data)
    except OSError:
        pass
    finally:
        with contextlib.suppress(OSError):
            sink.shutdown(socket.SHUT_WR)


def _bridge(client: socket.socket, upstream: tuple[str, int]) -> None:
    """One connection from the host, relayed to the API server in this namespace."""
    with client:
        try:
            server = socket.create_connection(upstream, timeout=10)
        except OSError:
            return
        with server:
            server.settimeout(None)
            back = threading.Thread(target=_relay, args=(server, client), daemon=True)
            back.start()
            _relay(client, server)
            back.join()


def forward(listener: socket.socket, upstream: tuple[str, int]) -> None:
    """Accept on the inherited host-side socket; relay each connection to ``upstream``
    (sockets made here are in the private namespace: the API server's loopback)."""
    while True:
        client, _ = listener.accept()
        threading.Thread(target=_bridge, args=(client, upstream), daemon=True).start()


def user_kubeconfig(internal: Path, port: int) -> str:
    """The plane's admin kubeconfig, pointed at the forwarded port on 127.0.0.1, with the CA
    inline (the file stands alone). The API server's certificate names 127.0.0.1 (any port)."""
    import base64

    import yaml

    config = yaml.safe_load(internal.read_text())
    for cluster in config["clusters"]:
        c = cluster["cluster"]
        c["server"] = f"https://127.0.0.1:{port}"
        ca = Path(c.pop("certificate-authority")).read_bytes()
        c["certificate-authority-data"] = base64.b64encode(ca).decode()
        cluster["name"] = "playground"
    for context in config["contexts"]:
        context["name"] = "playground"
        context["context"]["cluster"] = "playground"
    config["current-context"] = "playground"
    return yaml.safe_dump(config, sort_keys=False)


def needs_crd(package: str) -> Callable[[str], bool]:
    """Which CRDs of tests/live/crds the package's module needs: of the providers' managed
    kinds only those its ManagedResourceActivationPolicy activates (what it composes), and
    everything else (the ProviderConfig kinds examples/install applies, the operators' kinds
    its Objects hold): 24 of the 239 for async-actor. Applying and establishing all of
    them is most of a start on a busy machine (docs/playground.md, "Measured")."""
    from tests.live.kube import docs_of
    from tests.live.providers import CLOUD_SUFFIXES

    (policy,) = docs_of(REPO / "configurations" / package / "activation-policy.yaml")
    activated = set(policy["spec"]["activate"])

    def wanted(name: str) -> bool:
        plural, group = name.split(".", 1)
        managed = group.endswith(CLOUD_SUFFIXES) and "providerconfig" not in plural
        return not managed or name in activated

    return wanted


def install_module(live: Any, module: str, form: str) -> None:
    """The module's Configuration package built and published as the live tests do
    (tests/live/test_live_configuration.py), installed, Healthy, its XRDs serving; then what
    its example needs first (test_live_examples.EXAMPLES: EnvironmentConfigs, what its docs
    tell a user to create) and the example's namespace."""
    from tests.live import crossplane as xp
    from tests.live.kube import docs_of, is_true, xrd_serving
    from tests.live.layers import XRD
    from tests.live.test_live_examples import EXAMPLES

    kube = live.kube
    namespaced = form == "v2-namespaced"
    package = f"platform-{module}" + ("-namespaced" if namespaced else "")
    refs = xp.publish_configurations(live.cp, REPO / ".bin/crossplane", [package])
    kube.apply(xp.configuration(package, refs[package]))

    def healthy() -> bool:
        obj = kube.get(*xp.CONFIGURATION, package)
        return is_true(obj, "Healthy") and is_true(obj, "Installed")

    live.wait(f"Configuration {package} Healthy", healthy, 180)
    xrds = xp.package_xrds(module, namespaced)
    live.wait(
        f"{package} XRDs Established",
        lambda: all(xrd_serving(kube.get(*XRD, d["metadata"]["name"]), d) for d in xrds),
        180,
    )
    kube.invalidate()
    (example,) = [e for e in EXAMPLES if e.module == module]
    _, claim = claim_of(module, form)
    for doc in [
        *[d for need in example.needs for d in docs_of(REPO / need)],
        *example.prepared,
        claim,
    ]:
        ns = doc["metadata"].get("namespace")
        if ns:
            kube.apply({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})
        if doc is not claim:
            kube.apply(doc)


class Supervisor:
    """What runs inside the private namespace: starts the plane and the module step by step,
    reporting each in state.json (which `up` prints), then watches the processes."""

    def __init__(self, p: Paths, module: str, form: str, port: int) -> None:
        self.paths = p
        self.port = port
        self.live: Any = None  # tests.live.layers.Live, once the control plane runs
        self.t0 = time.monotonic()
        package = f"platform-{module}" + ("-namespaced" if form == "v2-namespaced" else "")
        self.state: dict[str, Any] = {
            "phase": "starting",
            "module": module,
            "form": form,
            "package": package,
            "port": port,
            "started": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        }

    def step(self, text: str) -> None:
        """Record a step (state.json, written whole and renamed: `up` never reads half)."""
        took = round(time.monotonic() - self.t0, 1)
        self.state["step"] = text
        self.state.setdefault("steps", []).append([took, text])
        tmp = self.paths.state.with_suffix(".tmp")
        tmp.write_text(json.dumps(self.state, indent=2))
        tmp.replace(self.paths.state)
        print(f"[{took:6.1f} s] {text}", flush=True)

    def start(self, listener: socket.socket) -> None:
        """The live tests' layers in their order (tests/live/layers.py), then the module;
        the user's kubeconfig is written last: it exists once the playground is ready."""
        from tests.live.controlplane import APISERVER
        from tests.live.layers import (
            establish_provider_crds,
            start_control_plane,
            start_crossplane,
            start_providers,
        )

        module, form = self.state["module"], self.state["form"]
        self.step("etcd, kube-apiserver, kube-controller-manager")
        self.live = start_control_plane(self.paths.plane)
        api = urlsplit(APISERVER)
        threading.Thread(
            target=forward, args=(listener, (api.hostname, api.port)), name="forward", daemon=True
        ).start()
        self.step("Crossplane core, the package registry, the function (kubelet stand-in)")
        start_crossplane(self.live)
        self.step("the CRDs of what the module composes (tests/live/crds)")
        establish_provider_crds(self.live, needs_crd(self.state["package"]))
        self.step("provider-kubernetes, the cloud and operator stand-ins, the ProviderConfigs")
        start_providers(self.live)
        self.step(
            f"{self.state['package']}: built, pushed to the local registry, installed "
            "as a Configuration"
        )
        install_module(self.live, module, form)
        self.paths.kubeconfig.write_text(user_kubeconfig(self.live.cp.kubeconfig, self.port))
        self.state["phase"] = "ready"
        self.state["ready_s"] = round(time.monotonic() - self.t0, 1)
        self.step(f"ready in {self.state['ready_s']:.0f} s")

    def watch(self) -> None:
        """Keep running; say in the log when a process of the plane exits (the kubelet
        stand-in restarts the function's replicas itself)."""
        exited: set[str] = set()
        while True:
            time.sleep(2)
            for name, proc in list(self.live.procs.running):
                if proc.poll() is not None and name not in exited:
                    exited.add(name)
                    print(
                        f"{name} exited with {proc.returncode}: see plane/logs/{name}.log",
                        flush=True,
                    )

    def fail(self, error: Exception) -> None:
        traceback.print_exc()
        self.state["phase"] = "failed"
        self.state["error"] = f"{type(error).__name__}: {error}".splitlines()[0][:500]
        self.step(f"failed: {self.state['error']}")

    def stop(self) -> None:
        from tests.live.layers import stop

        if self.live is not None:
            stop(self.live)
        print("stopped", flush=True)


def serve(p: Paths, module: str, form: str, listen_fd: int) -> int:
    """The supervisor's life: start, then run until SIGTERM (`down`), then stop the plane."""

    def on_term(_signum: int, _frame: Any) -> None:
        raise Stopped

    # the namespace's init: a signal it has no handler for is not delivered at all
    signal.signal(signal.SIGTERM, on_term)
    signal.signal(signal.SIGINT, on_term)
    listener = socket.socket(fileno=listen_fd)
    supervisor = Supervisor(p, module, form, listener.getsockname()[1])
    try:
        supervisor.start(listener)
        supervisor.watch()
    except Stopped:
        supervisor.state["phase"] = "stopped"
        supervisor.step("stopping (SIGTERM: make playground-down)")
    except Exception as e:
        supervisor.fail(e)
        return 1
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        supervisor.stop()
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    up_cmd = sub.add_parser("up", help="start a playground, or print the running one's kubeconfig")
    up_cmd.add_argument("--module", default=None, help=f"the module (default {DEFAULT_MODULE})")
    up_cmd.add_argument(
        "--form",
        default=None,
        choices=FORMS,
        help=f"which package of the module (default {FORMS[0]})",
    )
    sub.add_parser("down", help="stop the playground and remove its state but the logs")
    serve_cmd = sub.add_parser("serve", help=argparse.SUPPRESS)
    serve_cmd.add_argument("--module", required=True)
    serve_cmd.add_argument("--form", required=True, choices=FORMS)
    serve_cmd.add_argument("--listen-fd", type=int, required=True)
    args = parser.parse_args(argv)
    p = paths()
    if args.command == "up":
        return up(p, args.module or None, args.form or None)
    if args.command == "down":
        return down(p)
    return serve(p, args.module, args.form, args.listen_fd)


if __name__ == "__main__":
    sys.exit(main())
