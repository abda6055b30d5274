"""Many composites at once on the live control plane (issue 34): the mix, applying it, waiting
for it, what the replicas and Crossplane measured, and what must never be lost.

The mix is made of the namespaced (v2) examples, each copy renamed (and, where a name of its
own is derived from a field, that field too), so one load exercises every module the way a
team applies them. Used by tests/live/test_live_scale.py, test_live_faults.py and
bench/scale.py (`make bench-scale`)."""

from __future__ import annotations

import copy
import json
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.live import openstack
from tests.live.controlplane import REPO
from tests.live.kube import View, condition, docs_of, is_true
from tests.live.layers import Live
from tests.live.metrics import CROSSPLANE_METRICS, replica_samples
from tests.live.standins import GRPC_PORT, _listening
from tests.live.test_live_examples import ASYA_RUNTIME

#: (template, weight): how often each example appears in the mix: the namespaced examples of
#: the clouds the live examples use (tests/live/test_live_examples.py), whose composed kinds'
#: CRDs tests/live/crds holds, and openstack tenants (OPENSTACK_TENANT) on the region's shared
#: pools. Clusters compose about 60-100 resources each, the others 5-30: a few clusters, many
#: small composites.
OPENSTACK_TENANT = "examples/openstack/tenants/customer-a/prod.yaml"
MIX: tuple[tuple[str, int], ...] = (
    ("examples/async-actor/namespaced/xr.yaml", 4),
    ("examples/environment/namespaced/xr-aws.yaml", 2),
    ("examples/contact-center/namespaced/xr-azure.yaml", 3),
    ("examples/cluster/namespaced/xr-aws.yaml", 1),
    (OPENSTACK_TENANT, 2),
)

#: The shared pools of region eu-de-1 the tenants consume (customer-a-prod's: hv-pool-a,
#: hv-pool-b, st-pool-a, and the control-plane cluster), applied once by prepare(). Their
#: Shoots go to Gardener through the `gardener-eu-de-1` ProviderConfig, which the live plane
#: does not have (no Gardener that writes kubeconfigs): the pools stay Pending, and so do the
#: tenants on them (PoolsReady=False naming each pool). The load waits for a tenant to be
#: answered so (settled()), not Ready.
OPENSTACK_POOLS = tuple(
    f"examples/openstack/infrastructure/eu-de-1/{p}.yaml"
    for p in (
        "control-plane",
        "hypervisor-pools/hv-pool-a",
        "hypervisor-pools/hv-pool-b",
        "storage-pools/st-pool-a",
    )
)

#: What the mix needs first (EnvironmentConfigs, the actor's runtime ConfigMap, ProviderConfigs)
NEEDS = (
    "examples/async-actor/platform/environment.yaml",
    "examples/environment/platform/environment.yaml",
    "examples/contact-center/platform/environment-regions.yaml",
    "examples/contact-center/platform/environment-clouds.yaml",
    "examples/contact-center/platform/providerconfigs.yaml",
    "examples/openstack/apps/platform-config/environment-eu-de-1.yaml",
    *(
        f"examples/cluster/platform/environment-{n}.yaml"
        for n in ("baseline", "org", "gcp", "aws", "azure", "production")
    ),
)

DRC = ("pkg.crossplane.io/v1beta1", "DeploymentRuntimeConfig", "function-platform")
FUNCTION_DEPLOYMENT_PREFIX = "function-platform"


def namespaced(doc: dict[str, Any]) -> dict[str, Any]:
    """The Crossplane v2 namespaced composite a claim of examples/openstack stands for: kind
    X<kind>, the claim's apiVersion, name and namespace (docs/openstack.md: in that form the
    composite plays the claim). Other examples are namespaced composites already."""
    if doc["apiVersion"].split("/")[0].endswith("c5c3.io") and not doc["kind"].startswith("X"):
        return {**doc, "kind": "X" + doc["kind"]}
    return doc


