"""The upgrade preview predicts what an upgrade does on a live control plane, exactly.

The function runs at the previous release, v0.1.0 (its commit, ``git archive``d: the kubelet
stand-in runs the pods of the v0.1.0 package from that tree, ``KubeletStandIn.run_release``);
examples are composed until Ready, one of them an environment whose region v0.1.0 accepted
and this checkout refuses for a new environment only (``europe-wset1``: the region check added
after 0.1.0 warns on an existing one, as the deprecation policy promises). The preview
reads the cluster through kubectl (``--kubeconfig``, the kubectl of tools/live/build.sh) and
renders every composite with v0.1.0 and this checkout. Then the upgrade happens as a user makes
it: this checkout's package is published under a new version and the Function pointed at it;
Crossplane rolls the FunctionRevision and the pods run this checkout. Once the composites
settle, what the preview predicted is what happened: every resource predicted unchanged or
changed keeps its uid (a predicted change is present), a predicted creation exists as a new
uid, a predicted deletion is gone, and a warning the preview marks new is the composite's
Warning event, while the composite stays Synced. Afterwards the Function
is back at v0.1.0 running this checkout, as the session installed it.
"""

from __future__ import annotations

import copy
import json
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fnplatform.upgrade.functions import extract
from fnplatform.upgrade.inputs import COMPOSITION_RESOURCE_NAME
from fnplatform.upgrade.preview import EXIT_SAFE

from tests.live import crossplane as xp
from tests.live.controlplane import REGISTRY, REPO, binaries
from tests.live.kube import condition, docs_of, is_true
from tests.live.layers import Live
from tests.live.test_live_examples import ASYA_RUNTIME

pytestmark = pytest.mark.live

#: v0.1.0, the release the cluster runs first (tests/upgrade/0.1.0/*: ``commit``).
RELEASE_VERSION, RELEASE_COMMIT = "v0.1.0", "de7f94b"
#: The version this checkout is published as for the upgrade.
CANDIDATE_VERSION = "v0.1.1-candidate"
READY_WITHIN_S = 420.0
#: A region of no cloud that v0.1.0 composed; this checkout refuses it for a new environment
#: and warns on an existing one (reason UnknownRegion).
TYPO_REGION, TYPO_WARNING = (
    "europe-wset1",
    "spec.region: europe-wset1 is not a region of gcp; did you mean europe-west1?",
)
TYPO_REASON = "UnknownRegion"
FUNCTION = ("pkg.crossplane.io/v1", "Function", "function-platform")


def _examples(form: str) -> list[dict[str, Any]]:
    """What the test composes: environment on AWS, environment on GCP in a region of no
    cloud, an async actor; their settings first."""
    v1 = form == "v1-claims"
    environment = "examples/environment/" + ("claim-{}.yaml" if v1 else "namespaced/xr-{}.yaml")
    actor = "examples/async-actor/" + ("claim.yaml" if v1 else "namespaced/xr.yaml")
    (aws,) = docs_of(REPO / environment.format("aws"))
    (gcp,) = docs_of(REPO / environment.format("gcp"))
    typo = copy.deepcopy(gcp)
    typo["metadata"]["name"] = "typo-squad"
    typo["spec"]["region"] = TYPO_REGION
    (async_actor,) = docs_of(REPO / actor)
    return [aws, typo, async_actor]


def _settings() -> list[dict[str, Any]]:
    return [
        *docs_of(REPO / "examples/environment/platform/environment.yaml"),
        *docs_of(REPO / "examples/async-actor/platform/environment.yaml"),
        ASYA_RUNTIME,
    ]


def _get(live: Live, doc: dict[str, Any]) -> Any:
    """The object ``doc`` names, as the API server has it now (None when gone)."""
    meta = doc["metadata"]
    return live.kube.get(doc["apiVersion"], doc["kind"], meta["name"], meta.get("namespace"))


