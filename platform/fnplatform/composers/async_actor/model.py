"""The async-actor API: what ``XAsyncActor.spec``, its flavors and the cluster settings may say.

:class:`ActorSpec` validates the *resolved* spec (flavors merged under the claim's own spec);
its defaults are applied by the function after that merge. The XRD built from it carries no
defaults (see ``api.py``): the API server would otherwise write them into every claim, and a
claim's defaulted ``maxReplicaCount: 10`` would silently shadow a flavor's value.
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

DNS_LABEL = r"^[a-z0-9]([a-z0-9-]*[a-z0-9])?$"
HANDLER = r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)+$"
DURATION = r"^([0-9]+(\.[0-9]+)?(ms|s|m|h))+$"
ENV_NAME = r"^[-._a-zA-Z][-._a-zA-Z0-9]*$"
QUANTITY = r"^[+-]?([0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$"
MAX_FLAVORS = 8
FlavorName = Annotated[str, Field(pattern=DNS_LABEL, max_length=63)]

_Strict = ConfigDict(extra="forbid")


def check_flavor_names(names: list[str]) -> list[str]:
    """Flavor names are DNS labels (they become label values), each listed once."""
    for name in names:
        if not re.match(DNS_LABEL, name) or len(name) > 63:
            msg = f"{name!r} is not a valid flavor name (a DNS label)"
            raise ValueError(msg)
    if len(set(names)) != len(names):
        msg = "lists a flavor twice"
        raise ValueError(msg)
    return names


class EnvVar(BaseModel):
    """A container environment variable: a literal ``value`` or a ``valueFrom`` source."""

    model_config = _Strict

    name: str = Field(pattern=ENV_NAME, min_length=1, description="Variable name.")
    value: str | None = Field(None, description="Literal value.")
    valueFrom: dict[str, Any] | None = Field(  # noqa: N815 - Kubernetes field name
        None, description="A Kubernetes EnvVarSource (secretKeyRef, configMapKeyRef...)."
    )

    @model_validator(mode="after")
    def _one_source(self) -> EnvVar:
        if self.value is not None and self.valueFrom is not None:
            msg = "set value or valueFrom, not both"
            raise ValueError(msg)
        return self


class Resources(BaseModel):
    """Container compute resources."""

    model_config = _Strict

    requests: dict[str, str | int] | None = Field(None, description="Requested resources.")
    limits: dict[str, str | int] | None = Field(None, description="Resource limits.")

    @field_validator("requests", "limits")
    @classmethod
    def _quantities(cls, value: dict[str, str | int] | None) -> dict[str, str | int] | None:
        for key, quantity in (value or {}).items():
            if not re.match(QUANTITY, str(quantity)):
                msg = f"{key}: {quantity!r} is not a Kubernetes quantity such as 500m or 1Gi"
                raise ValueError(msg)
        return value

    def manifest(self) -> dict[str, Any]:
        """The ``resources`` block of a container."""
        return self.model_dump(exclude_none=True)


class Scaling(BaseModel):
    """KEDA autoscaling on the queue's length."""

    model_config = _Strict

    enabled: bool = Field(True, description="Scale with KEDA; when false, run spec.replicas.")
    minReplicaCount: int = Field(0, ge=0, le=1000, description="Fewest replicas (0: scale to zero).")  # noqa: N815
    maxReplicaCount: int = Field(10, ge=1, le=1000, description="Most replicas.")  # noqa: N815
    queueLength: int = Field(5, ge=1, description="Target messages per replica.")  # noqa: N815
    pollingInterval: int = Field(30, ge=1, description="Seconds between queue checks.")  # noqa: N815
    cooldownPeriod: int = Field(  # noqa: N815
        300, ge=0, description="Seconds after the last message before scaling to zero."
    )

    @model_validator(mode="after")
    def _ordered(self) -> Scaling:
        if self.minReplicaCount > self.maxReplicaCount:
            msg = "minReplicaCount must not exceed maxReplicaCount"
            raise ValueError(msg)
        return self


class Sidecar(BaseModel):
    """The Asya sidecar that moves messages between the queue and the runtime."""

    model_config = _Strict

    image: str | None = Field(None, min_length=1, description="Image; defaults to the settings'.")
    env: list[EnvVar] = Field(default_factory=list, description="Extra sidecar environment.")
    resources: Resources | None = Field(None, description="Sidecar compute resources.")


