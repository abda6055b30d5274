"""Stand-ins for the providers that cannot run here (they would call AWS, GCP, Azure, Helm and
Gardener), and the real provider-kubernetes' launch.

CloudStandIn plays provider-upjet-aws/gcp/azure for every managed resource a composite
composes (found through the composites' resourceRefs, so it lists only what exists), as upjet's
managed reconciler does (crossplane-runtime pkg/reconciler/managed). What it reports and
refuses is the one simulation of the providers, platform/providersim/simulation.py, which the
observed-state fixtures and the unit tests use too; on top it has what only a running API
server has:
- adds the finalizer `finalizer.managedresource.crossplane.io`; on delete removes it;
- reads a sensitive input's Secret (upjet pkg/resource/sensitive.go), writing it first for
  `autoGeneratePassword` as provider-upjet-aws's RDS does, else refuses;
- refuses what providersim.REFUSALS refuses (each names the builder rule it mirrors): a
  reference to nothing (crossplane-runtime pkg/reference: `Synced=False, ReconcileError`,
  "cannot resolve references"), and what the cloud refuses where the CRD cannot say it;
- else fills `status.atProvider` from `forProvider` (upjet copies the Terraform state, which
  holds every argument), the ids of resolved references, and what providersim.reported says
  the cloud computes, pruned to the CRD's schema; sets `Synced=True, ReconcileSuccess` and
  `Ready=True, Available`, and writes the connection secret named by
  writeConnectionSecretToRef with providersim.connection_details.

HelmStandIn: provider-helm Releases become `Ready=True` with `atProvider.state: deployed`.
GardenerStandIn: what Gardener does for what the openstack module depends on: a Shoot reports
the status Gardener reports for a healthy shoot (through OperatorStandIn), its advertised
API server address and the project's `<shoot>.ca-cluster` ConfigMap, and the garden answers
the `shoots/adminkubeconfig` subresource with a short-lived client-certificate kubeconfig
(admin_kubeconfig; the kubelet stand-in calls it for the refresher Job the module composes).
The Shoot's cluster is this API server (see GardenerStandIn).

provider-kubernetes itself is real, started with the args examples/install ships
(`provider_kubernetes_command`) plus only process-local ports.
"""

from __future__ import annotations

import base64
import datetime
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import providersim
import yaml

from tests.live.controlplane import APISERVER, REPO, ControlPlane, Processes, client_certificate
from tests.live.kube import Kube, View
from tests.live.standins import Loop, _now

FINALIZER = "finalizer.managedresource.crossplane.io"
CLOUD_SUFFIXES = (
    "aws.upbound.io",
    "aws.m.upbound.io",
    "gcp.upbound.io",
    "gcp.m.upbound.io",
    "azure.upbound.io",
    "azure.m.upbound.io",
    # provider-helm: a Release is ready once deployed (atProvider.state)
    "helm.crossplane.io",
    "helm.m.crossplane.io",
)