def _composite(live: Live, doc: dict[str, Any]) -> dict[str, Any] | None:
    """The claim's composite (v1) or the XR itself (v2), as a dict."""
    kube = live.kube
    meta = doc["metadata"]
    obj = kube.get(doc["apiVersion"], doc["kind"], meta["name"], meta.get("namespace"))
    if obj is None:
        return None
    body = obj.to_dict()
    ref = (body.get("spec") or {}).get("resourceRef")
    if ref:
        xr = kube.get(ref["apiVersion"], ref["kind"], ref["name"])
        return xr.to_dict() if xr is not None else None
    return dict(body)


def _composed(live: Live, xr: dict[str, Any]) -> dict[str, tuple[str, str, str]]:
    """composition-resource-name -> (kind, name, uid) of every composed resource there now."""
    spec = xr.get("spec") or {}
    refs = spec.get("resourceRefs") or (spec.get("crossplane") or {}).get("resourceRefs") or []
    namespace = xr["metadata"].get("namespace")
    out = {}
    for ref in refs:
        obj = live.kube.get(ref["apiVersion"], ref["kind"], ref["name"], namespace)
        if obj is None:
            continue
        body = obj.to_dict()
        resource = (body["metadata"].get("annotations") or {}).get(COMPOSITION_RESOURCE_NAME)
        if resource:
            out[resource] = (ref["kind"], ref["name"], body["metadata"]["uid"])
    return out


def _publish_candidate(live: Live, workdir: Path) -> str:
    """This checkout's package, told apart from the installed one by an annotation (another
    digest, so Crossplane makes another revision), pushed as CANDIDATE_VERSION; the published
    reference the Function names (the ImageConfig rewrites it to the local registry)."""
    root = workdir / "package"
    shutil.copytree(REPO / "package", root)
    meta = root / "crossplane.yaml"
    meta.write_text(
        meta.read_text().replace(
            "  annotations:\n",
            f"  annotations:\n    platform.fn.crossplane.io/build: {CANDIDATE_VERSION}\n",
            1,
        )
    )
    cli = REPO / ".bin/crossplane"
    xpkg = workdir / "candidate.xpkg"
    subprocess.run(
        [str(cli), "xpkg", "build", f"--package-root={root}",
         f"--examples-root={REPO / 'examples'}", f"--package-file={xpkg}"],
        check=True, capture_output=True, cwd=REPO,
    )  # fmt: skip
    published = xp.FUNCTION_REF.replace(f":{RELEASE_VERSION}", f":{CANDIDATE_VERSION}")
    local = published.replace(xp.PUBLISHED_PREFIX, f"{REGISTRY}/myplatform/")
    push = [str(cli), "xpkg", "push", "-f", str(xpkg), local]
    subprocess.run(push, check=True, capture_output=True)
    return published


def _install(live: Live, package: str) -> None:
    """The Function of examples/install/40-function.yaml at ``package``, Healthy, its active
    revision that package, and its pods listening."""
    installed = docs_of(REPO / "examples/install/40-function.yaml")
    (function,) = [d for d in installed if d["kind"] == "Function"]
    function["spec"]["package"] = package
    live.kube.apply(function)
    version = package.rsplit(":", 1)[1]

    def rolled() -> bool:
        fn = live.kube.get(*FUNCTION)
        if not (is_true(fn, "Healthy") and is_true(fn, "Installed")):
            return False
        revisions = live.kube.list("pkg.crossplane.io/v1", "FunctionRevision")
        active = [
            r.to_dict()
            for r in revisions
            if r.to_dict()["spec"].get("desiredState") == "Active"
            and is_true(r, "RevisionHealthy")
            and is_true(r, "RuntimeHealthy")
        ]
        return any(r["spec"]["image"].endswith(f":{version}") for r in active)

    try:
        live.wait(f"Function function-platform at {version}, Healthy", rolled, 300)
    except TimeoutError as error:
        revisions = [
            {
                "name": r.metadata.name,
                "image": r.to_dict()["spec"].get("image"),
                "desiredState": r.to_dict()["spec"].get("desiredState"),
                "conditions": (r.to_dict().get("status") or {}).get("conditions"),
            }
            for r in live.kube.list("pkg.crossplane.io/v1", "FunctionRevision")
        ]
        kubelet = live.kubelet.errors if live.kubelet else []
        raise AssertionError(
            f"{error}\nFunction: {xp.function_status(live.kube)}\nrevisions: {revisions}\n"
            f"kubelet stand-in errors: {kubelet}"
        ) from error