def caps_from(text: str) -> dict[str, int]:
    """``cluster=4,contact-center=10`` -> {module: at most that many} (LIVE_SCALE_MAX)."""
    out = {}
    for part in filter(None, (p.strip() for p in text.split(","))):
        module, _, count = part.partition("=")
        out[module.strip()] = int(count)
    return out


def mix(n: int, prefix: str = "s", caps: dict[str, int] | None = None) -> list[dict[str, Any]]:
    """``n`` composites drawn from MIX in proportion to the weights, interleaved (the first
    ``len(MIX)`` are one of each), each renamed ``<name>-<prefix><i>``. ``caps`` (default:
    LIVE_SCALE_MAX, e.g. ``cluster=4,contact-center=10``) bounds how many of a module's
    composites there are; past it, an async actor instead: the heavy composites (a cluster
    composes about 110 resources, a contact-center endpoint 60, an environment 45, an actor
    8) are what the API server of a 2-core plane spends its time applying. Each openstack
    tenant gets a namespace of its own, ``tenant-<prefix><i>``: a tenant is its namespace."""
    if caps is None:
        caps = caps_from(os.environ.get("LIVE_SCALE_MAX", ""))
    rounds = max(weight for _, weight in MIX)
    order = [path for k in range(rounds) for path, weight in MIX if k < weight]
    templates = {path: namespaced(docs_of(REPO / path)[0]) for path, _ in MIX}
    out = []
    counts: dict[str, int] = {}
    for i in range(n):
        path = order[i % len(order)]
        module = path.split("/")[1]
        counts[module] = counts.get(module, 0) + 1
        if module in caps and counts[module] > caps[module]:
            path = MIX[0][0]
        doc = copy.deepcopy(templates[path])
        doc["metadata"]["name"] = f"{doc['metadata']['name']}-{prefix}{i}"
        if path == OPENSTACK_TENANT:
            doc["metadata"]["namespace"] = f"tenant-{prefix}{i}"
        frontend = (doc.get("spec") or {}).get("frontend")
        if frontend and "appName" in frontend:  # the environment names its app's objects
            frontend["appName"] = f"{frontend['appName']}{prefix}{i}"
        params = (doc.get("spec") or {}).get("parameters") or {}
        if "domain" in params:  # a cluster's DNS zone
            params["domain"] = f"{prefix}{i}.{params['domain']}"
        out.append(doc)
    return out


def prepare(live: Live) -> None:
    """Apply what the mix needs (namespaces included), the openstack tenants' shared pools too,
    with the openstack platform's ProviderConfigs (openstack.install): a pool's Objects need
    them to be deleted as much as to be created (provider-kubernetes connects before it removes
    an Object's finalizer), and the pools stay until the form is uninstalled."""
    kube = live.kube
    openstack.install(live)
    pools = [namespaced(d) for d in docs_of(*(REPO / p for p in OPENSTACK_POOLS))]
    for doc in [*docs_of(*(REPO / p for p in NEEDS)), ASYA_RUNTIME, *pools]:
        ensure_namespace(live, doc)
        kube.apply(doc)


def ensure_namespace(live: Live, doc: dict[str, Any]) -> None:
    """The namespace ``doc`` goes into exists."""
    ns = doc["metadata"].get("namespace")
    if ns:
        live.kube.apply({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})


def key(doc: dict[str, Any]) -> str:
    """``Kind/namespace/name``."""
    meta = doc["metadata"]
    return f"{doc['kind']}/{meta.get('namespace', '')}/{meta['name']}"


def get(live: Live, doc: dict[str, Any]) -> Any:
    """The composite ``doc`` names, as its kind's informer has it (None: not there): the
    waits read every composite of the load every few seconds, as many gets each time."""
    meta = doc["metadata"]
    try:
        found = live.kube.cached(doc["apiVersion"], doc["kind"]).get(
            meta["name"], meta.get("namespace")
        )
    except LookupError:  # the kind is not served (any more)
        return None
    return View(found) if found is not None else None