class CloudStandIn:
    """The upjet providers' stand-in (see the module doc)."""

    MANAGER = "upjet-provider-stand-in"

    #: Reconciles at once: an upjet provider's controllers run up to ``--max-reconcile-rate``
    #: (default 10, provider-upjet-aws/gcp/azure cmd/provider) concurrent reconciles, so one
    #: slow API call does not hold every other resource back.
    WORKERS = 10
    #: How long a settled resource (Ready, its references resolved, nothing changed since) is
    #: left alone before it is checked again: a provider reconciles on its own resource's
    #: watch events and re-checks drift every ``--poll`` (10 m in upjet providers); shorter
    #: here, so that what a test changes around a resource is still seen within a minute.
    POLL_S = 60.0

    def __init__(self, kube: Kube, xr_kinds: list[tuple[str, str]]) -> None:
        self.kube = kube
        self.xr_kinds = xr_kinds  # (apiVersion, kind) of the composites to follow
        self._schemas: dict[tuple[str, str], dict[str, Any]] = {}
        self._known: dict[tuple[str, str, str, str], None] = {}
        #: kind -> (the cloud's error, until when: time.monotonic()): fail()
        self.failing: dict[str, tuple[str, float]] = {}
        #: uid -> (resourceVersion, time.monotonic()) of each resource whose last reconcile
        #: found it settled and wrote nothing: it is not reconciled again until it changes,
        #: POLL_S passes or its kind fails (the watch-driven part of a provider)
        self._settled: dict[str, tuple[str, float]] = {}
        self._workers = ThreadPoolExecutor(self.WORKERS, thread_name_prefix="cloud-reconcile")
        self._inflight: set[str] = set()  # uids queued or being reconciled
        self._lock = threading.Lock()
        self.loop = Loop("cloud-provider-stand-in", self.step)

    def fail(self, kind: str, error: str, seconds: float) -> None:
        """Let the cloud refuse every resource of ``kind`` with ``error`` for ``seconds``:
        ``Synced=False, ReconcileError`` with the error, ``Ready`` as it was (an outage of the
        cloud's API or a revoked permission: the resource exists, the provider cannot sync
        it), then as before."""
        self.failing[kind] = (error, time.monotonic() + seconds)

    def composed(self) -> list[Any]:
        """Every managed resource of a cloud group that some composite composes."""
        seen: dict[tuple[str, str, str, str], None] = {}
        for api_version, kind in self.xr_kinds:
            try:
                xrs = self.kube.cached(api_version, kind).items()
            except LookupError:  # the XRD of the other form: not served now
                continue
            for d in xrs:
                spec = d.get("spec") or {}
                refs = (
                    spec.get("resourceRefs")
                    or (spec.get("crossplane") or {}).get("resourceRefs")
                    or []
                )
                ns = d["metadata"].get("namespace")
                for ref in refs:
                    group = ref["apiVersion"].split("/")[0]
                    if not group.endswith(CLOUD_SUFFIXES) or ref["kind"].endswith(
                        ("ProviderConfig", "ProviderConfigUsage")
                    ):
                        continue  # not a managed resource (a ProviderConfig has no external)
                    seen[(ref["apiVersion"], ref["kind"], ns or "", ref["name"])] = None
        # and every resource seen before: once its composite is gone (deleted), a resource is
        # still the provider's to finish (its finalizer) until it is gone
        self._known.update(dict.fromkeys(seen))
        # read from each kind's informer, as a provider's controllers read theirs: under load
        # (issue 34) listing thousands of resources once a second saturated the API server
        current: dict[tuple[str, str, str, str], dict[str, Any]] = {}
        for api_version, kind in {(k[0], k[1]) for k in self._known}:
            try:
                listed = self.kube.cached(api_version, kind).items()
            except LookupError:  # its CRD went with the form
                continue
            for d in listed:
                meta = d["metadata"]
                current[(api_version, kind, meta.get("namespace") or "", meta["name"])] = d
        out = []
        for key in list(self._known):
            if key in current:
                out.append(current[key])
            else:
                del self._known[key]
        return out

    def step(self) -> None:
        """Queue every composed managed resource that is due (see ``_due``) and not being
        reconciled already; WORKERS reconcile them, one failing does not stop the rest.

        A controller's work queue has no pass: a worker takes the next item as soon as it is
        free. Waiting for a whole pass before the next one, as this did until 2026-11-27, let
        one slow API call hold every other resource: under load (one request in many taking
        tens of seconds) nine of the ten workers sat idle."""
        mrs = self.composed()
        by_name = {m["metadata"]["name"]: m for m in mrs}
        for mr in mrs:
            uid = mr["metadata"]["uid"]
            with self._lock:
                if uid in self._inflight or not self._due(mr):
                    continue
                self._inflight.add(uid)
            self._workers.submit(self._one, mr, mrs, by_name)
        alive = {mr["metadata"]["uid"] for mr in mrs}
        with self._lock:
            for uid in [u for u in self._settled if u not in alive]:
                del self._settled[uid]

    def shutdown(self) -> None:
        """Stop queueing and drop what is queued (the control plane is going away)."""
        self.loop.stop()
        self._workers.shutdown(wait=False, cancel_futures=True)

    def _one(
        self, mr: dict[str, Any], mrs: list[dict[str, Any]], by_name: dict[str, dict[str, Any]]
    ) -> None:
        """Reconcile one queued resource and remember whether it settled."""
        meta = mr["metadata"]
        settled = False
        try:
            settled = self.reconcile(mr, mrs, by_name)
        except Exception as e:  # kept for the test's failure message
            self.loop.errors.append(f"{mr['kind']}/{meta['name']}: {e}"[:500])
            del self.loop.errors[:-20]
        finally:
            with self._lock:
                if settled:
                    self._settled[meta["uid"]] = (meta["resourceVersion"], time.monotonic())
                else:
                    self._settled.pop(meta["uid"], None)
                self._inflight.discard(meta["uid"])

    def _due(self, mr: dict[str, Any]) -> bool:
        """Whether ``mr`` is reconciled in this pass: not settled at its current
        resourceVersion, or settled POLL_S ago, or its kind failing since."""
        meta = mr["metadata"]
        seen = self._settled.get(meta["uid"])
        if seen is None or seen[0] != meta["resourceVersion"]:
            return True
        if time.monotonic() - seen[1] > self.POLL_S:
            return True
        _, until = self.failing.get(mr["kind"], ("", 0.0))
        return until > seen[1]  # failing began (or ended) after it settled

    def at_provider_schema(self, api_version: str, kind: str) -> dict[str, Any]:
        """The CRD's schema of status.atProvider for the version (cached)."""
        key = (api_version, kind)
        if key not in self._schemas:
            status = status_schema(self.kube, api_version, kind)
            self._schemas[key] = status.get("properties", {}).get("atProvider", {})
        return self._schemas[key]

    def reconcile(
        self,
        mr: dict[str, Any],
        mrs: list[dict[str, Any]],
        by_name: dict[str, dict[str, Any]] | None = None,
    ) -> bool:
        """Reconcile one managed resource as upjet's managed reconciler would; whether it is
        settled: Ready, every reference resolved, nothing written (``_due``)."""
        meta = mr["metadata"]
        obj = View(mr)
        if by_name is None:
            by_name = {m["metadata"]["name"]: m for m in mrs}
        if meta.get("deletionTimestamp"):
            if FINALIZER in (meta.get("finalizers") or []):
                rest = [f for f in meta["finalizers"] if f != FINALIZER]
                self.kube.patch(obj, {"metadata": {"finalizers": rest}})
            return False
        wrote = False
        if FINALIZER not in (meta.get("finalizers") or []):
            self.kube.patch(
                obj, {"metadata": {"finalizers": [*(meta.get("finalizers") or []), FINALIZER]}}
            )
            wrote = True
        fp = (mr.get("spec") or {}).get("forProvider") or {}
        refusal = self.refusal(mr, fp, mrs)
        now = _now()
        error, until = self.failing.get(mr["kind"], ("", 0.0))
        if error and time.monotonic() < until:
            ready = [
                c
                for c in (mr.get("status") or {}).get("conditions") or []
                if c.get("type") == "Ready"
            ]
            self._status(
                mr,
                {
                    "conditions": [
                        {
                            "type": "Synced",
                            "status": "False",
                            "reason": "ReconcileError",
                            "message": error,
                            "lastTransitionTime": now,
                        },
                        *ready,
                    ]
                },
            )
            return False
        if refusal:
            self._status(
                mr,
                {
                    "conditions": [
                        {
                            "type": "Synced",
                            "status": "False",
                            "reason": "ReconcileError",
                            "message": refusal,
                            "lastTransitionTime": now,
                        },
                    ]
                },
            )
            return False
        at = {k: v for k, v in fp.items() if not k.endswith(("Ref", "Refs", "Selector"))}
        # resolved references: crossplane-runtime writes the referenced resource's id (or the
        # extractor's field) into forProvider; upjet's state then has it in atProvider
        resolved = True
        for field, ref in fp.items():
            if field.endswith("Ref") and isinstance(ref, dict) and ref.get("name") in by_name:
                target = (by_name[ref["name"]].get("status") or {}).get("atProvider") or {}
                if target.get("id"):
                    at.setdefault(field[:-3], target["id"])
                else:
                    resolved = False  # looked at again next pass, as a requeue would
        if providersim.group_of(mr["apiVersion"]) == "helm.crossplane.io":
            at = providersim.helm_release()
        else:
            for key, value in (providersim.reported(mr) or {}).items():
                old = at.get(key)
                at[key] = (
                    {**old, **value} if isinstance(old, dict) and isinstance(value, dict) else value
                )
        at = prune(at, self.at_provider_schema(mr["apiVersion"], mr["kind"]))
        wrote = (
            self._status(
                mr,
                {
                    "atProvider": at,
                    "conditions": [
                        {
                            "type": "Synced",
                            "status": "True",
                            "reason": "ReconcileSuccess",
                            "lastTransitionTime": now,
                        },
                        {
                            "type": "Ready",
                            "status": "True",
                            "reason": "Available",
                            "lastTransitionTime": now,
                        },
                    ],
                },
            )
            or wrote
        )
        wrote = self.connection_secret(mr) or wrote
        return resolved and not wrote

    def refusal(self, mr: dict[str, Any], fp: dict[str, Any], mrs: list[dict[str, Any]]) -> str:
        """Why the provider or the cloud refuses this resource, or '': a sensitive input's
        Secret missing (read from the API server), else providersim.refusal."""
        for field, sel in fp.items():
            # a sensitive input: upjet reads the key of the Secret (pkg/resource/sensitive.go);
            # with autoGeneratePassword (provider-upjet-aws RDS) the provider writes it first
            if field.endswith("SecretRef") and isinstance(sel, dict) and sel.get("key"):
                sns = sel.get("namespace") or mr["metadata"].get("namespace")
                if self.kube.get("v1", "Secret", sel["name"], sns) is None:
                    if fp.get("autoGeneratePassword"):
                        self.kube.apply(
                            {
                                "apiVersion": "v1",
                                "kind": "Secret",
                                "metadata": {"name": sel["name"], "namespace": sns},
                                "data": {
                                    sel["key"]: base64.b64encode(
                                        providersim.digest(f"password/{sel['name']}").encode()
                                    ).decode()
                                },
                            },
                            self.MANAGER,
                        )
                    else:
                        return (
                            f"cannot get sensitive parameters: cannot get secret value for "
                            f'{sns}/{sel["name"]}: secrets "{sel["name"]}" not found'
                        )
        return providersim.refusal(mr, mrs)

    def _status(self, mr: dict[str, Any], status: dict[str, Any]) -> bool:
        """Write ``status`` unless the resource reports it already; whether it wrote."""
        old = mr.get("status") or {}
        same = all(
            next((c for c in old.get("conditions") or [] if c["type"] == n["type"]), {}).get(
                "status"
            )
            == n["status"]
            and next((c for c in old.get("conditions") or [] if c["type"] == n["type"]), {}).get(
                "message"
            )
            == n.get("message")
            for n in status["conditions"]
        ) and ("atProvider" not in status or old.get("atProvider") == status["atProvider"])
        if same:
            return False
        # keep the lastTransitionTime of a condition whose status did not change
        for n in status["conditions"]:
            o = next((c for c in old.get("conditions") or [] if c["type"] == n["type"]), None)
            if o and o.get("status") == n["status"]:
                n["lastTransitionTime"] = o.get("lastTransitionTime", n["lastTransitionTime"])
        self.kube.patch_status(View(mr), status, self.MANAGER)
        return True

    def connection_secret(self, mr: dict[str, Any]) -> bool:
        """Write the connection secret the resource names, with upjet's keys for its kind;
        whether it wrote."""
        ref = (mr.get("spec") or {}).get("writeConnectionSecretToRef")
        if not ref:
            return False
        ns = ref.get("namespace") or mr["metadata"].get("namespace")
        if self.kube.get("v1", "Secret", ref["name"], ns) is not None:
            return False
        data = {
            k: base64.b64encode(v).decode() for k, v in providersim.connection_details(mr).items()
        }
        self.kube.apply(
            {
                "apiVersion": "v1",
                "kind": "Secret",
                "metadata": {
                    "name": ref["name"],
                    "namespace": ns,
                    "ownerReferences": [
                        {
                            "apiVersion": mr["apiVersion"],
                            "kind": mr["kind"],
                            "name": mr["metadata"]["name"],
                            "uid": mr["metadata"]["uid"],
                            "controller": True,
                        }
                    ],
                },
                "type": "connection.crossplane.io/v1alpha1",
                "data": data,
            },
            self.MANAGER,
        )
        return True


