"""Stand-ins for what cannot run on this machine, kept small and named as stand-ins.

- KubeletStandIn: there is no kubelet, scheduler or container runtime. It plays them for
  Deployments and Jobs: a Deployment of the function's own package (the one Crossplane's
  package runtime creates) is run as a local process of this checkout (or of the source tree
  given for the package's version: ``run_release``), with the TLS secret its pod would mount;
  every other Deployment/Job becomes available only when every ConfigMap, Secret,
  ServiceAccount and PersistentVolumeClaim its pods name exists, else it reports the pod's
  CreateContainerConfigError as a kubelet does. For the Job scripts this repository ships, it
  does what the script does (_what_the_containers_write), against the stand-ins
  the script would call (the openstack refresher: the garden's shoots/adminkubeconfig).

Each stand-in is a polling loop on a thread (1 s): simple, and fast enough for these tests.
"""

from __future__ import annotations

import base64
import os
import signal
import socket
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

from tests.live.controlplane import ADMIN_TOKEN, REPO, Processes, add_hosts, remove_hosts
from tests.live.kube import Kube, View

FUNCTION_IMAGE_REPO = "/function-platform"  # the package (and runtime) image of this function
GRPC_PORT = 9443  # Crossplane's function runtime port (internal/controller/pkg/runtime)
#: What the function's pods run: this checkout's function, or (LIVE_FUNCTION=floor, for
#: `make bench-scale`) the do-nothing floor composing one Object per composite
FUNCTION_PROGRAM = {
    "function-platform": ("-m", "function"),
    "floor": (str(REPO / "bench/floor_live.py"),),
}
#: Where the function serves its metrics here (README "Metrics"; 8080 in a real pod).
METRICS_PORT = 9102


class Loop:
    """Run step() every period seconds on a daemon thread until stop(); errors are kept."""

    def __init__(self, name: str, step: Callable[[], None], period: float = 1.0) -> None:
        self.name = name
        self.errors: list[str] = []
        self._step = step
        self._period = period
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name=name, daemon=True)

    def start(self) -> None:
        """Start the loop."""
        self._thread.start()

    def stop(self) -> None:
        """Stop the loop and wait for its thread."""
        self._stop.set()
        self._thread.join(10)

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                self._step()
            except Exception as e:
                self.errors.append(f"{type(e).__name__}: {e}")
                del self.errors[:-20]
            self._stop.wait(self._period)


def _listening(host: str, port: int) -> bool:
    with socket.socket() as s:
        s.settimeout(0.5)
        return s.connect_ex((host, port)) == 0


def pod_references(spec: dict[str, Any]) -> list[tuple[str, str]]:
    """(kind, name) of every ConfigMap, Secret, ServiceAccount and PVC a pod spec names: what
    the kubelet must find before it starts the containers (optional references excepted)."""
    refs: list[tuple[str, str]] = []
    sa = spec.get("serviceAccountName")
    if sa:
        refs.append(("ServiceAccount", sa))
    for v in spec.get("volumes") or []:
        if v.get("secret") and not v["secret"].get("optional"):
            refs.append(("Secret", v["secret"]["secretName"]))
        if v.get("configMap") and not v["configMap"].get("optional"):
            refs.append(("ConfigMap", v["configMap"]["name"]))
        if v.get("persistentVolumeClaim"):
            refs.append(("PersistentVolumeClaim", v["persistentVolumeClaim"]["claimName"]))
        for src in (v.get("projected") or {}).get("sources") or []:
            if src.get("secret") and not src["secret"].get("optional"):
                refs.append(("Secret", src["secret"]["name"]))
            if src.get("configMap") and not src["configMap"].get("optional"):
                refs.append(("ConfigMap", src["configMap"]["name"]))
    for c in (spec.get("initContainers") or []) + (spec.get("containers") or []):
        for ef in c.get("envFrom") or []:
            for kind, key in (("Secret", "secretRef"), ("ConfigMap", "configMapRef")):
                if ef.get(key) and not ef[key].get("optional"):
                    refs.append((kind, ef[key]["name"]))
        for e in c.get("env") or []:
            vf = e.get("valueFrom") or {}
            for kind, key in (("Secret", "secretKeyRef"), ("ConfigMap", "configMapKeyRef")):
                if vf.get(key) and not vf[key].get("optional"):
                    refs.append((kind, vf[key]["name"]))
    return list(dict.fromkeys(refs))