def refs(xr: Any) -> list[dict[str, Any]]:
    """The composite's composed resource references."""
    spec = xr.to_dict().get("spec") or {} if xr is not None else {}
    return list(
        spec.get("resourceRefs") or (spec.get("crossplane") or {}).get("resourceRefs") or []
    )


def settled(xr: Any) -> bool:
    """Ready; or, an openstack tenant whose pools cannot be Ready here (OPENSTACK_POOLS),
    answered: Synced, and PoolsReady=False saying which pools it waits for."""
    if is_true(xr, "Ready"):
        return True
    if xr is None or xr.kind != "XOpenStackCluster":
        return False
    pools = condition(xr, "PoolsReady")
    return is_true(xr, "Synced") and pools is not None and pools.get("status") == "False"


def not_ready(
    live: Live, docs: list[dict[str, Any]], *, pending_on_pools: bool = False
) -> list[str]:
    """The composites of ``docs`` that are not Ready (with ``pending_on_pools``: not settled,
    an openstack tenant answered Pending on its pools counting as settled), with their
    Ready/Synced conditions."""
    accept = settled if pending_on_pools else (lambda xr: is_true(xr, "Ready"))
    out = []
    for doc in docs:
        xr = get(live, doc)
        if not accept(xr):
            out.append(
                f"{key(doc)}: Ready={condition(xr, 'Ready') if xr else None} "
                f"Synced={condition(xr, 'Synced') if xr else None}"
            )
    return out


def wait_ready(
    live: Live, docs: list[dict[str, Any]], timeout: float, *, pending_on_pools: bool = False
) -> float:
    """Wait until every composite of ``docs`` is Ready (with ``pending_on_pools``: settled, see
    :func:`settled`, for the mixed load whose tenants' pools the load does not make Ready);
    the seconds it took. Fails naming the composites that are not, with their conditions."""
    t = time.monotonic()
    what = "settled" if pending_on_pools else "Ready"
    try:
        live.wait(
            f"{len(docs)} composites {what}",
            lambda: not not_ready(live, docs, pending_on_pools=pending_on_pools),
            timeout,
        )
    except TimeoutError as e:
        missing = not_ready(live, docs, pending_on_pools=pending_on_pools)
        raise AssertionError(f"{e}: {len(missing)} not {what}:\n" + "\n".join(missing[:15])) from e
    return time.monotonic() - t


def ready_count(live: Live, docs: list[dict[str, Any]]) -> int:
    """How many composites of ``docs`` are Ready."""
    return sum(is_true(get(live, doc), "Ready") for doc in docs)


def composed_uids(live: Live, docs: list[dict[str, Any]]) -> dict[str, str | None]:
    """``Kind/namespace/name`` -> uid of everything the composites compose now (Usages
    excepted: Crossplane replaces those freely), None for a reference to nothing."""
    kube = live.kube
    out: dict[str, str | None] = {}
    for doc in docs:
        ns = doc["metadata"].get("namespace")
        for r in refs(get(live, doc)):
            if r["kind"].endswith("Usage"):
                continue
            rns = r.get("namespace") or ns
            obj = kube.get(r["apiVersion"], r["kind"], r["name"], rns)
            out[f"{r['apiVersion']}/{r['kind']}/{rns or ''}/{r['name']}"] = (
                obj.metadata.uid if obj is not None else None
            )
    return out


def lost(before: dict[str, str | None], live: Live, docs: list[dict[str, Any]]) -> list[str]:
    """What was composed in ``before`` and is now gone or replaced (another uid)."""
    kube = live.kube
    out = []
    for ref, uid in before.items():
        api_version, kind, ns, name = ref.rsplit("/", 3)
        obj = kube.get(api_version, kind, name, ns or None)
        if obj is None:
            out.append(f"{ref}: deleted")
        elif obj.metadata.uid != uid:
            out.append(f"{ref}: replaced ({uid} -> {obj.metadata.uid})")
        elif obj.metadata.deletionTimestamp:
            out.append(f"{ref}: being deleted")
    del docs
    return out