def status_schema(kube: Kube, api_version: str, kind: str) -> dict[str, Any]:
    """The schema of the kind's status in its CRD, for that version."""
    res = kube.resource(api_version, kind)
    crd = kube.get(
        "apiextensions.k8s.io/v1", "CustomResourceDefinition", f"{res.name}.{res.group}"
    ).to_dict()
    version = api_version.split("/")[1]
    schema = next(v for v in crd["spec"]["versions"] if v["name"] == version)
    root = schema["schema"]["openAPIV3Schema"]
    props: dict[str, Any] = root.get("properties") or {}
    if "status" not in props and root.get("x-kubernetes-preserve-unknown-fields"):
        return {"x-kubernetes-preserve-unknown-fields": True}  # the stand-in Shoot CRD
    return dict(props.get("status") or {})


def _without_times(value: Any) -> Any:
    """value without the timestamps a status rewrites on every report."""
    if isinstance(value, dict):
        return {
            k: _without_times(v)
            for k, v in value.items()
            if k not in {"lastTransitionTime", "lastUpdateTime"}
        }
    if isinstance(value, list):
        return [_without_times(v) for v in value]
    return value


def prune(value: Any, schema: dict[str, Any]) -> Any:
    """value without what schema does not declare (server-side apply refuses undeclared
    fields: "field not declared in schema"), and with scalars of the declared type only."""
    if isinstance(value, dict):
        if schema.get("x-kubernetes-preserve-unknown-fields"):
            return value
        props = schema.get("properties")
        if props is None:
            extra = schema.get("additionalProperties")
            if isinstance(extra, dict):
                return {k: prune(v, extra) for k, v in value.items()}
            return {} if schema.get("type") == "object" else None
        return {
            k: pv
            for k, v in value.items()
            if k in props
            for pv in [prune(v, props[k])]
            if pv is not None
        }
    if isinstance(value, list):
        items = schema.get("items") or {}
        if schema.get("type") not in (None, "array"):
            return None
        return [x for x in (prune(v, items) for v in value) if x is not None]
    kind = schema.get("type")
    ok = {
        "string": str,
        "boolean": bool,
        "integer": int,
        "number": (int, float),
    }.get(kind or "", object)
    if kind == "integer" and isinstance(value, bool):
        return None
    return value if isinstance(value, ok) else None


