"""Checks of a resolved actor that need more than its spec: its history, names and settings.

Each one catches on the claim, with the field named, what would otherwise fail later and out
of the user's sight (an Object stuck on an API server rejection), or silently do harm (a
renamed actor leaving its old Deployment running, an actor taking over the namespace's DLQ).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from fnplatform.composers.async_actor.manifests import RUNTIME_VOLUME, SOCKET_VOLUME, TMP_VOLUME
from fnplatform.composers.async_actor.model import (
    ROLE_ARN,
    ROLE_PLACEHOLDERS,
    ActorSettings,
    ActorSpec,
    RuntimeSettings,
)
from fnplatform.errors import InputError
from fnplatform.merge import get_path

BUILT_IN_VOLUMES = (SOCKET_VOLUME, TMP_VOLUME, RUNTIME_VOLUME)
DLQ_SUFFIX = "dlq"


def check_actor_name(composite: Mapping[str, Any], namespace: str, name: str) -> None:
    """The actor's name may not change, nor name the namespace's dead-letter queue.

    Every object of the actor is named after it, and provider-kubernetes finds objects by
    name: a new name would create a second Deployment and ScaledObject beside the old ones,
    which would keep running. ``status.actor`` remembers the name the actor was created with.
    """
    previous = get_path(composite, "status.actor")
    if previous and previous != name:
        raise InputError(
            "spec.actor",
            f"can't change from {previous!r} to {name!r}: the queue, Deployment and KEDA "
            "objects are named after the actor; create a new AsyncActor instead",
        )
    if name == DLQ_SUFFIX:
        raise InputError(
            "spec.actor",
            f"{name!r} would name the queue asya-{namespace}-{DLQ_SUFFIX}, the namespace's "
            "dead-letter queue; choose another actor name",
        )


def check_settings(settings: ActorSettings) -> None:
    """Settings that only make sense together.

    With ``identityOwner: workload`` KEDA assumes the role annotated on the scale target's
    service account; without IRSA the pods run as ``default``, which has none, and every
    ScaledObject would fail.
    """
    if settings.keda.identityOwner == "workload" and not settings.irsa.enabled:
        raise InputError(
            "environment.keda.identityOwner",
            "workload needs irsa.enabled: KEDA assumes the role of the actors' service account",
        )
    if settings.irsa.enabled:
        check_role_arn_pattern(settings)


def check_role_arn_pattern(settings: ActorSettings) -> None:
    """``roleArnPattern`` becomes a real role ARN in every namespace, or says what is wrong.

    A placeholder the function does not fill (``{account}``), or one left as the design's
    ``ACCOUNT_ID``, would otherwise reach the ServiceAccount annotation literally, and every
    pod's AWS calls would fail with an unassumable role.
    """
    irsa, field = settings.irsa, "environment.irsa.roleArnPattern"
    if irsa.roleArnPattern is None:
        return
    unknown = [name for name in irsa.placeholders() if name not in ROLE_PLACEHOLDERS]
    if unknown:
        raise InputError(
            field,
            f"unknown placeholder {{{unknown[0]}}}; the function fills in "
            f"{', '.join('{' + n + '}' for n in ROLE_PLACEHOLDERS)}",
        )
    if "accountId" in irsa.placeholders() and not settings.aws.accountId:
        raise InputError(field, "uses {accountId}, but aws.accountId is not set")
    example = irsa.role_arn("team", settings.aws.accountId)
    if not re.match(ROLE_ARN, example):
        account = example.split(":")[4] if example.count(":") >= 5 else ""
        hint = (
            f"the account {account!r} is not a 12-digit AWS account id; write "
            "{accountId} to use aws.accountId"
            if account and not account.isdigit()
            else "it must become arn:aws:iam::<12-digit account>:role/<name>"
        )
        raise InputError(field, f"{irsa.roleArnPattern!r} is not a role ARN: {hint}")


def check_queue_attributes(spec: ActorSpec, settings: ActorSettings) -> None:
    """A message never outlives its place in the dead-letter queue.

    SQS keeps a message's original enqueue time when it moves to a dead-letter queue, so a
    dead-letter queue that keeps messages for less time than the actor's queue would drop a
    failed message at once, unseen (SQS Developer Guide, "Using dead-letter queues": set the
    dead-letter queue's retention longer than the source queue's).
    """
    if not settings.dlq.enabled or not settings.aws.accountId:
        return  # no dead-letter queue, no redrive
    retention = settings.queue.under(spec.queue).messageRetentionSeconds
    limit = settings.dlq.retentionSeconds
    if retention > limit:
        field = (
            "spec.queue.messageRetentionSeconds"
            if spec.queue.messageRetentionSeconds is not None
            else "environment.queue.messageRetentionSeconds"
        )
        raise InputError(
            field,
            f"{retention} s is longer than the dead-letter queue keeps messages "
            f"(environment.dlq.retentionSeconds: {limit} s); SQS counts retention from the "
            "first enqueue, so a failed message would expire in the dead-letter queue unseen",
        )


def check_pod_storage(spec: ActorSpec, runtime: RuntimeSettings) -> None:
    """Volumes and mounts the API server would accept beside the built-in ones.

    Kubernetes rejects a pod with two volumes of one name, a mount of an undeclared volume,
    a mount without a path, and two mounts at one path in a container.
    """
    declared = _check_volume_names(spec.volumes)
    built_in_mounts = (runtime.socketDir, "/tmp", runtime.scriptPath)
    reserved_paths = {_normal(path): path for path in built_in_mounts}
    mounted: dict[str, int] = {}
    for index, mount in enumerate(spec.volumeMounts):
        field = f"spec.volumeMounts[{index}]"
        if mount["name"] not in declared and mount["name"] not in BUILT_IN_VOLUMES:
            raise InputError(f"{field}.name", f"{mount['name']!r} is not in spec.volumes")
        path = mount.get("mountPath")
        if not isinstance(path, str) or not path:
            raise InputError(f"{field}.mountPath", "required: where the volume appears")
        normal = _normal(path)
        if normal in reserved_paths:
            raise InputError(
                f"{field}.mountPath",
                f"{path} is where the actor runtime mounts {reserved_paths[normal]}",
            )
        if normal in mounted:
            raise InputError(
                f"{field}.mountPath",
                f"{path} is already mounted by spec.volumeMounts[{mounted[normal]}]",
            )
        mounted[normal] = index


def _check_volume_names(volumes: list[dict[str, Any]]) -> set[str]:
    """The user's volume names, each unique and none a built-in volume's."""
    names: set[str] = set()
    for index, volume in enumerate(volumes):
        name = volume["name"]
        if name in BUILT_IN_VOLUMES:
            raise InputError(
                f"spec.volumes[{index}].name",
                f"{name!r} is a volume of the actor runtime; choose another name",
            )
        if name in names:
            raise InputError(f"spec.volumes[{index}].name", f"{name!r} is declared twice")
        names.add(name)
    return names


def _normal(path: str) -> str:
    """``path`` without trailing slashes, as Kubernetes compares mount paths."""
    return path.rstrip("/") or "/"
