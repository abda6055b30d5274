"""The Kubernetes manifests of one actor: plain dicts, wrapped in provider-kubernetes Objects.

Pure functions of :class:`Actor` (and the queue URL once known), so the same spec always gives
byte-identical manifests.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from fnplatform.composers.async_actor.model import ActorSettings, ActorSpec, EnvVar, Resiliency
from fnplatform.library.kubernetes import workload_labels

KEDA_API = "keda.sh/v1alpha1"
PART_OF = "asya"
SOCKET_VOLUME, TMP_VOLUME, RUNTIME_VOLUME = "socket-dir", "tmp", "asya-runtime"
#: The sidecar's per-message timeout when ``resiliency.actorTimeout`` is unset
#: (``ASYA_RESILIENCY_ACTOR_TIMEOUT``, default ``5m`` in deliveryhero/asya).
DEFAULT_ACTOR_TIMEOUT_SECONDS = 300
#: Time beyond the actor timeout for the sidecar to ack or requeue and exit after SIGTERM.
SHUTDOWN_MARGIN_SECONDS = 30
_DURATION_PART = re.compile(r"([0-9]+(?:\.[0-9]+)?)(ms|s|m|h)")
_UNIT_SECONDS = {"ms": 0.001, "s": 1, "m": 60, "h": 3600}
RUNTIME_CONTAINER, SIDECAR_CONTAINER = "asya-runtime", "asya-sidecar"


@dataclass(frozen=True)
class Actor:
    """Everything the manifests need: the resolved spec, settings and where it runs."""

    name: str
    namespace: str
    spec: ActorSpec
    settings: ActorSettings

    @property
    def trigger_auth_name(self) -> str:
        """The TriggerAuthentication's name."""
        return f"{self.name}-trigger-auth"

    def labels(self, component: str) -> dict[str, str]:
        """Recommended labels of every object of this actor."""
        return {
            **workload_labels(name=self.name, component=component, part_of=PART_OF),
            "asya.sh/actor": self.name,
        }

    def metadata(self, name: str, component: str) -> dict[str, Any]:
        """``metadata`` of a namespaced object of this actor."""
        return {"name": name, "namespace": self.namespace, "labels": self.labels(component)}


def service_account(actor: Actor) -> dict[str, Any]:
    """The namespace's shared IRSA service account.

    Every actor of the namespace declares the same one, so its labels name no actor (two
    Objects writing different labels would fight), and its Object orphans it on deletion.
    """
    irsa = actor.settings.irsa
    return {
        "apiVersion": "v1",
        "kind": "ServiceAccount",
        "metadata": {
            "name": irsa.serviceAccountName,
            "namespace": actor.namespace,
            "labels": workload_labels(component="serviceaccount", part_of=PART_OF),
            "annotations": {
                "eks.amazonaws.com/role-arn": irsa.role_arn(
                    actor.namespace, actor.settings.aws.accountId
                ),
            },
        },
    }


def trigger_authentication(actor: Actor) -> dict[str, Any]:
    """How KEDA reads the queue length: the AWS pod identity, or keys from a Secret."""
    keda = actor.settings.keda
    spec: dict[str, Any]
    if keda.authProvider == "podIdentity" or keda.secretRef is None:
        identity = {"provider": "aws"}
        if keda.identityOwner is not None:
            identity["identityOwner"] = keda.identityOwner
        spec = {"podIdentity": identity}
    else:
        ref = keda.secretRef
        spec = {
            "secretTargetRef": [
                {"parameter": "awsAccessKeyID", "name": ref.name, "key": ref.accessKeyIdKey},
                {
                    "parameter": "awsSecretAccessKey",
                    "name": ref.name,
                    "key": ref.secretAccessKeyKey,
                },
            ]
        }
    return {
        "apiVersion": KEDA_API,
        "kind": "TriggerAuthentication",
        "metadata": actor.metadata(actor.trigger_auth_name, "triggerauthentication"),
        "spec": spec,
    }