class Retry(BaseModel):
    """How the sidecar retries a failed message."""

    model_config = _Strict

    policy: Literal["constant", "exponential"] | None = Field(None, description="Backoff policy.")
    maxAttempts: int | None = Field(None, ge=1, le=1000, description="Attempts before the DLQ.")  # noqa: N815
    initialInterval: str | None = Field(None, pattern=DURATION, description="First delay, e.g. 1s.")  # noqa: N815
    maxInterval: str | None = Field(None, pattern=DURATION, description="Longest delay, e.g. 5m.")  # noqa: N815
    backoffCoefficient: float | None = Field(None, ge=1, description="Delay multiplier.")  # noqa: N815
    jitter: bool | None = Field(None, description="Randomise delays.")


class Resiliency(BaseModel):
    """Retries and timeouts of message handling."""

    model_config = _Strict

    retry: Retry | None = Field(None, description="Retry policy.")
    actorTimeout: str | None = Field(  # noqa: N815
        None, pattern=DURATION, description="Longest time one message may take, e.g. 5m."
    )


class ActorSpec(BaseModel):
    """``XAsyncActor.spec``: one queue-driven actor."""

    model_config = _Strict

    actor: str | None = Field(
        None, pattern=DNS_LABEL, max_length=63, description="Actor name; defaults to the claim name."
    )
    image: str = Field(min_length=1, description="The runtime image holding the handler.")
    handler: str = Field(
        pattern=HANDLER, description="module.function or module.Class.method to call per message."
    )
    imagePullPolicy: Literal["Always", "IfNotPresent", "Never"] | None = Field(  # noqa: N815
        None, description="Image pull policy of the runtime container."
    )
    pythonExecutable: str = Field(  # noqa: N815
        "python3", pattern=r"^\S+$", description="Python interpreter in the image (default python3)."
    )
    replicas: int = Field(1, ge=1, le=1000, description="Replicas when scaling is disabled.")
    env: list[EnvVar] = Field(default_factory=list, description="Runtime environment variables.")
    resources: Resources | None = Field(None, description="Runtime compute resources.")
    nodeSelector: dict[str, str] = Field(default_factory=dict, description="Pod node selector.")  # noqa: N815
    tolerations: list[dict[str, Any]] = Field(default_factory=list, description="Pod tolerations.")
    volumes: list[dict[str, Any]] = Field(default_factory=list, description="Extra pod volumes.")
    volumeMounts: list[dict[str, Any]] = Field(  # noqa: N815
        default_factory=list, description="Extra runtime volume mounts."
    )
    flavors: list[FlavorName] = Field(
        default_factory=list,
        max_length=MAX_FLAVORS,
        description="EnvironmentConfigs labelled asya.sh/flavor=<name> merged under this spec.",
    )
    scaling: Scaling = Field(default_factory=Scaling, description="KEDA autoscaling.")
    sidecar: Sidecar = Field(default_factory=Sidecar, description="Sidecar overrides.")
    resiliency: Resiliency | None = Field(None, description="Retries and timeouts.")

    @field_validator("flavors")
    @classmethod
    def _flavor_names(cls, value: list[str]) -> list[str]:
        return check_flavor_names(value)

    @field_validator("volumes", "volumeMounts")
    @classmethod
    def _named(cls, value: list[dict[str, Any]]) -> list[dict[str, Any]]:
        for index, item in enumerate(value):
            if not isinstance(item.get("name"), str) or not item["name"]:
                msg = f"item {index} has no name"
                raise ValueError(msg)
        return value


# -- cluster-wide settings (step input ``settings`` and EnvironmentConfigs) ----------------


class AwsSettings(BaseModel):
    """Where the queues live."""

    model_config = _Strict

    region: str = Field(pattern=r"^[a-z]{2}(-[a-z]+)+-[0-9]+$", description="AWS region.")
    accountId: str | None = Field(  # noqa: N815
        None, pattern=r"^[0-9]{12}$", description="Account id; enables the dead-letter queue."
    )
    providerConfig: str = Field("default", min_length=1, description="AWS ProviderConfig name.")  # noqa: N815


class IrsaSettings(BaseModel):
    """IAM roles for service accounts: one shared service account per namespace."""

    model_config = _Strict

    enabled: bool = False
    serviceAccountName: str = Field("asya-actor", pattern=DNS_LABEL, max_length=63)  # noqa: N815
    roleArnPattern: str | None = Field(  # noqa: N815
        None, pattern=r"^arn:aws[a-z-]*:iam::", description="Role ARN; {namespace} is replaced."
    )

    @model_validator(mode="after")
    def _role(self) -> IrsaSettings:
        if self.enabled and not self.roleArnPattern:
            msg = "roleArnPattern is required when IRSA is enabled"
            raise ValueError(msg)
        return self

    def role_arn(self, namespace: str) -> str:
        """The role ARN for ``namespace``."""
        return str(self.roleArnPattern).replace("{namespace}", namespace)