def _preview(live: Live, workdir: Path, output: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [
            sys.executable, "-m", "fnplatform.upgrade", "preview",
            "--running", RELEASE_COMMIT,
            "--kubeconfig", str(live.cp.kubeconfig),
            "--kubectl", str(binaries()["kubectl"]),
            "--save-export", str(workdir / f"export-{output}.yaml"),
            "--output", output,
        ],
        cwd=REPO, capture_output=True, text=True, timeout=900, check=False,
    )  # fmt: skip


@pytest.fixture
def release_installed(platform: Live, tmp_path: Path) -> Iterator[Live]:
    """The function's pods running v0.1.0 (its tree) for the test; this checkout again after."""
    assert platform.kubelet is not None
    tree = tmp_path / "release"
    extract(REPO, RELEASE_COMMIT, tree)
    platform.kubelet.run_release(RELEASE_VERSION, tree)
    try:
        yield platform
    finally:
        platform.kubelet.run_release(RELEASE_VERSION, None)
        _install(platform, xp.FUNCTION_REF)


def test_the_preview_predicts_what_the_upgrade_does(
    release_installed: Live, tmp_path: Path
) -> None:
    live = release_installed
    kube = live.kube
    examples = _examples(live.form)
    for doc in [*_settings(), *examples]:
        namespace = doc["metadata"].get("namespace")
        if namespace:
            kube.apply({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": namespace}})
        kube.apply(doc)
    try:
        _check(live, examples, tmp_path)
    finally:
        for doc in examples:
            meta = doc["metadata"]
            kube.delete(doc["apiVersion"], doc["kind"], meta["name"], meta.get("namespace"))
        live.wait(
            "the upgrade test's composites deleted",
            lambda: all(_composite(live, doc) is None for doc in examples),
            300,
        )


def _check(live: Live, examples: list[dict[str, Any]], workdir: Path) -> None:
    kube = live.kube

    def all_ready() -> bool:
        """The examples Ready; the one in a region of no cloud composed (Synced, its
        resources there): observed under v0.1.0, its Cloud SQL instance stays unsynced on the
        live plane ("cannot get secret value for ...-db-root-password"), so the GCP
        environment stays Creating, which changes nothing the preview predicts."""
        typo = _composite(live, examples[1])
        composed = typo is not None and len(_composed(live, typo)) >= 20
        return composed and all(
            is_true(_get(live, d), "Synced" if d is examples[1] else "Ready") for d in examples
        )

    try:
        live.wait("the examples composed under v0.1.0", all_ready, READY_WITHIN_S)
    except TimeoutError as error:
        raise AssertionError(f"{error}\n{_diagnose(live, examples)}") from error
    time.sleep(15)  # the last writes of a pass settle (Usages labelling what they protect)
    composites = {d["metadata"]["name"]: _composite(live, d) for d in examples}
    before = {name: _composed(live, xr) for name, xr in composites.items() if xr}

    shown = _preview(live, workdir, "diff")
    print(shown.stdout, shown.stderr, sep="\n")
    assert shown.returncode == EXIT_SAFE, f"exit {shown.returncode}\n{shown.stdout}\n{shown.stderr}"
    assert TYPO_WARNING in shown.stdout, shown.stdout
    planned = _preview(live, workdir, "json")
    assert planned.returncode == EXIT_SAFE, planned.stderr
    plans = {c["name"]: c for c in json.loads(planned.stdout)["composites"]}
    ours = {name: plans[xr["metadata"]["name"]] for name, xr in composites.items() if xr}
    assert set(ours) == {d["metadata"]["name"] for d in examples}, sorted(plans)
    for name, plan in ours.items():
        assert plan["status"] == "unchanged", (name, plan)
    new_warnings = [w["message"] for w in ours["typo-squad"]["warnings"] if w["new"]]
    assert any(TYPO_WARNING in m for m in new_warnings), ours["typo-squad"]

    candidate = _publish_candidate(live, workdir)
    _install(live, candidate)
    # reconcile each composite now (an update of the composite is an event), not on its poll
    for xr in composites.values():
        assert xr is not None
        kube.patch(
            _get(live, xr),
            {"metadata": {"annotations": {"preview.test/upgraded-at": str(time.time())}}},
        )

    def warned() -> bool:
        """The predicted new warning, as the Warning event Crossplane records on the composite
        for the function's warning result; the composite stays Synced (never refused)."""
        xr = _composite(live, examples[1])
        if xr is None or not is_true(_get(live, xr), "Synced"):
            return False
        names = {xr["metadata"]["name"], examples[1]["metadata"]["name"]}
        return any(
            e.type == "Warning"
            and e.reason == TYPO_REASON
            and e.involvedObject.name in names
            and TYPO_WARNING in (e.message or "")
            for e in kube.events()
        )

    live.wait("the predicted warning on the existing composite, still Synced", warned, 240)
    live.wait(
        "the other examples Ready after the upgrade",
        lambda: all(is_true(_get(live, d), "Ready") for d in examples if d is not examples[1]),
        READY_WITHIN_S,
    )
    time.sleep(15)
    for name, plan in ours.items():
        xr = _composite(live, next(d for d in examples if d["metadata"]["name"] == name))
        assert xr is not None, name
        after = _composed(live, xr)
        changes = {c["resource"]: c for c in plan["changes"]}
        for resource, (kind, object_name, uid) in before[name].items():
            change = changes.get(resource)
            if change is None or change["action"] == "change":
                assert after.get(resource, (None, None, None))[2] == uid, (
                    f"{name}: {kind}/{object_name} ({resource}) was predicted "
                    f"{'unchanged' if change is None else 'changed in place'}; uid {uid} -> "
                    f"{after.get(resource)}"
                )
            elif change["action"] == "delete":
                assert resource not in after, f"{name}: {resource} was predicted deleted"
        for resource, change in changes.items():
            if change["action"] == "create":
                assert resource in after and resource not in before[name], (name, resource)
            if change["action"] == "change":
                there = kube.get(
                    change["after"]["apiVersion"],
                    change["after"]["kind"],
                    after[resource][1],
                    xr["metadata"].get("namespace"),
                ).to_dict()
                _assert_contains(
                    there.get("spec"), change["after"].get("spec"), f"{name}/{resource}"
                )


def _diagnose(live: Live, examples: list[dict[str, Any]]) -> str:
    """Each example's conditions, its composite's, and its composed resources not Ready."""
    lines = []
    for doc in examples:
        obj, xr = _get(live, doc), _composite(live, doc)
        lines.append(
            f"{doc['kind']}/{doc['metadata']['name']}: "
            f"{((obj.to_dict() if obj else {}).get('status') or {}).get('conditions')}"
        )
        if xr is None:
            continue
        lines.append(f"  composite: {(xr.get('status') or {}).get('conditions')}")
        spec = xr.get("spec") or {}
        refs = spec.get("resourceRefs") or (spec.get("crossplane") or {}).get("resourceRefs") or []
        for ref in refs:
            there = live.kube.get(
                ref["apiVersion"], ref["kind"], ref["name"], xr["metadata"].get("namespace")
            )
            if not is_true(there, "Ready"):
                lines.append(
                    f"  not ready: {ref['kind']}/{ref['name']}: Synced={condition(there, 'Synced')}"
                    f" Ready={condition(there, 'Ready')}"
                )
    cloud = live.cloud.loop.errors if live.cloud else []
    return "\n".join([*lines, f"cloud stand-in errors: {cloud}"])


def _assert_contains(actual: Any, expected: Any, where: str) -> None:
    """Every field of ``expected`` (the candidate's body) is in ``actual`` (the cluster's)."""
    if isinstance(expected, dict):
        assert isinstance(actual, dict), f"{where}: {actual!r} is no map"
        for key, value in expected.items():
            _assert_contains(actual.get(key), value, f"{where}.{key}")
    else:
        assert actual == expected, f"{where}: {actual!r} != {expected!r}"