def delete_all(live: Live, docs: list[dict[str, Any]], timeout: float = 600) -> float:
    """Delete the composites and wait until they are gone; the seconds it took."""
    t = time.monotonic()
    for doc in docs:
        meta = doc["metadata"]
        live.kube.delete(doc["apiVersion"], doc["kind"], meta["name"], meta.get("namespace"))
    live.wait(
        f"{len(docs)} composites deleted", lambda: all(get(live, d) is None for d in docs), timeout
    )
    return time.monotonic() - t


def set_replicas(live: Live, replicas: int) -> None:
    """The function's DeploymentRuntimeConfig asks for ``replicas`` (Crossplane updates the
    Deployment; the kubelet stand-in runs one process per replica)."""
    drc = live.kube.get(*DRC)
    live.kube.patch(drc, {"spec": {"deploymentTemplate": {"spec": {"replicas": replicas}}}})


def replica_addresses(live: Live) -> list[str]:
    """The function Deployment's replicas' addresses, replica 0 first."""
    assert live.kubelet is not None
    for k, addresses in live.kubelet.running.items():
        if k.split("/", 1)[1].startswith(FUNCTION_DEPLOYMENT_PREFIX):
            return list(addresses)
    return []


def replica_processes(live: Live) -> list[str]:
    """The function Deployment's replicas' process names, replica 0 first."""
    assert live.kubelet is not None
    for k in live.kubelet.running:
        if k.split("/", 1)[1].startswith(FUNCTION_DEPLOYMENT_PREFIX):
            return live.kubelet.replica_names(k)
    return []


def wait_replicas(live: Live, replicas: int, timeout: float = 120) -> list[str]:
    """Wait until exactly ``replicas`` replicas run and listen on the gRPC port."""

    def serving() -> bool:
        addresses = replica_addresses(live)
        return len(addresses) == replicas and all(_listening(a, GRPC_PORT) for a in addresses)

    live.wait(f"{replicas} function replicas serving", serving, timeout)
    return replica_addresses(live)


# --- measurements ---------------------------------------------------------------------------


def quantile(buckets: list[tuple[float, float]], q: float) -> float:
    """The q-quantile of a cumulative histogram [(le, count)], interpolated linearly within
    the bucket as Prometheus' histogram_quantile does; the highest finite bound if it falls in
    +Inf."""
    buckets = sorted(buckets)
    total = buckets[-1][1] if buckets else 0.0
    if total <= 0:
        return float("nan")
    rank = q * total
    lower, below = 0.0, 0.0
    for le, count in buckets:
        if count >= rank:
            if le == float("inf"):
                return lower
            return lower + (le - lower) * (
                (rank - below) / (count - below) if count > below else 1.0
            )
        lower, below = le, count
    return lower


def merged_buckets(
    samples: list[Any], name: str, since: dict[float, float] | None = None
) -> dict[float, float]:
    """``le`` -> cumulative count over every series of the ``<name>_bucket`` samples, less
    ``since`` (a snapshot of the same)."""
    out: dict[float, float] = {}
    for s in samples:
        if s.name == f"{name}_bucket":
            le = float(s.labels["le"])
            out[le] = out.get(le, 0.0) + s.value
    for le, count in (since or {}).items():
        out[le] = out.get(le, 0.0) - count
    return out


def crossplane_samples() -> list[Any]:
    """Every sample Crossplane core serves on its metrics port."""
    import urllib.request

    from prometheus_client.parser import text_string_to_metric_families

    with urllib.request.urlopen(CROSSPLANE_METRICS, timeout=5) as rsp:
        text = rsp.read().decode()
    return [s for f in text_string_to_metric_families(text) for s in f.samples]


def function_samples(live: Live) -> list[Any]:
    """Every histogram sample of the function's compose time, over every replica."""
    return [
        s
        for a in replica_addresses(live)
        for s in replica_samples(a, "function_platform_compose_seconds_bucket")
    ]