class KubeletStandIn:
    """Plays kubelet + scheduler + kube-proxy/DNS for Deployments and Jobs (see the module doc)."""

    MANAGER = "kubelet-stand-in"

    def __init__(self, kube: Kube, procs: Processes, workdir: Path) -> None:
        self.kube = kube
        self.procs = procs
        self.workdir = workdir
        #: namespace/name of a run Deployment -> its replicas' addresses (replica i: [i])
        self.running: dict[str, list[str]] = {}
        self.errors: list[str] = []  # what the scripts it plays failed with (last 20)
        self.down_until = 0.0  # hold(): no replica starts before this (time.monotonic())
        #: what the function's replicas run (FUNCTION_PROGRAM); run_as() changes it
        self.program = os.environ.get("LIVE_FUNCTION", "function-platform")
        #: package version (the image's tag) -> the source tree its pods run (run_release);
        #: a version not listed runs this checkout
        self.releases: dict[str, Path] = {}
        #: namespace/name of a run Deployment -> the source tree its replicas were started from
        self._trees: dict[str, Path] = {}
        self._next_address = 9
        #: the garden the openstack refresher's pods call (GardenerStandIn), if any
        self.garden: Any = None
        self.loop = Loop("kubelet-stand-in", self.step)

    def step(self) -> None:
        """One pass over every Deployment and Job, read from their informers (the kubelet and
        the Deployment and Job controllers watch, they do not list once a second)."""
        deployments = self.kube.cached("apps/v1", "Deployment").items()
        for d in deployments:
            self.deployment(d)
        present = {f"{d['metadata']['namespace']}/{d['metadata']['name']}" for d in deployments}
        for key in [k for k in self.running if k not in present]:
            self.forget(key)
        for j in self.kube.cached("batch/v1", "Job").items():
            self.job(j)

    def missing(self, namespace: str, spec: dict[str, Any]) -> list[str]:
        """'Kind/name' of what the pod spec names and the namespace lacks."""
        return [
            f"{kind}/{name}"
            for kind, name in pod_references(spec)
            if self.kube.cached("v1", kind).get(name, namespace) is None
        ]

    def deployment(self, d: dict[str, Any]) -> None:
        """Run or check one Deployment and report its status as the Deployment controller."""
        meta, spec = d["metadata"], d["spec"]
        ns = meta["namespace"]
        pod = spec["template"]["spec"]
        replicas = spec.get("replicas", 1)
        missing = self.missing(ns, pod)
        if missing:
            # kubelet: "Error: secret \"x\" not found" with reason CreateContainerConfigError
            kind, ref = missing[0].split("/", 1)
            self._deployment_status(
                d,
                0,
                "False",
                "MinimumReplicasUnavailable",
                f'CreateContainerConfigError: {kind.lower()} "{ref}" not found',
            )
            return
        image = pod["containers"][0].get("image", "")
        if FUNCTION_IMAGE_REPO in image.rsplit(":", 1)[0]:
            addresses = self.run_function(d)
            up = sum(1 for a in addresses if _listening(a, GRPC_PORT))
            self._deployment_status(
                d,
                up,
                "True" if up else "False",
                "MinimumReplicasAvailable" if up else "MinimumReplicasUnavailable",
                "Deployment has minimum availability." if up else "function starting",
            )
            return
        self._deployment_status(
            d, replicas, "True", "MinimumReplicasAvailable", "Deployment has minimum availability."
        )

    def addresses(self) -> list[str]:
        """Every running replica's address, of every function Deployment."""
        return [a for replicas in self.running.values() for a in replicas]

    def replica_names(self, key: str) -> list[str]:
        """The process names of a Deployment's replicas (``namespace/name``), in order."""
        name = key.split("/", 1)[1]
        return [f"function-{name}-{i}" for i in range(len(self.running.get(key, [])))]

    def hold(self, seconds: float) -> None:
        """Take every function replica down and start none for ``seconds`` (a node outage):
        afterwards the next pass starts them again."""
        self.down_until = time.monotonic() + seconds
        for key in self.running:
            for name in self.replica_names(key):
                self.procs.kill(name)

    def run_as(self, program: str) -> None:
        """Run the function's replicas as ``program`` (FUNCTION_PROGRAM) from now: every
        replica is stopped and the next pass starts it so (a new image rolled out)."""
        self.program = program
        for key in self.running:
            for name in self.replica_names(key):
                self.procs.kill(name, signal.SIGTERM)

    def forget(self, key: str) -> None:
        """A Deployment deleted (a FunctionRevision made inactive on an upgrade): its pods
        stop and leave the Services that selected them."""
        for index, address in enumerate(self.running.pop(key, [])):
            remove_hosts(address)
            self.procs.kill(f"function-{key.split('/', 1)[1]}-{index}", signal.SIGTERM)
        self._trees.pop(key, None)

    def run_release(self, version: str, tree: Path | None) -> None:
        """Run the pods of the function package at ``version`` from ``tree`` (``git archive``
        of that release: its ``function/`` and ``platform/``), or this checkout again when
        ``tree`` is None: an image of that version. Replicas running another tree than their
        image's are restarted by the next pass (the image rolled out)."""
        if tree is None:
            self.releases.pop(version, None)
        else:
            self.releases[version] = tree

    def tree_of(self, image: str) -> Path:
        """The source tree a function image runs: its version's release, else this checkout."""
        return self.releases.get(image.rsplit(":", 1)[-1], REPO)

    def run_function(self, d: dict[str, Any]) -> list[str]:
        """Run one process of this checkout's function per replica of the Deployment, each on
        its own loopback address, with the server certificate Crossplane issued into the
        secret the pod would mount; map the Services selecting the pods to every replica's
        address (a headless Service's DNS: one A record per pod). A replica whose process
        exited is started again (the kubelet restarts a killed container); replicas beyond
        ``spec.replicas`` are stopped and leave the Service."""
        meta = d["metadata"]
        key = f"{meta['namespace']}/{meta['name']}"
        want = int(d["spec"].get("replicas", 1))
        addresses = self.running.setdefault(key, [])
        while len(addresses) > want:  # scaled down: the newest pods go first
            address = addresses.pop()
            remove_hosts(address)
            self.procs.kill(f"function-{meta['name']}-{len(addresses)}", signal.SIGTERM)
        if time.monotonic() < self.down_until:
            return addresses
        pod = d["spec"]["template"]["spec"]
        container = pod["containers"][0]
        tree = self.tree_of(container.get("image", ""))
        if self._trees.setdefault(key, tree) != tree:  # another image: roll every replica
            for index in range(len(addresses)):
                self.procs.kill(f"function-{meta['name']}-{index}", signal.SIGTERM)
            self._trees[key] = tree
        # -P: not the working directory first on sys.path, PYTHONPATH's tree instead
        source = (
            {}
            if tree == REPO
            else {"PYTHONPATH": os.pathsep.join([str(tree / "platform"), str(tree)])}
        )
        for index in range(want):
            name = f"function-{meta['name']}-{index}"
            if index < len(addresses) and self.procs.alive(name):
                continue
            if index == len(addresses):
                self._next_address += 1
                addresses.append(f"127.0.0.{self._next_address}")
            address = addresses[index]
            certs = self._certificates(d)
            self._map_services(d, address)
            self.procs.kill(name)  # an exited process: forget it before starting again
            self.procs.start(
                name,
                [
                    str(REPO / ".venv/bin/python"),
                    *(("-P",) if source else ()),
                    *FUNCTION_PROGRAM[self.program],
                    *container.get("args", []),
                    f"--address={address}:{GRPC_PORT}",
                    # its own address, off 8080: Crossplane and provider-kubernetes serve
                    # their metrics on :8080 in this one network namespace (a pod would
                    # have its own)
                    f"--metrics-address={address}:{METRICS_PORT}",
                    f"--tls-certs-dir={certs}",
                    "--debug",
                ],
                source or None,
            )
        return addresses

    def _certificates(self, d: dict[str, Any]) -> Path:
        """The TLS secret the pod mounts, written where the process reads it."""
        meta = d["metadata"]
        pod = d["spec"]["template"]["spec"]
        container = pod["containers"][0]
        env = {e["name"]: e.get("value", "") for e in container.get("env") or []}
        mounts = {m["name"]: m["mountPath"] for m in container.get("volumeMounts") or []}
        tls_dir = env.get("TLS_SERVER_CERTS_DIR", "")
        secret = next(
            v["secret"]["secretName"]
            for v in pod.get("volumes") or []
            if v.get("secret") and mounts.get(v["name"]) == tls_dir
        )
        certs = self.workdir / "pods" / meta["name"] / "tls"
        certs.mkdir(parents=True, exist_ok=True)
        data = self.kube.get("v1", "Secret", secret, meta["namespace"]).to_dict().get("data") or {}
        for k, v in data.items():
            (certs / k).write_bytes(base64.b64decode(v))
        return certs

    def _map_services(self, d: dict[str, Any], address: str) -> None:
        """Map every Service selecting the Deployment's pods to ``address`` too."""
        meta = d["metadata"]
        labels = d["spec"]["template"]["metadata"].get("labels") or {}
        names: list[str] = []
        for svc in self.kube.list("v1", "Service", meta["namespace"]):
            sel = svc.to_dict()["spec"].get("selector") or {}
            if sel and all(labels.get(k) == v for k, v in sel.items()):
                n = f"{svc.metadata.name}.{meta['namespace']}"
                names += [n, f"{n}.svc", f"{n}.svc.cluster.local"]
        add_hosts(names, address)

    def _deployment_status(
        self, d: dict[str, Any], available: int, status: str, reason: str, message: str
    ) -> None:
        meta = d["metadata"]
        replicas = d["spec"].get("replicas", 1)
        want = {
            "observedGeneration": meta.get("generation", 1),
            "replicas": replicas,
            "updatedReplicas": replicas,
            "readyReplicas": available,
            "availableReplicas": available,
            "conditions": [
                {"type": "Available", "status": status, "reason": reason, "message": message},
            ],
        }
        old = d.get("status") or {}
        old_avail = next(
            (c for c in old.get("conditions") or [] if c.get("type") == "Available"), {}
        )
        if (
            old.get("observedGeneration") == want["observedGeneration"]
            and old.get("availableReplicas", 0) == available
            and old_avail.get("status") == status
            and old_avail.get("message") == message
        ):
            return
        self.kube.patch_status(View(d), want, self.MANAGER)

    #: Secret keys the environment's database-user Job writes (composers/environment/user.py)
    USER_SECRET_KEYS = ("host", "port", "username", "password", "database", "sslmode")

    def _what_the_containers_write(self, namespace: str, pod: dict[str, Any]) -> bool:
        """What a container's script would have done, for the scripts this repository ships;
        False when the script fails (the pod restarts, the Job stays active).

        No container runs here. The environment's database-user Job's ``credentials`` step
        (kubectl) writes the app's Secret ``$SECRET`` into ``$APP_NAMESPACE``
        (composers/environment/user.py): written here with stand-in values, so the backend
        that waits for it can start, as on a cluster where the Job really ran. The openstack
        refresher's ``refresh`` step (composers/openstack/access.py) asks the garden for the
        Shoot's admin kubeconfig and writes it to ``$TARGET_SECRET``: done here against the
        Gardener stand-in, with the identity of the garden kubeconfig the pod mounts."""
        for container in [*(pod.get("initContainers") or []), *(pod.get("containers") or [])]:
            env = {e["name"]: e.get("value") for e in container.get("env") or [] if "value" in e}
            refresher = (
                container.get("name") == "refresh" and env.get("SHOOT") and env.get("TARGET_SECRET")
            )
            if refresher and not self._refresh(namespace, pod, env):
                return False
            if (
                container.get("name") == "credentials"
                and env.get("SECRET")
                and env.get("APP_NAMESPACE")
            ):
                self.kube.apply(
                    {
                        "apiVersion": "v1",
                        "kind": "Secret",
                        "metadata": {"name": env["SECRET"], "namespace": env["APP_NAMESPACE"]},
                        "stringData": {key: f"stand-in-{key}" for key in self.USER_SECRET_KEYS},
                    },
                    self.MANAGER,
                )
        return True

    def _refresh(self, namespace: str, pod: dict[str, Any], env: dict[str, Any]) -> bool:
        """The refresher script: ``kubectl create --raw .../shoots/$SHOOT/adminkubeconfig``
        with the garden kubeconfig, then the kubeconfig applied to ``$TARGET_SECRET``."""
        garden = next(
            (
                v["secret"]["secretName"]
                for v in pod.get("volumes") or []
                if v.get("name") == "garden" and v.get("secret")
            ),
            None,
        )
        secret = self.kube.get("v1", "Secret", garden, namespace) if garden else None
        if self.garden is None or secret is None:
            return False
        config = yaml.safe_load(base64.b64decode((secret.data or {}).get("kubeconfig", "")))
        tokens = [(u.get("user") or {}).get("token") for u in (config or {}).get("users") or []]
        if ADMIN_TOKEN not in tokens:  # the one identity this API server authenticates
            self.errors.append(f"{garden}: Unauthorized")
            return False
        try:
            kubeconfig, _ = self.garden.admin_kubeconfig(
                env["PROJECT_NAMESPACE"], env["SHOOT"], int(env["EXPIRATION_SECONDS"]), "live-admin"
            )
        except Exception as e:  # the garden's refusal: kubectl exits non-zero
            self.errors.append(f"adminkubeconfig {env['SHOOT']}: {e}")
            del self.errors[:-20]
            return False
        self.kube.apply(
            {
                "apiVersion": "v1",
                "kind": "Secret",
                "metadata": {"name": env["TARGET_SECRET"], "namespace": env["TARGET_NAMESPACE"]},
                "data": {"kubeconfig": base64.b64encode(kubeconfig.encode()).decode()},
            },
            self.MANAGER,
        )
        return True

    def job(self, j: dict[str, Any]) -> None:
        """A Job completes when its pod could start, else reports CreateContainerConfigError."""
        meta = j["metadata"]
        missing = self.missing(meta["namespace"], j["spec"]["template"]["spec"])
        old = j.get("status") or {}
        if missing:
            # the pod waits in CreateContainerConfigError: the Job stays active, never complete
            if old.get("active") == 1 and not old.get("succeeded"):
                return
            self.kube.patch_status(
                View(j), {"active": 1, "ready": 0, "startTime": _now()}, self.MANAGER
            )
            return
        if old.get("succeeded"):
            return
        if not self._what_the_containers_write(meta["namespace"], j["spec"]["template"]["spec"]):
            # the script failed: restartPolicy OnFailure restarts it; the Job stays active
            if old.get("active") != 1:
                self.kube.patch_status(
                    View(j), {"active": 1, "ready": 0, "startTime": _now()}, self.MANAGER
                )
            return
        now = _now()
        self.kube.patch_status(
            View(j),
            {
                "startTime": old.get("startTime") or now,
                "completionTime": now,
                "succeeded": 1,
                "active": 0,
                "conditions": [
                    {"type": "SuccessCriteriaMet", "status": "True", "lastTransitionTime": now},
                    {"type": "Complete", "status": "True", "lastTransitionTime": now},
                ],
            },
            self.MANAGER,
        )


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
