"""The live control plane's processes: etcd, kube-apiserver, kube-controller-manager, Crossplane
core, provider-kubernetes and the package registry, each a local process of a binary that
tools/live/build.sh built into .bin/ (see docs/live.md).

Everything runs inside the private network namespace tools/live/netns.sh makes, so the ports
below are fixed and local to that namespace.
"""

from __future__ import annotations

import datetime
import ipaddress
import os
import shutil
import signal
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import yaml
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import rsa
from cryptography.x509.oid import NameOID

REPO = Path(__file__).resolve().parents[2]
APISERVER = "https://127.0.0.1:6443"
# The Service cluster IP range: tools/live/netns.sh makes it local on the namespace's loopback.
SERVICE_CIDR = "10.96.0.0/16"
REGISTRY = "localhost:5000"
CROSSPLANE_NS = "crossplane-system"
CROSSPLANE_WEBHOOK_PORT = 9444  # 9443 is the function's gRPC port (Crossplane's default)
ADMIN_TOKEN = "live-admin-token"


def in_private_namespace() -> bool:
    """True inside tools/live/netns.sh: the fixed ports and /etc/hosts edits are private there."""
    return os.environ.get("FNPLATFORM_LIVE_NETNS") == "1" and bool(
        os.environ.get("FNPLATFORM_LIVE_HOSTS")
    )


def binaries() -> dict[str, Path]:
    """Paths of the built binaries (tools/live/build.sh builds what is missing, else only lists)."""
    out = subprocess.run(
        [str(REPO / "tools/live/build.sh")], check=True, capture_output=True, text=True
    ).stdout
    return {name: Path(path) for name, path in (line.split() for line in out.splitlines())}


def add_hosts(names: list[str], address: str = "127.0.0.1") -> None:
    """Map names to address in the namespace's private /etc/hosts, as cluster DNS would."""
    hosts = Path(os.environ["FNPLATFORM_LIVE_HOSTS"])
    text = hosts.read_text()
    missing = [n for n in names if f"{address} {n}\n" not in text]
    if missing:
        # write in place (same inode): /etc/hosts is a bind mount of this file
        with hosts.open("a") as f:
            f.writelines(f"{address} {n}\n" for n in missing)


def remove_hosts(address: str) -> None:
    """Drop every name mapped to ``address`` (a pod gone from the headless Service)."""
    hosts = Path(os.environ["FNPLATFORM_LIVE_HOSTS"])
    lines = hosts.read_text().splitlines(keepends=True)
    kept = [line for line in lines if not line.startswith(f"{address} ")]
    if kept != lines:
        with hosts.open("r+") as f:  # in place (same inode): /etc/hosts is a bind mount
            f.write("".join(kept))
            f.truncate()


# --- certificates -------------------------------------------------------------------------


def _key() -> rsa.RSAPrivateKey:
    return rsa.generate_private_key(public_exponent=65537, key_size=2048)


def _pem_key(key: rsa.RSAPrivateKey) -> bytes:
    return key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.TraditionalOpenSSL,
        serialization.NoEncryption(),
    )


def _cert(
    subject: str,
    key: rsa.RSAPrivateKey,
    issuer: tuple[x509.Certificate, rsa.RSAPrivateKey] | None,
    *,
    ca: bool = False,
    dns: tuple[str, ...] = (),
    ips: tuple[str, ...] = (),
    organizations: tuple[str, ...] = (),
    valid_for: datetime.timedelta = datetime.timedelta(days=1),
) -> x509.Certificate:
    now = datetime.datetime.now(datetime.UTC)
    name = x509.Name(
        [x509.NameAttribute(NameOID.COMMON_NAME, subject)]
        + [x509.NameAttribute(NameOID.ORGANIZATION_NAME, o) for o in organizations]
    )
    builder = (
        x509.CertificateBuilder()
        .subject_name(name)
        .issuer_name(issuer[0].subject if issuer else name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - datetime.timedelta(minutes=5))
        .not_valid_after(now + valid_for)
        .add_extension(x509.BasicConstraints(ca=ca, path_length=None), critical=True)
    )
    if dns or ips:
        sans: list[x509.GeneralName] = [x509.DNSName(d) for d in dns]
        sans += [x509.IPAddress(ipaddress.ip_address(i)) for i in ips]
        builder = builder.add_extension(x509.SubjectAlternativeName(sans), critical=False)
    return builder.sign(issuer[1] if issuer else key, hashes.SHA256())


def _pem(cert: x509.Certificate) -> bytes:
    return cert.public_bytes(serialization.Encoding.PEM)