def process_usage(pid: int) -> tuple[float, float]:
    """(CPU seconds, peak RSS MiB) of a process and its children (the function with
    --processes has workers) from /proc."""
    tick = os.sysconf("SC_CLK_TCK")
    cpu, peak = 0.0, 0.0
    for p in [pid, *_children(pid)]:
        try:
            stat = Path(f"/proc/{p}/stat").read_text().rsplit(")", 1)[1].split()
            cpu += (int(stat[11]) + int(stat[12])) / tick
            for line in Path(f"/proc/{p}/status").read_text().splitlines():
                if line.startswith("VmHWM:"):
                    peak += int(line.split()[1]) / 1024
        except OSError:
            continue
    return cpu, peak


def _children(pid: int) -> list[int]:
    out: list[int] = []
    try:
        for task in Path(f"/proc/{pid}/task").iterdir():
            text = (task / "children").read_text().split()
            for child in map(int, text):
                out += [child, *_children(child)]
    except OSError:
        pass
    return out


@dataclass
class Measure:
    """What one load measured, as bench/results.md "Scale" reports it."""

    composites: int
    replicas: int
    ready_s: float = 0.0
    #: every composite settled within the test's bound (else ``ready_s`` is that bound and
    #: ``ready`` says how many were Ready by then)
    converged: bool = True
    #: of ``composites``, how many are Ready and how many are openstack tenants answered
    #: Pending on their pools (load.settled: the live plane has no Gardener kubeconfigs)
    ready: int = 0
    pending_on_pools: int = 0
    #: composite kind -> how many of the load (mix(): MIX and LIVE_SCALE_MAX)
    mix: dict[str, int] = field(default_factory=dict)
    calls: float = 0.0
    fn_p50_ms: float = 0.0
    fn_p99_ms: float = 0.0
    xp_p50_ms: float = 0.0
    xp_p99_ms: float = 0.0
    per_replica: dict[str, dict[str, float]] = field(default_factory=dict)

    def json(self) -> str:
        """One JSON line."""
        return json.dumps(self.__dict__, sort_keys=True)


def snapshot(live: Live) -> dict[str, Any]:
    """Counters to measure a load from: Crossplane's run_function_seconds buckets and calls."""
    xp = crossplane_samples()
    return {
        "xp": merged_buckets(xp, "function_run_function_seconds"),
        "fn": merged_buckets(function_samples(live), "function_platform_compose_seconds"),
    }


def measure(live: Live, before: dict[str, Any], composites: int, ready_s: float) -> Measure:
    """The load's figures since ``before`` (snapshot())."""
    xp = merged_buckets(crossplane_samples(), "function_run_function_seconds", before["xp"])
    fn = merged_buckets(function_samples(live), "function_platform_compose_seconds", before["fn"])
    xp_b, fn_b = sorted(xp.items()), sorted(fn.items())
    m = Measure(composites, len(replica_addresses(live)), round(ready_s, 1))
    m.calls = xp_b[-1][1] if xp_b else 0.0
    m.xp_p50_ms, m.xp_p99_ms = (round(quantile(xp_b, q) * 1000, 1) for q in (0.5, 0.99))
    m.fn_p50_ms, m.fn_p99_ms = (round(quantile(fn_b, q) * 1000, 2) for q in (0.5, 0.99))
    assert live.kubelet is not None
    for name, address in zip(replica_processes(live), replica_addresses(live), strict=False):
        pid = live.procs.pid(name)
        cpu, rss = process_usage(pid) if pid else (0.0, 0.0)
        calls = sum(s.value for s in replica_samples(address, "function_platform_requests_total"))
        # passes not composed again: only their observed reads were compared
        # (fnplatform.engine.reuse)
        reused = sum(
            s.value for s in replica_samples(address, "function_platform_passes_reused_total")
        )
        m.per_replica[name] = {
            "cpu_s": round(cpu, 1),
            "peak_rss_mib": round(rss, 1),
            "calls": calls,
            "reused": reused,
        }
    return m