INSTALL = REPO / "examples" / "install"
#: The container Crossplane runs a provider package's image in; a DeploymentRuntimeConfig
#: sets its args by naming it (Crossplane internal/controller/pkg/runtime: the template's
#: container of this name is merged into the provider's Deployment).
RUNTIME_CONTAINER = "package-runtime"
#: What only this harness adds to provider-kubernetes' args, nothing else. In a cluster the
#: provider's pod has its own network namespace; here every process of the control plane
#: shares one (tools/live/netns.sh), so each listener gets a port of its own on 127.0.0.1:
#: - metrics (default `:8080`) and health probes (default `:8081`): controller-runtime's
#:   defaults, which Crossplane's own manager has too (moved to 8180/8181 in crossplane.py);
#:   a wildcard bind would also take the port on every Service cluster IP of the loopback;
#: - the webhook server (Object conversion only, never called here: docs/live.md; default
#:   9443): 9443 is the function's gRPC port (Crossplane's function runtime port), which the
#:   kubelet stand-in serves on a loopback address of its own, and Linux refuses a wildcard
#:   bind on a port a specific address already listens on; 9444 is Crossplane's webhook.
#: Behaviour (watches, poll, sync) is never set here: it comes from examples/install.
PROVIDER_KUBERNETES_HARNESS_ARGS = (
    "--metrics-bind-address=127.0.0.1:8280",
    "--health-probe-bind-addr=127.0.0.1:8281",
    "--webhook-port=9445",
)


