"""The three pools: the control-plane cluster, hypervisor pools and storage pools.

Each is one Gardener Shoot in the region's project (an ``Object`` on the garden's
ProviderConfig) plus what later compositions need to reach it: a ProviderConfig named per
region and pool, and the kubeconfig refresher behind it (``access.py``).
"""

from __future__ import annotations

import dataclasses

from fnplatform.api.phase import Phase
from fnplatform.api.validation import parse
from fnplatform.api.xrspec import user_spec
from fnplatform.composers.openstack import access
from fnplatform.composers.openstack.gardener import (
    WORKER_NAME_MAX,
    ShootRequest,
    WorkerPool,
    not_older,
    provider_config_name,
    shoot_manifest,
    shoot_name,
    shoot_phase,
)
from fnplatform.composers.openstack.model import (
    ControlPlaneClusterSpec,
    HypervisorClusterSpec,
    PoolSpec,
    Settings,
    StorageClusterSpec,
)
from fnplatform.composers.openstack.objects import CEPH_ENCRYPTED, wrapped
from fnplatform.composers.openstack.objects import SHOOT as SHOOT_KIND
from fnplatform.composition import Composition
from fnplatform.errors import InputError
from fnplatform.holds import Wait
from fnplatform.library.kubernetes import KUBERNETES_PROVIDER_CONFIG, add_object
from fnplatform.rules.controls import Control, assess

SHOOT = "shoot"
PROVIDER_CONFIG = "provider-config"
CEPH_CLUSTER = "ceph-cluster"
ENCRYPTED = "Encrypted"
POOL_LABEL = "c5c3.io/pool"
POOL_KIND_LABEL = "c5c3.io/pool-kind"
REGION_LABEL = "c5c3.io/region"


def settings_of(comp: Composition) -> Settings:
    """The region's settings from the merged environment."""
    return parse(Settings, comp.env, "environment")


def pool_name(comp: Composition, given: str | None) -> str:
    """``spec.name``, else the claim's name: the Shoot's and the pool's name."""
    name = given or comp.claim_name
    if not name:
        raise InputError("spec.name", "required when the composite has no claim to name it")
    return name


def compose_control_plane_cluster(comp: Composition) -> None:
    """The region's control-plane cluster."""
    spec = parse(ControlPlaneClusterSpec, user_spec(comp.spec), "spec")
    settings = settings_of(comp)
    worker = WorkerPool(
        name="system",
        machine_type=spec.machineType or settings.gardener.machineClass,
        minimum=spec.workers,
        maximum=spec.workers,
        zones=tuple(settings.gardener.zones),
        volume_size=spec.volumeSize,
    )
    request = _shoot_request(
        pool_name(comp, None),
        "control-plane",
        spec,
        settings,
        worker=worker,
        user_labels={},
        high_availability=spec.highAvailability,
    )
    _compose_pool(comp, request, settings, capacity=None)


def compose_hypervisor_cluster(comp: Composition) -> None:
    """A hypervisor pool."""
    spec = parse(HypervisorClusterSpec, user_spec(comp.spec), "spec")
    _compose_ironcore_pool(
        comp, "hypervisor", spec, maximum=spec.maxWorkers or spec.workers, labels=spec.labels
    )


def compose_storage_cluster(comp: Composition) -> None:
    """A Ceph storage pool."""
    spec = parse(StorageClusterSpec, user_spec(comp.spec), "spec")
    provider_config = _compose_ironcore_pool(
        comp,
        "storage",
        spec,
        maximum=spec.workers,
        labels={**spec.labels, "c5c3.io/ceph-device-class": spec.ceph.deviceClass},
        capacity=spec.ceph.targetCapacity,
    )
    if spec.ceph.encrypted:
        _encryption_seen(comp, provider_config, settings_of(comp))
    else:
        comp.set_status("encrypted", False)


def _compose_ironcore_pool(
    comp: Composition,
    kind: str,
    spec: HypervisorClusterSpec | StorageClusterSpec,
    *,
    maximum: int,
    labels: dict[str, str],
    capacity: str | None = None,
) -> str:
    """An IronCore pool of ``kind``: one worker pool on the spec's machine pool, from
    ``spec.workers`` to ``maximum`` nodes labelled ``labels``, in a Shoot named by
    ``spec.name`` (else the claim) carrying the spec's labels. Returns the pool's
    ProviderConfig name."""
    settings = settings_of(comp)
    worker = WorkerPool(
        name=kind,
        machine_type=spec.ironcore.machineClass or settings.gardener.machineClass,
        minimum=spec.workers,
        maximum=maximum,
        zones=(spec.ironcore.machinePool,),
        volume_size=settings.gardener.workerVolumeSize,
        labels=tuple(sorted(labels.items())),
    )
    request = _shoot_request(
        pool_name(comp, spec.name), kind, spec, settings, worker=worker, user_labels=spec.labels
    )
    return _compose_pool(comp, request, settings, capacity=capacity)