def scaled_object(actor: Actor, queue_url: str) -> dict[str, Any]:
    """KEDA scaling of the Deployment on the queue's length: fast up, gradual down."""
    scaling = actor.spec.scaling
    return {
        "apiVersion": KEDA_API,
        "kind": "ScaledObject",
        "metadata": actor.metadata(actor.name, "scaledobject"),
        "spec": {
            "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": actor.name},
            "minReplicaCount": scaling.minReplicaCount,
            "maxReplicaCount": scaling.maxReplicaCount,
            "pollingInterval": scaling.pollingInterval,
            "cooldownPeriod": scaling.cooldownPeriod,
            "triggers": [
                {
                    "type": "aws-sqs-queue",
                    "name": "queue",
                    "authenticationRef": {
                        "kind": "TriggerAuthentication",
                        "name": actor.trigger_auth_name,
                    },
                    "metadata": {
                        "awsRegion": actor.settings.aws.region,
                        "queueLength": str(scaling.queueLength),
                        "queueURL": queue_url,
                    },
                }
            ],
            "advanced": {"horizontalPodAutoscalerConfig": {"behavior": _hpa_behavior()}},
        },
    }


def _hpa_behavior() -> dict[str, Any]:
    """Scale up at once (10 pods or double, per minute); down one pod a minute after 5 min."""
    return {
        "scaleUp": {
            "stabilizationWindowSeconds": 0,
            "selectPolicy": "Max",
            "policies": [
                {"type": "Pods", "value": 10, "periodSeconds": 60},
                {"type": "Percent", "value": 100, "periodSeconds": 60},
            ],
        },
        "scaleDown": {
            "stabilizationWindowSeconds": 300,
            "policies": [{"type": "Pods", "value": 1, "periodSeconds": 60}],
        },
    }


def deployment(actor: Actor, queue_url: str | None) -> dict[str, Any]:
    """The actor's pods: the runtime calling the handler, and the sidecar feeding it."""
    spec = actor.spec
    labels = actor.labels("actor")
    pod_spec: dict[str, Any] = {
        "terminationGracePeriodSeconds": termination_grace_seconds(spec.resiliency),
        "containers": [_runtime_container(actor), _sidecar_container(actor, queue_url)],
        "volumes": [
            {"name": SOCKET_VOLUME, "emptyDir": {}},
            {"name": TMP_VOLUME, "emptyDir": {}},
            {"name": RUNTIME_VOLUME, "configMap": {"name": actor.settings.runtime.configMap}},
            *spec.volumes,
        ],
    }
    if actor.settings.irsa.enabled:
        pod_spec["serviceAccountName"] = actor.settings.irsa.serviceAccountName
    if spec.nodeSelector:
        pod_spec["nodeSelector"] = dict(sorted(spec.nodeSelector.items()))
    if spec.tolerations:
        pod_spec["tolerations"] = list(spec.tolerations)
    deployment_spec: dict[str, Any] = {
        "selector": {"matchLabels": workload_labels(name=actor.name, managed_by=None)},
        "template": {"metadata": {"labels": labels}, "spec": pod_spec},
    }
    if not spec.scaling.enabled:
        deployment_spec["replicas"] = spec.replicas
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": actor.metadata(actor.name, "actor"),
        "spec": deployment_spec,
    }


def duration_seconds(duration: str) -> float:
    """Seconds in a Go-style duration such as ``1m30s`` (the model's ``DURATION`` pattern)."""
    return sum(float(n) * _UNIT_SECONDS[unit] for n, unit in _DURATION_PART.findall(duration))