def client_certificate(
    ca_pem: bytes,
    ca_key_pem: bytes,
    user: str,
    groups: tuple[str, ...],
    valid_for: datetime.timedelta,
) -> tuple[bytes, bytes, datetime.datetime]:
    """A client certificate (PEM certificate, PEM key, not-after) of ``user`` in ``groups``
    signed by the API server's client CA: the Kubernetes x509 authenticator takes the common
    name as the user and each organization as a group."""
    ca = x509.load_pem_x509_certificate(ca_pem)
    ca_key = serialization.load_pem_private_key(ca_key_pem, None)
    assert isinstance(ca_key, rsa.RSAPrivateKey)
    key = _key()
    cert = _cert(user, key, (ca, ca_key), organizations=groups, valid_for=valid_for)
    return _pem(cert), _pem_key(key), cert.not_valid_after_utc


# --- processes ----------------------------------------------------------------------------


@dataclass
class Processes:
    """Started processes, stopped in reverse order; each logs to <dir>/logs/<name>.log."""

    dir: Path
    running: list[tuple[str, subprocess.Popen[bytes]]] = field(default_factory=list)
    commands: dict[str, tuple[list[str], dict[str, str] | None]] = field(default_factory=dict)

    def restart(self, name: str) -> None:
        """Stop the named process (SIGTERM, then SIGKILL after 10 s) and start it again."""
        for i, (n, proc) in enumerate(self.running):
            if n == name:
                if proc.poll() is None:
                    os.killpg(proc.pid, signal.SIGTERM)
                    try:
                        proc.wait(10)
                    except subprocess.TimeoutExpired:
                        os.killpg(proc.pid, signal.SIGKILL)
                        proc.wait()
                del self.running[i]
                break
        argv, env = self.commands[name]
        self.start(name, argv, env)

    def kill(self, name: str, sig: int = signal.SIGKILL) -> None:
        """Signal the named process's group and forget it (it is not restarted, and its exit
        is no failure): a pod killed or removed. Forgotten first: another thread checking the
        processes meanwhile must not see its exit as a crash."""
        for i, (n, proc) in enumerate(self.running):
            if n == name:
                del self.running[i]
                if proc.poll() is None:
                    os.killpg(proc.pid, sig)
                    try:
                        proc.wait(25)
                    except subprocess.TimeoutExpired:
                        os.killpg(proc.pid, signal.SIGKILL)
                        proc.wait()
                return

    def alive(self, name: str) -> bool:
        """Whether the named process was started and has not exited."""
        return any(n == name and proc.poll() is None for n, proc in self.running)

    def pid(self, name: str) -> int | None:
        """The named running process's pid."""
        return next((proc.pid for n, proc in self.running if n == name), None)

    def start(self, name: str, argv: list[str], env: dict[str, str] | None = None) -> None:
        """Start argv in its own process group, logging to logs/<name>.log."""
        self.commands[name] = (argv, env)
        logs = self.dir / "logs"
        logs.mkdir(parents=True, exist_ok=True)
        log = (logs / f"{name}.log").open("ab")
        proc = subprocess.Popen(
            argv,
            stdout=log,
            stderr=subprocess.STDOUT,
            env={**os.environ, **(env or {})},
            start_new_session=True,
        )
        self.running.append((name, proc))

    def check(self) -> None:
        """Fail, with the log's tail, when a started process has exited."""
        for name, proc in self.running:
            if proc.poll() is not None:
                tail = (self.dir / "logs" / f"{name}.log").read_text(errors="replace")[-3000:]
                raise RuntimeError(f"{name} exited with {proc.returncode}:\n{tail}")

    def stop(self) -> None:
        """SIGTERM each process group (newest first), SIGKILL what is left after 10 s."""
        for _name, proc in reversed(self.running):
            if proc.poll() is None:
                os.killpg(proc.pid, signal.SIGTERM)
        deadline = time.monotonic() + 10
        for _name, proc in reversed(self.running):
            try:
                proc.wait(max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
        self.running.clear()


def wait_for(what: str, ready: Callable[[], bool], timeout: float, procs: Processes) -> float:
    """Poll ready() every 0.5 s until it is true; return the seconds it took, else fail."""
    start = time.monotonic()
    last: Exception | None = None
    while time.monotonic() - start < timeout:
        procs.check()
        try:
            if ready():
                return time.monotonic() - start
        except Exception as e:
            last = e
        time.sleep(0.5)
    raise TimeoutError(f"{what} not ready after {timeout:.0f} s (last error: {last})")


@dataclass
class ControlPlane:
    """etcd + kube-apiserver + kube-controller-manager, with a kubeconfig for the admin."""

    dir: Path
    bins: dict[str, Path]
    procs: Processes
    kubeconfig: Path = field(init=False)
    ca_pem: bytes = field(init=False, default=b"")
    #: the CA's key: it signs the API server's client certificates (--client-ca-file), so
    #: the Gardener stand-in can issue a Shoot's admin kubeconfig for this API server
    ca_key_pem: bytes = field(init=False, default=b"")

    def __post_init__(self) -> None:
        self.kubeconfig = self.dir / "kubeconfig"

    def write_pki(self) -> None:
        """CA, serving certificate, service account keys and the token file of the apiserver."""
        pki = self.dir / "pki"
        pki.mkdir(parents=True, exist_ok=True)
        ca_key = _key()
        ca = _cert("live-ca", ca_key, None, ca=True)
        srv_key = _key()
        srv = _cert(
            "kube-apiserver",
            srv_key,
            (ca, ca_key),
            dns=(
                "localhost",
                "kubernetes",
                "kubernetes.default",
                "kubernetes.default.svc",
                "kubernetes.default.svc.cluster.local",
            ),
            ips=("127.0.0.1", "10.96.0.1"),
        )
        sa_key = _key()
        self.ca_pem = _pem(ca)
        self.ca_key_pem = _pem_key(ca_key)
        (pki / "ca.crt").write_bytes(self.ca_pem)
        (pki / "apiserver.crt").write_bytes(_pem(srv))
        (pki / "apiserver.key").write_bytes(_pem_key(srv_key))
        (pki / "sa.key").write_bytes(_pem_key(sa_key))
        (pki / "sa.pub").write_bytes(
            sa_key.public_key().public_bytes(
                serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
            )
        )
        # token,user,uid,"group1,group2": every component acts as a cluster admin here
        (pki / "tokens.csv").write_text(f'{ADMIN_TOKEN},live-admin,live-admin,"system:masters"\n')
        self.kubeconfig.write_text(
            yaml.safe_dump(
                {
                    "apiVersion": "v1",
                    "kind": "Config",
                    "clusters": [
                        {
                            "name": "live",
                            "cluster": {
                                "server": APISERVER,
                                "certificate-authority": str(pki / "ca.crt"),
                            },
                        }
                    ],
                    "users": [{"name": "admin", "user": {"token": ADMIN_TOKEN}}],
                    "contexts": [{"name": "live", "context": {"cluster": "live", "user": "admin"}}],
                    "current-context": "live",
                }
            )
        )

    def start(self, ready: Callable[[], bool]) -> float:
        """Start etcd and the apiserver; return the seconds until /readyz answers ok. etcd
        starts empty: a kept run directory (LIVE_DIR) of an interrupted run would otherwise
        bring its composites back into this one."""
        self.write_pki()
        pki = self.dir / "pki"
        shutil.rmtree(self.dir / "etcd", ignore_errors=True)
        start = time.monotonic()
        self.procs.start(
            "etcd",
            [
                str(self.bins["etcd"]),
                "--data-dir",
                str(self.dir / "etcd"),
                "--listen-client-urls=http://127.0.0.1:2379",
                "--advertise-client-urls=http://127.0.0.1:2379",
                "--listen-peer-urls=http://127.0.0.1:2380",
                "--initial-advertise-peer-urls=http://127.0.0.1:2380",
                "--initial-cluster=default=http://127.0.0.1:2380",
                "--listen-metrics-urls=http://127.0.0.1:2381",
                "--unsafe-no-fsync",  # a throwaway store: no need to survive power loss
                "--log-level=warn",
            ],
        )
        self.procs.start(
            "kube-apiserver",
            [
                str(self.bins["kube-apiserver"]),
                "--etcd-servers=http://127.0.0.1:2379",
                "--bind-address=127.0.0.1",
                "--advertise-address=127.0.0.1",
                "--secure-port=6443",
                f"--tls-cert-file={pki / 'apiserver.crt'}",
                f"--tls-private-key-file={pki / 'apiserver.key'}",
                f"--client-ca-file={pki / 'ca.crt'}",
                f"--token-auth-file={pki / 'tokens.csv'}",
                "--authorization-mode=Node,RBAC",
                f"--service-account-key-file={pki / 'sa.pub'}",
                f"--service-account-signing-key-file={pki / 'sa.key'}",
                "--service-account-issuer=https://kubernetes.default.svc.cluster.local",
                f"--service-cluster-ip-range={SERVICE_CIDR}",
                "--allow-privileged=true",
                "--enable-priority-and-fairness=false",
                "--v=1",
            ],
        )
        wait_for("kube-apiserver /readyz", ready, 120, self.procs)
        took = time.monotonic() - start
        self.procs.start(
            "kube-controller-manager",
            [
                str(self.bins["kube-controller-manager"]),
                f"--kubeconfig={self.kubeconfig}",
                # garbage collector: composed resources, connection secrets and the function's
                # objects go with their owners; namespace: a deleted namespace empties
                "--controllers=garbagecollector,namespace",
                "--leader-elect=false",
                "--secure-port=0",
                "--v=1",
            ],
        )
        return took

    def write_yaml(self, name: str, docs: list[dict[str, object]]) -> Path:
        """Write docs as one multi-document YAML file under the run's directory."""
        path = self.dir / name
        path.write_text(yaml.safe_dump_all(docs, sort_keys=False))
        return path