def _flag(arg: str) -> str:
    """`--poll` of `--poll=10m`; `--enable-watches` of `--no-enable-watches` (kingpin's
    negation of a boolean flag is the same flag)."""
    name = arg.split("=", 1)[0]
    return "--" + name[len("--no-") :] if name.startswith("--no-") else name


def shipped_args(provider: str, install: Path = INSTALL) -> list[str]:
    """The container args the install set (examples/install) gives `provider`'s pods.

    Its Provider's `runtimeConfigRef` (Crossplane's default: the DeploymentRuntimeConfig
    `default`) names a DeploymentRuntimeConfig whose `package-runtime` container's args
    Crossplane sets on the provider's Deployment. Read at test time, so the live test runs the
    provider with exactly what a user's installation runs (issue 30 item 7: a live test with
    its own faster flags hid a 10-minute wait). Crossplane's own `default` config sets no args;
    any other name that the install set does not define is an error.
    """
    docs = [
        d
        for path in sorted(install.glob("*.yaml"))
        for d in yaml.safe_load_all(path.read_text())
        if isinstance(d, dict)
    ]
    providers = [
        d
        for d in docs
        if d.get("kind") == "Provider" and (d.get("metadata") or {}).get("name") == provider
    ]
    if len(providers) != 1:
        raise LookupError(f"{install}: {len(providers)} Provider named {provider}")
    ref = ((providers[0].get("spec") or {}).get("runtimeConfigRef") or {}).get("name", "default")
    configs = [
        d
        for d in docs
        if d.get("kind") == "DeploymentRuntimeConfig"
        and (d.get("metadata") or {}).get("name") == ref
    ]
    if not configs:
        if ref == "default":
            return []
        raise LookupError(
            f"{install}: Provider {provider} names DeploymentRuntimeConfig "
            f"{ref}, which is not there"
        )
    template = (
        ((configs[0].get("spec") or {}).get("deploymentTemplate") or {}).get("spec") or {}
    ).get("template") or {}
    containers = (template.get("spec") or {}).get("containers") or []
    args: list[str] = []
    for container in containers:
        if container.get("name") == RUNTIME_CONTAINER:
            args = [str(a) for a in container.get("args") or []]
    return args


def provider_kubernetes_command(binary: Path, install: Path = INSTALL) -> list[str]:
    """provider-kubernetes' command line here: the shipped args, then the harness's
    process-local ones (PROVIDER_KUBERNETES_HARNESS_ARGS). A shipped arg that the harness
    would set too is an error rather than an override: kingpin refuses a repeated flag
    ("flag 'x' cannot be repeated"), and the live test must not run other settings than the
    install set's."""
    shipped = shipped_args("provider-kubernetes", install)
    local = {_flag(a) for a in PROVIDER_KUBERNETES_HARNESS_ARGS}
    clash = [a for a in shipped if _flag(a) in local]
    if clash:
        raise ValueError(
            f"examples/install sets {clash}, which the live harness sets itself "
            "(process-local ports): drop them there or from the harness"
        )
    return [str(binary), *shipped, *PROVIDER_KUBERNETES_HARNESS_ARGS]


def start_provider_kubernetes(
    cp: ControlPlane, procs: Processes, bins: dict[str, Path], kube: Kube
) -> None:
    """provider-kubernetes as a local process: its own client from the admin kubeconfig (the
    pod's), and for `InjectedIdentity` ProviderConfigs the in-cluster identity of its service
    account (crossplane-system/provider-kubernetes): a token from the TokenRequest API written
    where the kubelet projects it (/var/run/secrets/kubernetes.io/serviceaccount, a private
    mount in tools/live/netns.sh), and KUBERNETES_SERVICE_HOST/PORT pointing at the apiserver.
    Its args are the install set's (provider_kubernetes_command): watches on, the shipped
    poll."""
    kube.apply(
        {
            "apiVersion": "v1",
            "kind": "ServiceAccount",
            "metadata": {"name": "provider-kubernetes", "namespace": "crossplane-system"},
        }
    )
    token = kube.core.create_namespaced_service_account_token(
        "provider-kubernetes",
        "crossplane-system",
        {"spec": {"audiences": [], "expirationSeconds": 86400}},
    ).status.token
    sa_dir = Path("/var/run/secrets/kubernetes.io/serviceaccount")
    sa_dir.mkdir(parents=True, exist_ok=True)
    (sa_dir / "token").write_text(token)
    (sa_dir / "ca.crt").write_bytes(cp.ca_pem)
    (sa_dir / "namespace").write_text("crossplane-system")
    # its webhook server (Object conversion only, not called here: see docs/live.md) needs a
    # serving certificate, which Crossplane writes for a provider package; any will do
    tls = cp.dir / "provider-kubernetes-tls"
    tls.mkdir(exist_ok=True)
    pki = cp.dir / "pki"
    (tls / "tls.crt").write_bytes((pki / "apiserver.crt").read_bytes())
    (tls / "tls.key").write_bytes((pki / "apiserver.key").read_bytes())
    (tls / "ca.crt").write_bytes(cp.ca_pem)
    procs.start(
        "provider-kubernetes",
        provider_kubernetes_command(bins["provider-kubernetes"]),
        env={
            "KUBECONFIG": str(cp.kubeconfig),
            "KUBERNETES_SERVICE_HOST": "127.0.0.1",
            "KUBERNETES_SERVICE_PORT": "6443",
            "POD_NAMESPACE": "crossplane-system",
            "TLS_SERVER_CERTS_DIR": str(tls),
        },
    )


