"""Gardener Shoots: every pool and the control-plane cluster is one, created in the garden.

A Shoot is served by the aggregated gardener-apiserver (no CRD), so it is applied through a
provider-kubernetes ``Object`` on the garden's ProviderConfig. Shoots have no ``Ready``
condition: Gardener reports progress in ``status.lastOperation`` (``type`` Create, Reconcile,
Restore, Migrate, Delete; ``state`` Processing, Succeeded, Error, Failed...), so the Object is
ready once the last Create or Reconcile succeeded for the current generation.

Deleting a Shoot needs the annotation ``confirmation.gardener.cloud/deletion: "true"``
(Gardener's deletion-confirmation admission plugin); the function never sets it, so deleting a
pool claim waits until an operator confirms on the Shoot itself (see docs/openstack.md).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from fnplatform.api.phase import Phase
from fnplatform.composers.openstack.model import Gardener
from fnplatform.errors import InputError
from fnplatform.naming import dns_label

SHOOT_API = "core.gardener.cloud/v1beta1"
#: Gardener limits worker pool names to 15 characters.
WORKER_NAME_MAX = 15
#: Gardener refuses to create a Shoot whose name and project name together exceed this
#: (plugin/pkg/shoot/validator admission: "the length of the shoot name and the project name
#: must not exceed 21 characters").
SHOOT_AND_PROJECT_MAX = 21
#: Shortest Shoot name a hashed one can have (a few characters, a dash, 8 hex digits).
SHOOT_NAME_MIN = 12


@dataclass(frozen=True)
class WorkerPool:
    """One Gardener worker pool of a Shoot."""

    name: str
    machine_type: str
    minimum: int
    maximum: int
    zones: tuple[str, ...] = ()
    volume_size: str | None = None
    labels: tuple[tuple[str, str], ...] = ()
    #: The pinned machine image version to send (the region's pin, never below the running
    #: one: see :func:`not_older`); None leaves the version to Gardener.
    image_version: str | None = None

    def manifest(self, gardener: Gardener) -> dict[str, Any]:
        image: dict[str, Any] = {"name": gardener.machineImage.name}
        if self.image_version:
            image["version"] = self.image_version
        worker: dict[str, Any] = {
            "name": self.name[:WORKER_NAME_MAX],
            "machine": {"type": self.machine_type, "image": image},
            "minimum": self.minimum,
            "maximum": self.maximum,
        }
        if self.zones:
            worker["zones"] = list(self.zones)
        if self.volume_size:
            worker["volume"] = {"size": self.volume_size}
            if gardener.workerVolumeType:
                worker["volume"]["type"] = gardener.workerVolumeType
        if self.labels:
            worker["labels"] = dict(self.labels)
        return worker


@dataclass(frozen=True)
class ShootRequest:
    """What a pool asks Gardener for."""

    name: str
    region: str
    kubernetes_version: str
    workers: tuple[WorkerPool, ...]
    labels: tuple[tuple[str, str], ...] = ()
    high_availability: bool = False


def _version_key(version: str) -> tuple[int, ...] | None:
    """``1.33.4`` -> (1, 33, 4); None for anything that is not dotted numbers."""
    parts = version.split(".")
    return tuple(int(p) for p in parts) if all(p.isdigit() for p in parts) else None


def not_older(wanted: str, running: str | None) -> str:
    """The version to send for a field Gardener also changes: ``wanted``, unless the Shoot
    already runs ``running`` and sending ``wanted`` would change it back or again.

    * ``running`` newer than ``wanted``: Gardener's maintenance force-upgraded an *expired*
      version (it does so even with ``autoUpdate`` off, docs ``shoot_maintenance``) and
      refuses every downgrade; provider-kubernetes sends the whole manifest on the next
      change, so the old version would make every later change of the pool fail.
    * ``wanted`` is ``major.minor`` and ``running`` a patch of it: the shoot mutator
      (``defaultKubernetesVersion``) resolved it to the newest patch at creation; sending
      ``1.33`` again would resolve it anew, a patch upgrade at whatever reconcile comes next,
      outside the maintenance window the claim turned auto-updates off for.

    A ``wanted`` newer than ``running`` is an upgrade the claim asks for: sent as is.
    """
    if not running:
        return wanted
    have, want = _version_key(running), _version_key(wanted)
    if have is None or want is None:
        return wanted
    if have[: len(want)] == want or have > want:
        return running
    return wanted


def provider_config_name(region: str, pool: str) -> str:
    """The ProviderConfig reaching pool ``pool`` of ``region``: unique per region and pool.

    One rule, used by the pool that composes it and by every OpenStack cluster that consumes
    the pool, so a consumer never waits for the pool's status to learn it. A pool already
    named after its region (``eu-de-1-control-plane``) isn't prefixed twice.
    """
    return dns_label(pool if pool.startswith(f"{region}-") else f"{region}-{pool}")


def shoot_name(pool: str, project: str) -> str:
    """The pool's Shoot name: the pool's own when Gardener accepts it in ``project``, else cut
    and suffixed with a hash of the full name (deterministic, distinct per pool)."""
    room = SHOOT_AND_PROJECT_MAX - len(project)
    if room < SHOOT_NAME_MIN:
        raise InputError(
            "environment.gardener.project",
            f"{project!r} leaves {room} characters for Shoot names; Gardener allows "
            f"{SHOOT_AND_PROJECT_MAX} for project and Shoot name together",
        )
    return pool if len(pool) <= room else dns_label(pool, max_length=room)


def shoot_manifest(request: ShootRequest, gardener: Gardener) -> dict[str, Any]:
    """The Shoot, with the current fields ``cloudProfile{kind,name}`` and
    ``credentialsBindingName`` (``cloudProfileName`` and ``secretBindingName`` are deprecated)."""
    provider: dict[str, Any] = {
        "type": gardener.providerType,
        "workers": [w.manifest(gardener) for w in request.workers],
    }
    if gardener.infrastructureConfig:
        provider["infrastructureConfig"] = dict(gardener.infrastructureConfig)
    if gardener.controlPlaneConfig:
        provider["controlPlaneConfig"] = dict(gardener.controlPlaneConfig)
    spec: dict[str, Any] = {
        "cloudProfile": dict(sorted(gardener.cloudProfile.items())),
        "credentialsBindingName": gardener.credentialsBindingName,
        "region": gardener.region or request.region,
        "purpose": gardener.purpose,
        "kubernetes": {"version": request.kubernetes_version},
        "provider": provider,
        # The claim owns the Kubernetes version: Gardener's maintenance would otherwise patch-
        # upgrade it, and re-applying ours would be a downgrade, which Gardener rejects. The
        # machine image version is Gardener's to update unless the region pins one.
        "maintenance": {
            "autoUpdate": {
                "kubernetesVersion": False,
                "machineImageVersion": gardener.machineImage.version is None,
            }
        },
    }
    if gardener.networking:
        spec["networking"] = dict(gardener.networking)
    if request.high_availability:
        spec["controlPlane"] = {"highAvailability": {"failureTolerance": {"type": "zone"}}}
    metadata: dict[str, Any] = {"name": request.name, "namespace": gardener.namespace}
    if request.labels:
        metadata["labels"] = dict(request.labels)
    return {"apiVersion": SHOOT_API, "kind": "Shoot", "metadata": metadata, "spec": spec}


def shoot_phase(exists: bool, ready: bool) -> Phase:
    """Pending (no Object yet), Provisioning, or Ready."""
    if not exists:
        return Phase.PENDING
    return Phase.READY if ready else Phase.PROVISIONING