class KedaSecretRef(BaseModel):
    """The Secret holding AWS keys for KEDA, when ``authProvider`` is ``secret``."""

    model_config = _Strict

    name: str = Field(min_length=1)
    accessKeyIdKey: str = Field("AWS_ACCESS_KEY_ID", min_length=1)  # noqa: N815
    secretAccessKeyKey: str = Field("AWS_SECRET_ACCESS_KEY", min_length=1)  # noqa: N815


class KedaSettings(BaseModel):
    """How KEDA authenticates to SQS."""

    model_config = _Strict

    authProvider: Literal["podIdentity", "secret"] = "podIdentity"  # noqa: N815
    secretRef: KedaSecretRef | None = None  # noqa: N815

    @model_validator(mode="after")
    def _secret(self) -> KedaSettings:
        if self.authProvider == "secret" and self.secretRef is None:
            msg = "secretRef is required when authProvider is secret"
            raise ValueError(msg)
        return self


class SidecarSettings(BaseModel):
    """Defaults of the sidecar container."""

    model_config = _Strict

    image: str = Field("ghcr.io/deliveryhero/asya-sidecar:latest", min_length=1)
    imagePullPolicy: Literal["Always", "IfNotPresent", "Never"] = "IfNotPresent"  # noqa: N815
    logLevel: Literal["debug", "info", "warn", "error"] = "info"  # noqa: N815


class RuntimeSettings(BaseModel):
    """Where the runtime script and the runtime/sidecar socket live in the pod."""

    model_config = _Strict

    configMap: str = Field("asya-runtime", pattern=DNS_LABEL)  # noqa: N815
    scriptPath: str = Field("/opt/asya/asya_runtime.py", pattern=r"^/")  # noqa: N815
    socketDir: str = Field("/var/run/asya", pattern=r"^/")  # noqa: N815


class DlqSettings(BaseModel):
    """The per-namespace dead-letter queue."""

    model_config = _Strict

    maxReceiveCount: int = Field(3, ge=1, le=1000)  # noqa: N815


class ActorSettings(BaseModel):
    """Cluster-wide async-actor settings: step input ``settings`` under the EnvironmentConfigs."""

    model_config = ConfigDict(extra="ignore")  # the environment is shared with other modules

    aws: AwsSettings
    irsa: IrsaSettings = Field(default_factory=IrsaSettings)
    keda: KedaSettings = Field(default_factory=KedaSettings)
    sidecar: SidecarSettings = Field(default_factory=SidecarSettings)
    runtime: RuntimeSettings = Field(default_factory=RuntimeSettings)
    dlq: DlqSettings = Field(default_factory=DlqSettings)
    transport: Literal["sqs"] = "sqs"
    kubernetesProviderConfig: str = Field("default", min_length=1)  # noqa: N815


# -- status ---------------------------------------------------------------------------------


class ComponentStatus(BaseModel):
    """Readiness of one part of the actor's infrastructure."""

    ready: bool | None = None
    message: str | None = None


class WorkloadStatus(BaseModel):
    """The Deployment's readiness and size."""

    ready: bool | None = None
    replicas: int | None = None
    readyReplicas: int | None = None  # noqa: N815


class Infrastructure(BaseModel):
    """Readiness of the queue, KEDA and the workload."""

    queue: ComponentStatus | None = None
    keda: ComponentStatus | None = None
    workload: WorkloadStatus | None = None


class ActorStatus(BaseModel):
    """``XAsyncActor.status``."""

    model_config = ConfigDict(extra="allow")  # Crossplane writes conditions itself

    actor: str | None = Field(None, description="The resolved actor name.")
    phase: Literal["Creating", "Ready", "Napping"] | None = Field(
        None, description="Creating until queue, KEDA and workload are ready; Napping at zero."
    )
    queueUrl: str | None = Field(None, description="The SQS queue URL.")  # noqa: N815
    queueIdentifier: str | None = Field(None, description="The SQS queue ARN.")  # noqa: N815
    infrastructure: Infrastructure | None = None


class FlavorSelection(BaseModel):
    """Just ``spec.flavors``: read before the flavors are fetched, the rest validated after."""

    model_config = ConfigDict(extra="ignore")

    flavors: list[str] = Field(default_factory=list, max_length=MAX_FLAVORS)

    @field_validator("flavors")
    @classmethod
    def _flavor_names(cls, value: list[str]) -> list[str]:
        return check_flavor_names(value)