# Gardener serves Shoot from its own aggregated API server and publishes no CRD: this stand-in
# CRD accepts any Shoot body (the unit tests validate Shoots against the derived schema).
SHOOT_CRD: dict[str, Any] = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "metadata": {"name": "shoots.core.gardener.cloud"},
    "spec": {
        "group": "core.gardener.cloud",
        "names": {
            "kind": "Shoot",
            "plural": "shoots",
            "singular": "shoot",
            "listKind": "ShootList",
        },
        "scope": "Namespaced",
        "versions": [
            {
                "name": "v1beta1",
                "served": True,
                "storage": True,
                "subresources": {"status": {}},
                "schema": {
                    "openAPIV3Schema": {
                        "type": "object",
                        "x-kubernetes-preserve-unknown-fields": True,
                    }
                },
            }
        ],
    },
}


class RefusedError(Exception):
    """An API request the garden refuses, with the status reason and message it answers."""


class GardenerStandIn:
    """Gardener, for what the openstack module depends on (gardener/gardener sources):

    - a Shoot's status (OperatorStandIn): ``lastOperation`` Create/Succeeded for the current
      generation, the health conditions, and ``advertisedAddresses`` (the gardenlet fills
      them on reconcile, docs/usage/shoot/shoot_status.md "Shoot Advertised Addresses"); a
      failing Shoot (fail()) reports ``lastOperation`` Reconcile/Failed with the error, as
      Gardener does when a reconcile fails, until it succeeds again;
    - the project namespace gets ``<shoot>.ca-cluster``, a ConfigMap with the cluster CA
      (``ca.crt``) Gardener publishes for each Shoot;
    - ``shoots/adminkubeconfig`` (admin_kubeconfig): as KubeconfigREST.Create in
      pkg/apiserver/registry/core/shoot/storage/kubeconfig.go: refused while the Shoot has no
      API server address in ``status.advertisedAddresses`` ("no suitable advertised address
      for kube-apiserver found"), else a kubeconfig per address with the cluster CA and a
      client certificate whose common name is ``gardener.cloud:admin:<user>`` and whose
      group is the project admins group (admin_kubeconfig.go, getAdminUserGroups: a project
      member without cluster-wide secret access), valid ``expirationSeconds`` capped at the
      apiserver's maximum (default 24 h); Gardener binds that group to cluster-admin in the
      Shoot (gardenlet's shoot-system component, ``adminClusterRoleBindings``), done here
      on the first request. Not the legacy static ``<shoot>.kubeconfig`` Secret: Gardener
      no longer writes it (GEP-16; docs/openstack.md "Access to a new Shoot").

    The Shoot's cluster is this API server: a Shoot here has no nodes of its own, so what the
    module applies inside a pool (Rook pools, the c5c3 ControlPlane, the CephCluster it
    reads) lands next to everything else, and the operator stand-ins play those operators.
    Every pool is the same cluster, so two pools' objects of the same name and namespace
    are one object here (docs/live.md)."""

    PROJECT_ADMINS = "gardener.cloud:project:admins"
    USER_PREFIX = "gardener.cloud:admin:"
    MAX_EXPIRATION_S = 24 * 3600

    def __init__(self, kube: Kube, cp: ControlPlane) -> None:
        self.kube = kube
        self.cp = cp
        #: namespace/shoot -> (the error its reconcile fails with, until: time.monotonic())
        self.failing: dict[str, tuple[str, float]] = {}
        self._bound = False

    def fail(self, namespace: str, shoot: str, error: str, seconds: float) -> None:
        """The Shoot's reconciles fail with ``error`` for ``seconds``."""
        self.failing[f"{namespace}/{shoot}"] = (error, time.monotonic() + seconds)

    def status(self, namespace: str, name: str, now: str) -> dict[str, Any]:
        """What Gardener adds to a Shoot's status (merged over wrapped_status)."""
        key = f"{namespace}/{name}"
        error, until = self.failing.get(key, ("", 0.0))
        if time.monotonic() >= until:
            self.failing.pop(key, None)
            error = ""
        self._ca_cluster(namespace, name)
        # the API server stays where it is while a reconcile fails: addresses are kept
        addresses = [{"name": "external", "url": APISERVER}]
        if error:
            return {
                "lastOperation": {
                    "type": "Reconcile",
                    "state": "Failed",
                    "progress": 0,
                    "description": error,
                    "lastUpdateTime": now,
                },
                "lastErrors": [{"description": error, "lastUpdateTime": now}],
                "advertisedAddresses": addresses,
            }
        return {
            "lastOperation": {
                "type": "Create",
                "state": "Succeeded",
                "progress": 100,
                "description": "Shoot cluster created",
                "lastUpdateTime": now,
            },
            "advertisedAddresses": addresses,
        }

    def _ca_cluster(self, namespace: str, shoot: str) -> None:
        name = f"{shoot}.ca-cluster"
        if self.kube.get("v1", "ConfigMap", name, namespace) is None:
            self.kube.apply(
                {
                    "apiVersion": "v1",
                    "kind": "ConfigMap",
                    "metadata": {"name": name, "namespace": namespace},
                    "data": {"ca.crt": self.cp.ca_pem.decode()},
                },
                "gardener-stand-in",
            )

    def admin_kubeconfig(
        self, namespace: str, shoot: str, expiration_seconds: int, user: str
    ) -> tuple[str, str]:
        """POST .../namespaces/<namespace>/shoots/<shoot>/adminkubeconfig: (kubeconfig,
        expirationTimestamp), or RefusedError as the garden refuses it."""
        obj = self.kube.get("core.gardener.cloud/v1beta1", "Shoot", shoot, namespace)
        if obj is None:
            raise RefusedError(f'NotFound: shoots.core.gardener.cloud "{shoot}" not found')
        addresses = [
            a
            for a in (obj.to_dict().get("status") or {}).get("advertisedAddresses") or []
            if a.get("name") in ("external", "internal", "wildcard-tls-seed-bound", "unmanaged")
        ]
        if not addresses:
            raise RefusedError(
                "Invalid: status.status: no suitable advertised address for "
                "kube-apiserver found in .status.advertisedAddresses"
            )
        ca = self.kube.get("v1", "ConfigMap", f"{shoot}.ca-cluster", namespace)
        if ca is None:
            raise RefusedError("InternalError: could not get cluster CA config map")
        self._bind_admins()
        seconds = min(expiration_seconds, self.MAX_EXPIRATION_S)
        cert, key, not_after = client_certificate(
            self.cp.ca_pem,
            self.cp.ca_key_pem,
            self.USER_PREFIX + user,
            (self.PROJECT_ADMINS,),
            datetime.timedelta(seconds=seconds),
        )
        auth = f"{namespace}--{shoot}"
        clusters = [
            {
                "name": f"{auth}-{a['name']}",
                "cluster": {
                    "server": a["url"],
                    "certificate-authority-data": base64.b64encode(
                        ca.data["ca.crt"].encode()
                    ).decode(),
                },
            }
            for a in addresses
        ]
        kubeconfig = {
            "apiVersion": "v1",
            "kind": "Config",
            "clusters": clusters,
            "users": [
                {
                    "name": auth,
                    "user": {
                        "client-certificate-data": base64.b64encode(cert).decode(),
                        "client-key-data": base64.b64encode(key).decode(),
                    },
                }
            ],
            "contexts": [
                {"name": c["name"], "context": {"cluster": c["name"], "user": auth}}
                for c in clusters
            ],
            "current-context": clusters[0]["name"],
        }
        return yaml.safe_dump(kubeconfig), not_after.strftime("%Y-%m-%dT%H:%M:%SZ")

    def _bind_admins(self) -> None:
        if self._bound:
            return
        self.kube.apply(
            {
                "apiVersion": "rbac.authorization.k8s.io/v1",
                "kind": "ClusterRoleBinding",
                "metadata": {"name": self.PROJECT_ADMINS},
                "roleRef": {
                    "apiGroup": "rbac.authorization.k8s.io",
                    "kind": "ClusterRole",
                    "name": "cluster-admin",
                },
                "subjects": [
                    {
                        "apiGroup": "rbac.authorization.k8s.io",
                        "kind": "Group",
                        "name": self.PROJECT_ADMINS,
                    }
                ],
            },
            "gardener-stand-in",
        )
        self._bound = True