def _encryption_seen(comp: Composition, provider_config: str, settings: Settings) -> None:
    """An encrypted pool is one whose CephCluster encrypts its OSDs, not one that says so.

    Rook encrypts OSDs with dm-crypt when the CephCluster asks for it, and only when it
    creates them: ``spec.storage.config.encryptedDevice: "true"`` for OSDs on host devices,
    ``encrypted: true`` on a ``storageClassDeviceSet`` for OSDs on PVCs (Rook's CephCluster
    CRD, ``ceph.rook.io_cephclusters``; docs "Key Management System"). The CephCluster is the
    storage operator's (this module composes no Rook), so it is read, never written: an
    observe-only Object on the pool's ProviderConfig, Ready when encryption is on. Until then
    the pool is not Ready, and no OpenStack cluster requiring encryption runs on it."""
    if not (comp.is_ready(SHOOT) or comp.is_observed(CEPH_CLUSTER)):
        comp.hold(CEPH_CLUSTER, Wait(SHOOT, "Ready (the pool's Ceph runs in it)"))
        comp.set_status("encrypted", False)
        comp.condition(
            ENCRYPTED,
            False,
            "PoolNotReady",
            "the CephCluster's encryption is read once the pool's Shoot is Ready",
        )
        return
    add_object(
        comp,
        CEPH_CLUSTER,
        {
            "apiVersion": CEPH_ENCRYPTED.api_version,
            "kind": CEPH_ENCRYPTED.kind,
            "metadata": {"name": settings.cephCluster, "namespace": settings.cephNamespace},
        },
        provider_config=provider_config,
        observe_only=True,
        uses=(PROVIDER_CONFIG,),
    )
    cluster = f"CephCluster {settings.cephNamespace}/{settings.cephCluster}"
    verdict = assess(comp, [Control(f"{cluster} encrypts its OSDs", (CEPH_CLUSTER,))])
    comp.set_status("encrypted", verdict.ok)
    if verdict.ok:
        comp.condition(ENCRYPTED, True, "OSDsEncrypted", f"{cluster} encrypts its OSDs")
    elif verdict.failing:
        # provider-kubernetes cannot read it (the pool's ProviderConfig, RBAC): not seen
        comp.condition(ENCRYPTED, False, verdict.reason, verdict.summary())
    else:
        comp.condition(
            ENCRYPTED,
            False,
            "NotSeenOnCephCluster",
            f"spec.ceph.encrypted is true, but the CephCluster "
            f"{settings.cephNamespace}/{settings.cephCluster} on the pool does not "
            "(yet) encrypt its OSDs: it needs spec.storage.config.encryptedDevice "
            '"true" or encrypted: true on every storageClassDeviceSet',
        )
    if not verdict.ok and comp.is_ready(SHOOT):
        comp.set_phase(Phase.PROVISIONING)


def _shoot_request(
    name: str,
    kind: str,
    spec: ControlPlaneClusterSpec | PoolSpec,
    settings: Settings,
    *,
    worker: WorkerPool,
    user_labels: dict[str, str],
    high_availability: bool = False,
) -> ShootRequest:
    """The Shoot pool ``name`` of ``kind`` asks for, in the spec's region and version (else
    the region's)."""
    return ShootRequest(
        name=name,
        region=spec.region,
        kubernetes_version=spec.kubernetesVersion or settings.gardener.kubernetesVersion,
        workers=(worker,),
        labels=_labels(name, kind, spec.region, user_labels),
        high_availability=high_availability,
    )


def _labels(name: str, kind: str, region: str, user: dict[str, str]) -> tuple[tuple[str, str], ...]:
    """Shoot labels: the pool's own labels, then which pool it is (ours win)."""
    return tuple(
        sorted({**user, POOL_LABEL: name, POOL_KIND_LABEL: kind, REGION_LABEL: region}.items())
    )


def _compose_pool(
    comp: Composition,
    request: ShootRequest,
    settings: Settings,
    *,
    capacity: str | None,
) -> str:
    """The pool's Shoot, its access (the kubeconfig refresher and the ProviderConfig behind
    it) and its status, whose node count is the workers' minimum. Returns the ProviderConfig
    name."""
    gardener, access_settings = settings.gardener, settings.access
    _zones_unchanged(comp, request)
    _high_availability_kept(comp, request)
    pool = request.name
    request = _versions_as_running(
        comp, dataclasses.replace(request, name=shoot_name(pool, gardener.project)), settings
    )
    shoot = shoot_manifest(request, gardener)
    assert (shoot["apiVersion"], shoot["kind"]) == (SHOOT_KIND.api_version, SHOOT_KIND.kind)
    add_object(comp, SHOOT, shoot, provider_config=gardener.providerConfig, component="shoot")
    pc_name = provider_config_name(request.region, pool)
    for part, manifest in access.refresher_manifests(
        pc_name, request.name, access_settings, gardener
    ).items():
        name = f"access-{part}"
        if part == "first-run" and not (comp.is_ready(SHOOT) or comp.is_observed(name)):
            comp.hold(name, Wait(SHOOT, "Ready (the garden serves no kubeconfig before)"))
            continue
        # The first-run Job's pod template is immutable: a changed access setting (image,
        # expiry) would be a patch Kubernetes refuses on every reconcile. It ran its one
        # job; the CronJob (mutable) carries the new settings.
        add_object(
            comp,
            name,
            manifest,
            component="shoot-access",
            uses=(SHOOT,) if part in ("cronjob", "first-run") else (),
            create_only=part == "first-run",
        )
    body = access.provider_config(pc_name, access_settings)
    comp.emit(
        PROVIDER_CONFIG,
        KUBERNETES_PROVIDER_CONFIG.new(**body["spec"]) | {"metadata": body["metadata"]},
        uses=(SHOOT,),
    )
    comp.set_phase(shoot_phase(comp.is_observed(SHOOT), comp.is_ready(SHOOT)))
    comp.set_status("clusterName", request.name)
    comp.set_status("providerConfig", pc_name)
    comp.set_status("nodeCount", sum(worker.minimum for worker in request.workers))
    comp.set_status("capacity", capacity)
    return pc_name


