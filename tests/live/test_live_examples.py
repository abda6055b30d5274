"""Each module's example, as a user applies it from examples/, reconciles to Ready=True through
real Crossplane, the function over mTLS, real provider-kubernetes and the stand-ins; the claim
owner gets the Secret the docs promise; a changed claim converges again replacing nothing it
keeps; deleting it finishes, every composed resource gone; bad input reaches the claim as an
event naming the field (issue 21, 2 to 5); no composite is ever Responsive=False (issue 30,
6). Time-to-Ready and watch events are recorded (bench/results.md)."""

from __future__ import annotations

import copy
import json
import os
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from kubernetes.dynamic.exceptions import DynamicApiError

from tests.live.controlplane import REPO
from tests.live.kube import condition, docs_of, is_true
from tests.live.layers import Live
from tests.live.metrics import counter_delta, crossplane_counters, function_calls
from tests.support.table import case

pytestmark = pytest.mark.live

#: How long an example may take to turn Ready; bench/live_ttl.py raises it (LIVE_READY_WITHIN_S)
#: so a slower TTL variant is measured rather than cut off.
READY_WITHIN_S = float(os.environ.get("LIVE_READY_WITHIN_S", "150"))
#: After Ready the composite is left alone until a QUIET_WINDOW_S window counts at most
#: QUIET_EVENTS_AT_MOST watch events (the last writes of a pass settle: Usages labelling what
#: they protect, status of the last resources), within QUIET_WITHIN_S: a loop never falls quiet.
QUIET_WINDOW_S = 10.0
QUIET_EVENTS_AT_MOST = 4
QUIET_WITHIN_S = 60.0


@dataclass(frozen=True)
class Example:
    """One example: the EnvironmentConfigs (and other prerequisites) it needs, then the claim
    (v1 form) or the namespaced XR (v2 form)."""

    module: str
    needs: tuple[str, ...]
    v1: str
    v2: str | None
    #: what the module's docs tell the user to create first that no file of examples/ holds
    prepared: tuple[dict[str, Any], ...] = ()
    #: keys of the Secret the docs promise the claim owner in the claim's namespace (v1: the
    #: claim's writeConnectionSecretToRef; v2: the Secret status.kubeconfigSecret names)
    connection_keys: tuple[str, ...] = ()
    change: Change | None = None


@dataclass(frozen=True)
class Change:
    """A change of the claim that must converge again without replacing what it keeps."""

    path: str  # dotted path in the claim (v1) or XR (v2), a list is appended to with "+"
    value: Any
    shows: str  # text a composed resource's spec holds once the change is composed


#: docs/async-actor.md "The runtime script": the Asya release's script, installed per actor
#: namespace (`kubectl -n ml create configmap asya-runtime --from-file=asya_runtime.py=...`);
#: a stand-in script here, the kubelet stand-in only checks that the ConfigMap and key exist
ASYA_RUNTIME = {
    "apiVersion": "v1",
    "kind": "ConfigMap",
    "metadata": {"name": "asya-runtime", "namespace": "ml"},
    "data": {"asya_runtime.py": "# stand-in for the Asya release's runtime script\n"},
}


EXAMPLES = [
    Example(
        "async-actor",
        ("examples/async-actor/platform/environment.yaml",),
        "examples/async-actor/claim.yaml",
        "examples/async-actor/namespaced/xr.yaml",
        (ASYA_RUNTIME,),
    ),
    Example(
        "cluster",
        tuple(
            f"examples/cluster/platform/environment-{n}.yaml"
            for n in ("baseline", "org", "gcp", "aws", "azure", "production")
        ),
        "examples/cluster/claim-aws.yaml",
        "examples/cluster/namespaced/xr-aws.yaml",
        connection_keys=("kubeconfig",),
        change=Change(
            "spec.pools.extra",
            {"autoscaling": {"minNodeCount": 1, "maxNodeCount": 2}},
            shows='"platform.fn.crossplane.io/pool": "extra"',
        ),
    ),
    Example(
        "contact-center",
        (
            "examples/contact-center/platform/environment-regions.yaml",
            "examples/contact-center/platform/environment-clouds.yaml",
            "examples/contact-center/platform/providerconfigs.yaml",
        ),
        "examples/contact-center/claim-azure.yaml",
        "examples/contact-center/namespaced/xr-azure.yaml",
        change=Change("spec.sip.trustedCidrs+", "203.0.113.64/26", shows="203.0.113.64/26"),
    ),
    Example(
        "environment",
        ("examples/environment/platform/environment.yaml",),
        "examples/environment/claim-aws.yaml",
        "examples/environment/namespaced/xr-aws.yaml",
        change=Change(
            "spec.frontend.microFrontends+",
            {"name": "loyalty", "path": "/loyalty"},
            shows="/loyalty",
        ),
    ),
]