#: Gardener's ``ShootDeletionConfirmation`` admission plugin (plugin/pkg/global/
#: deletionconfirmation): a Shoot is deleted only with the annotation
#: ``confirmation.gardener.cloud/deletion: "true"``. Played by a ValidatingAdmissionPolicy.
SHOOT_DELETION_CONFIRMATION: list[dict[str, Any]] = [
    {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingAdmissionPolicy",
        "metadata": {"name": "gardener-shoot-deletion-confirmation"},
        "spec": {
            "failurePolicy": "Fail",
            "matchConstraints": {
                "resourceRules": [
                    {
                        "apiGroups": ["core.gardener.cloud"],
                        "apiVersions": ["*"],
                        "resources": ["shoots"],
                        "operations": ["DELETE"],
                    }
                ]
            },
            "validations": [
                {
                    "expression": "has(oldObject.metadata.annotations) && "
                    "'confirmation.gardener.cloud/deletion' in "
                    "oldObject.metadata.annotations && "
                    "oldObject.metadata.annotations['confirmation.gardener.cloud/"
                    "deletion'] == 'true'",
                    "message": 'must have a "confirmation.gardener.cloud/deletion" annotation '
                    "to delete",
                }
            ],
        },
    },
    {
        "apiVersion": "admissionregistration.k8s.io/v1",
        "kind": "ValidatingAdmissionPolicyBinding",
        "metadata": {"name": "gardener-shoot-deletion-confirmation"},
        "spec": {
            "policyName": "gardener-shoot-deletion-confirmation",
            "validationActions": ["Deny"],
        },
    },
]