def _versions_as_running(
    comp: Composition, request: ShootRequest, settings: Settings
) -> ShootRequest:
    """The request with the Kubernetes and pinned machine image versions never behind what
    the Shoot runs (:func:`gardener.not_older`): the versions are the two fields Gardener
    changes after creation, and provider-kubernetes re-sends the whole manifest on every
    change, so an older one would be a downgrade Gardener refuses. The running versions are
    the live Shoot's, as provider-kubernetes last observed it (``status.atProvider``).
    A version kept other than asked is said in a warning event (the claim should follow)."""
    running = wrapped(comp, SHOOT, "spec.kubernetes.version")
    version = not_older(request.kubernetes_version, running if isinstance(running, str) else None)
    asked = request.kubernetes_version
    if version != asked and not version.startswith(f"{asked}."):
        comp.event(
            f"Shoot runs Kubernetes {version}, newer than the {asked} "
            "asked for (Gardener force-upgraded an expired version and refuses "
            "downgrades): kept; raise kubernetesVersion to match",
            warning=True,
            reason="KubernetesVersionKept",
        )
    pinned = settings.gardener.machineImage.version
    live = wrapped(comp, SHOOT, "spec.provider.workers")
    images = (
        {
            w.get("name"): (w.get("machine") or {}).get("image") or {}
            for w in live
            if isinstance(w, dict)
        }
        if isinstance(live, list)
        else {}
    )
    workers = []
    for worker in request.workers:
        image = images.get(worker.name[:WORKER_NAME_MAX]) or {}
        same = image.get("name") == settings.gardener.machineImage.name
        current = image.get("version") if same and isinstance(image.get("version"), str) else None
        workers.append(
            dataclasses.replace(
                worker, image_version=not_older(pinned, current) if pinned else None
            )
        )
    return dataclasses.replace(request, kubernetes_version=version, workers=tuple(workers))


def _high_availability_kept(comp: Composition, request: ShootRequest) -> None:
    """A highly available control plane stays so: Gardener offers no way back (enabling HA
    is irreversible), and the function could not say it anyway: provider-kubernetes updates
    a Shoot with a JSON merge patch, which never removes a field the manifest stops sending,
    so ``spec.highAvailability: false`` would be silently not applied. Refused on the field
    instead, like a changed zone."""
    if request.high_availability:
        return
    sent = comp.observed_value(
        SHOOT, "spec.forProvider.manifest.spec.controlPlane.highAvailability"
    )
    live = wrapped(comp, SHOOT, "spec.controlPlane.highAvailability")
    if sent or live:
        raise InputError(
            "spec.highAvailability",
            "cannot be turned off once the pool's Shoot "
            "has a highly available control plane: Gardener keeps it; create a "
            "new control-plane cluster instead",
        )


def _zones_unchanged(comp: Composition, request: ShootRequest) -> None:
    """A worker's zones cannot change once the Shoot exists: the provider extensions keep them
    immutable (``ValidateWorkersUpdate`` in gardener-extension-provider-ironcore and -openstack
    ``pkg/apis/<provider>/validation/shoot.go``), so Gardener would refuse every re-apply. Said
    on the field that sets them instead (``spec.ironcore.machinePool`` for IronCore pools)."""
    workers = comp.observed_value(SHOOT, "spec.forProvider.manifest.spec.provider.workers")
    if not isinstance(workers, list):
        return
    before = {w.get("name"): list(w.get("zones") or []) for w in workers if isinstance(w, dict)}
    for worker in request.workers:
        name = worker.name[:WORKER_NAME_MAX]
        if name in before and before[name] != list(worker.zones):
            field = (
                "spec.ironcore.machinePool" if name != "system" else "environment.gardener.zones"
            )
            raise InputError(
                field,
                f"cannot change once the pool's Shoot exists: Gardener keeps "
                f"worker zones immutable (worker {name} is in "
                f"{', '.join(before[name]) or 'no zone'}); create a new pool instead",
            )