def _ensure_namespace(platform: Live, doc: dict[str, Any]) -> None:
    ns = doc["metadata"].get("namespace")
    if ns:
        platform.kube.apply({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": ns}})


def _composite(platform: Live, doc: dict[str, Any]) -> Any:
    """The claim's composite (v1) or the XR itself (v2)."""
    kube = platform.kube
    obj = kube.get(
        doc["apiVersion"], doc["kind"], doc["metadata"]["name"], doc["metadata"].get("namespace")
    )
    ref = (obj.to_dict().get("spec") or {}).get("resourceRef") if obj else None
    if ref:
        return kube.get(ref["apiVersion"], ref["kind"], ref["name"])
    return obj


def _refs(xr: Any) -> list[dict[str, Any]]:
    spec = xr.to_dict().get("spec") or {}
    return list(
        spec.get("resourceRefs") or (spec.get("crossplane") or {}).get("resourceRefs") or []
    )


def _not_ready(platform: Live, xr: Any) -> list[str]:
    """'Kind/name: Synced/Ready conditions' of each composed resource that is not Ready."""
    out = []
    ns = xr.metadata.namespace
    for ref in _refs(xr):
        obj = platform.kube.get(
            ref["apiVersion"], ref["kind"], ref["name"], ns if ref.get("namespace", ns) else None
        )
        if not is_true(obj, "Ready"):
            out.append(
                f"{ref['kind']}/{ref['name']}: Synced={condition(obj, 'Synced')} "
                f"Ready={condition(obj, 'Ready')}"
            )
    return out


def _example_rows() -> list[Any]:
    """One row per example, its reason made from what it applies and changes."""
    return [
        case(
            f"the {e.module} example as docs/ tell users to apply it ({e.v1}, or {e.v2} in the "
            f"v2 form) reaches Ready on a real control plane and deletes cleanly"
            + (f"; changing {e.change.path} is composed" if e.change else ""),
            e,
            id=e.module,
        )
        for e in EXAMPLES
    ]


@pytest.mark.parametrize("example", _example_rows())
def test_example_reaches_ready_and_deletes(platform: Live, example: Example) -> None:
    path = example.v1 if platform.form == "v1-claims" else example.v2
    if path is None:
        pytest.fail(f"{example.module} has no {platform.form} example in examples/")
    kube = platform.kube
    for need in example.needs:
        for doc in docs_of(REPO / need):
            _ensure_namespace(platform, doc)
            kube.apply(doc)
    for doc in example.prepared:
        _ensure_namespace(platform, doc)
        kube.apply(doc)
    (claim,) = docs_of(Path(REPO / path))
    _ensure_namespace(platform, claim)
    calls_before = function_calls(platform)
    events_before = crossplane_counters("circuit_breaker_events_total")
    opens_before = crossplane_counters("circuit_breaker_opens_total")
    kube.apply(claim)
    name, ns = claim["metadata"]["name"], claim["metadata"].get("namespace")

    def ready() -> bool:
        return is_true(kube.get(claim["apiVersion"], claim["kind"], name, ns), "Ready")

    try:
        took = platform.wait(f"{example.module} {path} Ready", ready, READY_WITHIN_S)
    except TimeoutError:
        obj = kube.get(claim["apiVersion"], claim["kind"], name, ns)
        xr = _composite(platform, claim)
        # leave the next test a clean slate
        kube.delete(claim["apiVersion"], claim["kind"], name, ns)
        pytest.fail(
            f"{path} not Ready within {READY_WITHIN_S} s\n"
            f"claim/XR conditions: {(obj.to_dict().get('status') or {}).get('conditions')}\n"
            f"composite conditions: "
            f"{(xr.to_dict().get('status') or {}).get('conditions') if xr else None}\n"
            f"not ready: {_not_ready(platform, xr) if xr else 'no composite'}\n"
            f"stand-in errors: {platform.cloud.loop.errors if platform.cloud else ''}"
        )
    platform.record(f"ready_{example.module}_{platform.form}_s", took)
    platform.record(
        f"calls_{example.module}_{platform.form}", function_calls(platform) - calls_before
    )
    events_ready = crossplane_counters("circuit_breaker_events_total")
    platform.record(
        f"watch_events_to_ready_{example.module}_{platform.form}",
        sum(counter_delta(events_ready, events_before).values()),
    )
    # Ready and left alone, nothing may keep writing: a loop (desired state that changes
    # between passes, a provider or stand-in rewriting status) never falls quiet
    windows = _until_quiet(events_ready)
    platform.record(f"watch_events_settling_{example.module}_{platform.form}", sum(windows[:-1]))
    assert windows[-1] <= QUIET_EVENTS_AT_MOST, (
        f"watch events per {QUIET_WINDOW_S:.0f} s after Ready never fell to "
        f"{QUIET_EVENTS_AT_MOST}: {windows} (something writes in a loop)"
    )
    xr = _composite(platform, claim)
    refs = _refs(xr)
    assert refs, "a Ready composite composes resources"

    if example.connection_keys:
        _assert_connection_secret(platform, claim, example.connection_keys)
    if example.change is not None:
        refs = _assert_change_converges(platform, claim, example.change, refs)

    # a resource a Usage protects cannot be deleted while its user exists: Crossplane's
    # webhook refuses (dry run: admitted or refused exactly as a real delete, nothing deleted)
    for r in refs:
        obj = kube.get(r["apiVersion"], r["kind"], r["name"], r.get("namespace") or ns)
        if obj is None or (obj.metadata.labels or {}).get("crossplane.io/in-use") != "true":
            continue
        res = kube.resource(r["apiVersion"], r["kind"])
        with pytest.raises(DynamicApiError) as refused:
            res.delete(
                name=r["name"],
                namespace=(r.get("namespace") or ns) if res.namespaced else None,
                dry_run="All",
            )
        assert "in-use" in str(refused.value) or "in use" in str(refused.value).lower()
        break

    # deletion finishes: the claim, its composite and every composed resource go
    t = time.monotonic()
    kube.delete(claim["apiVersion"], claim["kind"], name, ns)

    def gone() -> bool:
        if kube.get(claim["apiVersion"], claim["kind"], name, ns) is not None:
            return False
        return all(
            kube.get(r["apiVersion"], r["kind"], r["name"], r.get("namespace") or ns) is None
            for r in refs
            if not r["kind"].endswith("Usage")
        )

    platform.wait(f"{path} deleted with every composed resource", gone, 240)
    platform.record(f"delete_{example.module}_{platform.form}_s", time.monotonic() - t)
    _assert_responsive_throughout(
        platform, example, {name, xr.metadata.name}, events_before, opens_before
    )


def _until_quiet(since: dict[Any, float]) -> list[float]:
    """Watch events per QUIET_WINDOW_S window from ``since`` until one is quiet (or
    QUIET_WITHIN_S passed): the counts, the last one the quiet (or last) window's."""
    windows: list[float] = []
    previous = since
    while True:
        time.sleep(QUIET_WINDOW_S)
        now = crossplane_counters("circuit_breaker_events_total")
        windows.append(sum(counter_delta(now, previous).values()))
        previous = now
        if windows[-1] <= QUIET_EVENTS_AT_MOST or len(windows) * QUIET_WINDOW_S >= QUIET_WITHIN_S:
            return windows


def _assert_responsive_throughout(
    platform: Live,
    example: Example,
    names: set[str],
    events_before: dict[Any, float],
    opens_before: dict[Any, float],
) -> None:
    """No composite of the example was ever ``Responsive=False`` (its watch circuit breaker
    open) from apply through Ready, change and delete, and no breaker opened; the watch events
    Crossplane's breakers counted meanwhile are recorded as ``watch_events_<module>_<form>``
    (one example runs at a time, so they are this composite's: its own, its composed
    resources' and its required resources' events; core v2.4 internal/circuit/mapfunc.go)."""
    assert platform.responsive is not None
    events = counter_delta(crossplane_counters("circuit_breaker_events_total"), events_before)
    opened = counter_delta(crossplane_counters("circuit_breaker_opens_total"), opens_before)
    platform.record(f"watch_events_{example.module}_{platform.form}", sum(events.values()))
    dropped = {k: v for k, v in events.items() if ("result", "Dropped") in k}
    assert platform.responsive.of(names) == {}, (
        f"Responsive=False seen: {platform.responsive.of(names)}"
    )
    assert opened == {} and dropped == {}, (
        f"circuit breakers opened {opened}, dropped events {dropped}; events {events}"
    )


def _assert_connection_secret(platform: Live, claim: dict[str, Any], keys: tuple[str, ...]) -> None:
    """The Secret the docs promise is in the claim's namespace, with ``keys`` (issue 21, 3)."""
    kube, ns = platform.kube, claim["metadata"]["namespace"]
    if platform.form == "v1-claims":
        name = claim["spec"]["writeConnectionSecretToRef"]["name"]
    else:

        def named() -> bool:
            xr = _composite(platform, claim)
            return bool(((xr.to_dict() if xr else {}).get("status") or {}).get("kubeconfigSecret"))

        platform.wait("status.kubeconfigSecret", named, 60)
        name = _composite(platform, claim).to_dict()["status"]["kubeconfigSecret"]

    def there() -> bool:
        secret = kube.get("v1", "Secret", name, ns)
        return secret is not None and set(keys) <= set(secret.to_dict().get("data") or {})

    try:
        platform.wait(f"Secret {ns}/{name} with {', '.join(keys)}", there, 60)
    except TimeoutError:
        xr = _composite(platform, claim)
        ref = ((xr.to_dict() if xr else {}).get("spec") or {}).get("writeConnectionSecretToRef")
        xr_secret = kube.get("v1", "Secret", ref["name"], ref.get("namespace")) if ref else None
        pytest.fail(
            f"no Secret {ns}/{name} with {keys}; the composite's writeConnectionSecretToRef: "
            f"{ref}; its Secret's keys: "
            f"{sorted(xr_secret.to_dict().get('data') or {}) if xr_secret else None}"
        )


def _with(doc: dict[str, Any], change: Change) -> dict[str, Any]:
    changed = copy.deepcopy(doc)
    *parents, last = change.path.split(".")
    target = changed
    for part in parents:
        target = target.setdefault(part, {})
    if last.endswith("+"):
        target[last[:-1]] = [*target.get(last[:-1], []), change.value]
    else:
        target[last] = change.value
    return changed


def _assert_change_converges(
    platform: Live, claim: dict[str, Any], change: Change, refs: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """The changed claim is Ready again with the change composed, and every resource it kept
    is the same object (same uid: not replaced). Returns the composed refs after the change."""
    kube, ns = platform.kube, claim["metadata"].get("namespace")

    def uid(ref: dict[str, Any]) -> str | None:
        obj = kube.get(ref["apiVersion"], ref["kind"], ref["name"], ref.get("namespace") or ns)
        return obj.metadata.uid if obj is not None else None

    kept = [r for r in refs if not r["kind"].endswith("Usage")]
    before = {(r["kind"], r["name"]): uid(r) for r in kept}

    def composed_specs() -> list[str]:
        found = []
        for ref in _refs(_composite(platform, claim)):
            obj = kube.get(ref["apiVersion"], ref["kind"], ref["name"], ref.get("namespace") or ns)
            if obj is not None:
                found.append(json.dumps(obj.to_dict().get("spec") or {}))
        return found

    assert not [s for s in composed_specs() if change.shows in s], (
        f"{change.shows!r} is composed before the change: the check would prove nothing"
    )
    t = time.monotonic()
    kube.apply(_with(claim, change))

    def converged() -> bool:
        obj = kube.get(claim["apiVersion"], claim["kind"], claim["metadata"]["name"], ns)
        xr = _composite(platform, claim)
        if not (is_true(obj, "Ready") and xr is not None):
            return False
        return any(change.shows in spec for spec in composed_specs())

    platform.wait(f"{claim['kind']} with {change.path} changed Ready", converged, READY_WITHIN_S)
    platform.record(f"change_{claim['kind']}_{platform.form}_s", time.monotonic() - t)
    after = _refs(_composite(platform, claim))
    replaced = sorted(
        f"{r['kind']}/{r['name']}"
        for r in kept
        if uid(r) not in (before[(r["kind"], r["name"])], None)
    )
    assert replaced == [], f"the change replaced {replaced}"
    return after


def test_bad_input_reaches_the_claim_as_an_event_naming_the_field(platform: Live) -> None:
    """A fatal result of the function becomes a Warning event on the claim or its composite,
    naming the field the user got wrong (issue 21, 3; issue 24, 4)."""
    example = EXAMPLES[0]  # async-actor: its flavors are looked up by the function only
    kube = platform.kube
    for need in example.needs:
        for doc in docs_of(REPO / need):
            _ensure_namespace(platform, doc)
            kube.apply(doc)
    (claim,) = docs_of(REPO / (example.v1 if platform.form == "v1-claims" else str(example.v2)))
    bad = copy.deepcopy(claim)
    bad["metadata"]["name"] = "bad-flavor"
    bad["spec"]["flavors"] = ["no-such-flavor"]
    _ensure_namespace(platform, bad)
    kube.apply(bad)
    ns = bad["metadata"]["namespace"]

    def warned() -> list[str]:
        names = {"bad-flavor"}
        xr = _composite(platform, bad)
        if xr is not None:
            names.add(xr.metadata.name)
        return [
            e.message
            for e in kube.events()
            if e.type == "Warning"
            and e.involvedObject.name in names
            and "spec.flavors" in (e.message or "")
        ]

    try:
        platform.wait("a Warning event naming spec.flavors", lambda: bool(warned()), 90)
        found = warned()
    finally:
        kube.delete(bad["apiVersion"], bad["kind"], "bad-flavor", ns)
    assert found and not [m for m in found if "Traceback" in m], found