class OperatorStandIn:
    """Plays the operators whose objects provider-kubernetes applies (found through the
    Objects' manifests), reporting what providersim.wrapped_status says each reports once
    healthy (Rook `status.phase: Ready`, KEDA `Ready`/`Active`, Gardener a Shoot's
    `lastOperation` Create/Succeeded, c5c3 a ControlPlane's services; cert-manager and Flux a
    `Ready=True` condition), plus what a running operator adds: the observed generation,
    transition times, and a Shoot's health conditions (gardener docs/usage/shoot_status.md)."""

    MANAGER = "operator-stand-in"

    def __init__(self, kube: Kube, garden: GardenerStandIn | None = None) -> None:
        self.kube = kube
        self.garden = garden
        self.loop = Loop("operator-stand-in", self.step)
        self._schemas: dict[tuple[str, str], dict[str, Any]] = {}

    def step(self) -> None:
        """One pass over the objects every provider-kubernetes Object manages."""
        for api_version in (
            "kubernetes.crossplane.io/v1alpha2",
            "kubernetes.m.crossplane.io/v1alpha1",
        ):
            try:  # the Objects' informer, as provider-kubernetes' own controller reads
                objects = self.kube.cached(api_version, "Object").items()
            except LookupError:
                continue
            for obj in objects:
                m = ((obj.get("spec") or {}).get("forProvider") or {}).get("manifest")
                if isinstance(m, dict):
                    self.reconcile(m, obj["metadata"].get("namespace"))

    def reconcile(self, manifest: dict[str, Any], object_ns: str | None) -> None:
        """Report the status the object's operator would report."""
        group = manifest["apiVersion"].split("/")[0] if "/" in manifest["apiVersion"] else ""
        if group not in {
            "ceph.rook.io",
            "keda.sh",
            "core.gardener.cloud",
            "c5c3.io",
            "cert-manager.io",
            "helm.toolkit.fluxcd.io",
            "kustomize.toolkit.fluxcd.io",
            "source.toolkit.fluxcd.io",
        }:
            return
        meta = manifest.get("metadata") or {}
        ns = meta.get("namespace") or object_ns
        try:  # an operator watches its own kinds: their informer, not a get a second
            d = self.kube.cached(manifest["apiVersion"], manifest["kind"]).get(meta["name"], ns)
        except LookupError:  # the operator's CRD is not installed
            return
        if d is None:
            return
        live = View(d)
        gen = d["metadata"].get("generation", 1)
        old = d.get("status") or {}
        now = _now()
        # what the operator reports once healthy (providersim.wrapped_status; cert-manager
        # and Flux: a Ready condition), with what a running operator adds: the generation it
        # observed, when each condition and operation last changed, Gardener's health checks
        status = providersim.wrapped_status(manifest) or {
            "conditions": [
                {"type": "Ready", "status": "True", "reason": "Ready", "message": "stand-in"}
            ]
        }
        status = {**status, "observedGeneration": gen}
        # metav1.Condition (the c5c3 ControlPlane's) requires a message; it may be empty
        status["conditions"] = [
            {"message": "", **c, "lastTransitionTime": now} for c in status.get("conditions") or []
        ]
        if group == "core.gardener.cloud":
            status["lastOperation"] = {
                **status["lastOperation"],
                "lastUpdateTime": now,
                "description": "Shoot cluster created",
            }
            failed = False
            if self.garden is not None:
                status.update(self.garden.status(ns, meta["name"], now))
                failed = status["lastOperation"]["state"] == "Failed"
            status["conditions"] += [
                {
                    "type": t,
                    "status": "False" if failed else "True",
                    "reason": "HealthCheckFailed" if failed else "HealthCheckSucceeded",
                    "lastTransitionTime": now,
                }
                for t in (
                    "APIServerAvailable",
                    "ControlPlaneHealthy",
                    "ObservabilityComponentsHealthy",
                    "EveryNodeReady",
                    "SystemComponentsHealthy",
                )
            ]
        if not status["conditions"]:
            del status["conditions"]
        # what the operator's CRD declares (KEDA's ScaledObject status has no
        # observedGeneration nor condition times: server-side apply refuses undeclared fields)
        key = (manifest["apiVersion"], manifest["kind"])
        if key not in self._schemas:
            self._schemas[key] = status_schema(self.kube, *key)
        status = prune(status, self._schemas[key])
        if _without_times(status) == _without_times({k: old.get(k) for k in status}):
            return
        self.kube.patch_status(live, status, self.MANAGER)