def termination_grace_seconds(resiliency: Resiliency | None) -> int:
    """How long Kubernetes waits after SIGTERM before killing a pod: the actor timeout plus
    a margin, so scale-in never kills a message mid-work (it would be retried after the
    queue's visibility timeout, or worse, counted towards the dead-letter limit)."""
    timeout = resiliency.actorTimeout if resiliency else None
    seconds = duration_seconds(timeout) if timeout else DEFAULT_ACTOR_TIMEOUT_SECONDS
    return int(-(-seconds // 1)) + SHUTDOWN_MARGIN_SECONDS


def _runtime_container(actor: Actor) -> dict[str, Any]:
    spec, runtime = actor.spec, actor.settings.runtime
    probe = _socket_probe(runtime.socketDir)
    container: dict[str, Any] = {
        "name": RUNTIME_CONTAINER,
        "image": spec.image,
        "command": [spec.pythonExecutable, runtime.scriptPath],
        "env": [
            {"name": "ASYA_HANDLER", "value": spec.handler},
            {"name": "ASYA_SOCKET_DIR", "value": runtime.socketDir},
            *_env(spec.env),
        ],
        "volumeMounts": [
            {"name": SOCKET_VOLUME, "mountPath": runtime.socketDir},
            {"name": TMP_VOLUME, "mountPath": "/tmp"},
            {
                "name": RUNTIME_VOLUME,
                "mountPath": runtime.scriptPath,
                "subPath": runtime.scriptPath.rsplit("/", 1)[-1],
                "readOnly": True,
            },
            *spec.volumeMounts,
        ],
        "startupProbe": {
            **probe,
            "initialDelaySeconds": 3,
            "periodSeconds": 2,
            "timeoutSeconds": 3,
            "failureThreshold": 150,
        },
        "readinessProbe": {
            **probe,
            "periodSeconds": 10,
            "timeoutSeconds": 3,
            "failureThreshold": 3,
        },
        "livenessProbe": {**probe, "periodSeconds": 30, "timeoutSeconds": 5, "failureThreshold": 3},
    }
    if spec.imagePullPolicy:
        container["imagePullPolicy"] = spec.imagePullPolicy
    if spec.resources:
        container["resources"] = spec.resources.manifest()
    return container


def _socket_probe(socket_dir: str) -> dict[str, Any]:
    """The runtime is up once its socket exists and it has written ``runtime-ready``."""
    check = f"test -S {socket_dir}/asya-runtime.sock && test -f {socket_dir}/runtime-ready"
    return {"exec": {"command": ["sh", "-c", check]}}


def _sidecar_container(actor: Actor, queue_url: str | None) -> dict[str, Any]:
    settings, sidecar = actor.settings, actor.spec.sidecar
    env = [
        {"name": "ASYA_LOG_LEVEL", "value": settings.sidecar.logLevel},
        {"name": "ASYA_SOCKET_DIR", "value": settings.runtime.socketDir},
        {"name": "ASYA_ACTOR_NAME", "value": actor.name},
        {"name": "ASYA_NAMESPACE", "value": actor.namespace},
        {"name": "ASYA_TRANSPORT", "value": settings.transport},
        {"name": "ASYA_AWS_REGION", "value": settings.aws.region},
    ]
    if queue_url:
        env.append({"name": "ASYA_QUEUE_URL", "value": queue_url})
    env.extend(_resiliency_env(actor.spec.resiliency))
    env.extend(_env(sidecar.env))
    container: dict[str, Any] = {
        "name": SIDECAR_CONTAINER,
        "image": sidecar.image or settings.sidecar.image,
        "imagePullPolicy": settings.sidecar.imagePullPolicy,
        "env": env,
        "volumeMounts": [
            {"name": SOCKET_VOLUME, "mountPath": settings.runtime.socketDir},
            {"name": TMP_VOLUME, "mountPath": "/tmp"},
        ],
    }
    if sidecar.resources:
        container["resources"] = sidecar.resources.manifest()
    return container


def _resiliency_env(resiliency: Resiliency | None) -> list[dict[str, str]]:
    """The sidecar reads its retry policy and timeout from ``ASYA_RESILIENCY_*``."""
    if resiliency is None:
        return []
    values: list[tuple[str, Any]] = []
    if resiliency.retry is not None:
        retry = resiliency.retry
        values += [
            ("RETRY_POLICY", retry.policy),
            ("RETRY_MAX_ATTEMPTS", retry.maxAttempts),
            ("RETRY_INITIAL_INTERVAL", retry.initialInterval),
            ("RETRY_MAX_INTERVAL", retry.maxInterval),
            ("RETRY_BACKOFF_COEFFICIENT", retry.backoffCoefficient),
            ("RETRY_JITTER", None if retry.jitter is None else str(retry.jitter).lower()),
        ]
    values.append(("ACTOR_TIMEOUT", resiliency.actorTimeout))
    return [
        {"name": f"ASYA_RESILIENCY_{key}", "value": str(value)}
        for key, value in values
        if value is not None
    ]


def _env(variables: list[EnvVar]) -> list[dict[str, Any]]:
    return [variable.model_dump(exclude_none=True) for variable in variables]
