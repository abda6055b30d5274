"""The async-actor API: what ``XAsyncActor.spec``, its flavors and the cluster settings may say.

:class:`ActorSpec` validates the *resolved* spec (flavors merged under the claim's own spec);
its defaults are applied by the function after that merge. The XRD built from it carries no
defaults (see ``api.py``): the API server would otherwise write them into every claim, and a
claim's defaulted ``maxReplicaCount: 10`` would silently shadow a flavor's value.
"""

from __future__ import annotations

import re
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    StrictInt,
    StrictStr,
    field_validator,
    model_validator,
)

from fnplatform.api.validation import DNS_LABEL, describe_pattern, matching
from fnplatform.api.xrd import ordered

HANDLER = describe_pattern(
    r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)+$",
    "a dotted Python name such as module.function or module.Class.method",
)
DURATION = describe_pattern(
    r"^([0-9]+(\.[0-9]+)?(ms|s|m|h))+$", "a duration such as 500ms, 30s, 5m or 1h"
)
ENV_NAME = describe_pattern(
    r"^[-._a-zA-Z][-._a-zA-Z0-9]*$",
    "an environment variable name: letters, digits, '_', '-', '.', not starting with a digit",
)
QUANTITY = describe_pattern(
    r"^[+-]?([0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$", "a Kubernetes quantity such as 500m, 2 or 4Gi"
)
#: A resource amount: ``2`` or ``"500m"`` (a number or a string, as in a Pod; never a bool).
Quantity = Annotated[StrictStr | StrictInt, matching(QUANTITY)]
ABSOLUTE_PATH = describe_pattern(r"^/", "an absolute path (starting with /)")
AWS_REGION = describe_pattern(r"^[a-z]{2}(-[a-z]+)+-[0-9]+$", "an AWS region such as eu-west-1")
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
    value: str | None = Field(default=None, description="Literal value.")
    valueFrom: dict[str, Any] | None = Field(
        default=None, description="A Kubernetes EnvVarSource (secretKeyRef, configMapKeyRef...)."
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

    requests: dict[str, Quantity] | None = Field(default=None, description="Requested resources.")
    limits: dict[str, Quantity] | None = Field(default=None, description="Resource limits.")

    def manifest(self) -> dict[str, Any]:
        """The ``resources`` block of a container."""
        return self.model_dump(exclude_none=True)


class Scaling(BaseModel):
    """KEDA autoscaling on the queue's length."""

    model_config = _Strict

    enabled: bool = Field(
        default=True, description="Scale with KEDA; when false, run spec.replicas."
    )
    minReplicaCount: int = Field(
        default=0, ge=0, le=1000, description="Fewest replicas (0: scale to zero)."
    )
    maxReplicaCount: int = Field(default=10, ge=1, le=1000, description="Most replicas.")
    queueLength: int = Field(default=5, ge=1, description="Target messages per replica.")
    pollingInterval: int = Field(default=30, ge=1, description="Seconds between queue checks.")
    cooldownPeriod: int = Field(
        default=300, ge=0, description="Seconds after the last message before scaling to zero."
    )

    _ordered = ordered("minReplicaCount", "maxReplicaCount")


class Sidecar(BaseModel):
    """The Asya sidecar that moves messages between the queue and the runtime."""

    model_config = _Strict

    image: str | None = Field(
        default=None, min_length=1, description="Image; defaults to the settings'."
    )
    env: list[EnvVar] = Field(default_factory=list, description="Extra sidecar environment.")
    resources: Resources | None = Field(default=None, description="Sidecar compute resources.")


class Retry(BaseModel):
    """How the sidecar retries a failed message."""

    model_config = _Strict

    policy: Literal["constant", "exponential"] | None = Field(
        default=None, description="Backoff policy."
    )
    maxAttempts: int | None = Field(
        default=None, ge=1, le=1000, description="Attempts before the DLQ."
    )
    initialInterval: str | None = Field(
        default=None, pattern=DURATION, description="First delay, e.g. 1s."
    )
    maxInterval: str | None = Field(
        default=None, pattern=DURATION, description="Longest delay, e.g. 5m."
    )
    backoffCoefficient: float | None = Field(default=None, ge=1, description="Delay multiplier.")
    jitter: bool | None = Field(default=None, description="Randomise delays.")


class Resiliency(BaseModel):
    """Retries and timeouts of message handling."""

    model_config = _Strict

    retry: Retry | None = Field(default=None, description="Retry policy.")
    actorTimeout: str | None = Field(
        default=None, pattern=DURATION, description="Longest time one message may take, e.g. 5m."
    )


#: SQS attribute ranges (SQS API reference, SetQueueAttributes): VisibilityTimeout 0 s to
#: 12 h, MessageRetentionPeriod 60 s to 14 days, ReceiveMessageWaitTimeSeconds 0 to 20 s.
VISIBILITY_MAX, RETENTION_MIN, RETENTION_MAX, RECEIVE_WAIT_MAX = 43200, 60, 1209600, 20


class QueueAttributes(BaseModel):
    """The actor queue's SQS attributes a flavor or claim may set (unset: the settings')."""

    model_config = _Strict

    visibilityTimeoutSeconds: int | None = Field(
        default=None,
        ge=0,
        le=VISIBILITY_MAX,
        description="Seconds a received message stays hidden from other consumers (0 to 43200).",
    )
    messageRetentionSeconds: int | None = Field(
        default=None,
        ge=RETENTION_MIN,
        le=RETENTION_MAX,
        description="Seconds a message is kept (60 to 1209600, 14 days).",
    )
    receiveWaitTimeSeconds: int | None = Field(
        default=None,
        ge=0,
        le=RECEIVE_WAIT_MAX,
        description="Long polling: seconds a receive waits for a message (0 to 20).",
    )


class ActorSpec(BaseModel):
    """``XAsyncActor.spec``: one queue-driven actor."""

    model_config = _Strict

    actor: str | None = Field(
        default=None,
        pattern=DNS_LABEL,
        max_length=63,
        description="Actor name; default: the claim name.",
    )
    image: str = Field(min_length=1, description="The runtime image holding the handler.")
    handler: str = Field(
        pattern=HANDLER, description="module.function or module.Class.method to call per message."
    )
    imagePullPolicy: Literal["Always", "IfNotPresent", "Never"] | None = Field(
        default=None, description="Image pull policy of the runtime container."
    )
    pythonExecutable: str = Field(
        default="python3",
        pattern=describe_pattern(r"^\S+$", "a value without spaces"),
        description="Python interpreter in the image (python3).",
    )
    replicas: int = Field(
        default=1, ge=1, le=1000, description="Replicas when scaling is disabled."
    )
    env: list[EnvVar] = Field(default_factory=list, description="Runtime environment variables.")
    resources: Resources | None = Field(default=None, description="Runtime compute resources.")
    nodeSelector: dict[str, str] = Field(default_factory=dict, description="Pod node selector.")
    tolerations: list[dict[str, Any]] = Field(default_factory=list, description="Pod tolerations.")
    volumes: list[dict[str, Any]] = Field(default_factory=list, description="Extra pod volumes.")
    volumeMounts: list[dict[str, Any]] = Field(
        default_factory=list, description="Extra runtime volume mounts."
    )
    flavors: list[FlavorName] = Field(
        default_factory=list,
        max_length=MAX_FLAVORS,
        description="EnvironmentConfigs labelled asya.sh/flavor=<name> merged under this spec.",
    )
    scaling: Scaling = Field(default_factory=Scaling, description="KEDA autoscaling.")
    sidecar: Sidecar = Field(default_factory=Sidecar, description="Sidecar overrides.")
    resiliency: Resiliency | None = Field(default=None, description="Retries and timeouts.")
    queue: QueueAttributes = Field(
        default_factory=QueueAttributes,
        description="SQS attributes of the actor's queue; unset ones come from the settings.",
    )

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

    region: str = Field(pattern=AWS_REGION, description="AWS region.")
    accountId: str | None = Field(
        default=None,
        pattern=describe_pattern(r"^[0-9]{12}$", "a 12-digit AWS account id"),
        description="Account id; enables the dead-letter queue.",
    )
    providerConfig: str = Field(
        default="default", min_length=1, description="AWS ProviderConfig name."
    )


ROLE_ARN = describe_pattern(
    r"^arn:aws[a-z-]*:iam::[0-9]{12}:role/[A-Za-z0-9+=,.@_/-]+$",
    "an IAM role ARN such as arn:aws:iam::123456789012:role/asya-actors",
)
#: What a ``roleArnPattern`` may leave for the function to fill in.
ROLE_PLACEHOLDERS = ("namespace", "accountId")


class IrsaSettings(BaseModel):
    """IAM roles for service accounts: one shared service account per namespace."""

    model_config = _Strict

    enabled: bool = False
    serviceAccountName: str = Field(default="asya-actor", pattern=DNS_LABEL, max_length=63)
    roleArn: str | None = Field(
        default=None,
        pattern=ROLE_ARN,
        description="One role ARN for every namespace (or roleArnPattern).",
    )
    roleArnPattern: str | None = Field(
        default=None,
        pattern=describe_pattern(r"^arn:aws[a-z-]*:iam::", "an IAM role ARN (arn:aws:iam::...)"),
        description="Role ARN per namespace: {namespace} and {accountId} (aws.accountId) are "
        "replaced.",
    )

    @model_validator(mode="after")
    def _role(self) -> IrsaSettings:
        if self.roleArn and self.roleArnPattern:
            msg = "set roleArn or roleArnPattern, not both"
            raise ValueError(msg)
        if self.enabled and not (self.roleArn or self.roleArnPattern):
            msg = "roleArn or roleArnPattern is required when IRSA is enabled"
            raise ValueError(msg)
        return self

    def placeholders(self) -> list[str]:
        """The ``{name}`` placeholders ``roleArnPattern`` uses, in order."""
        return re.findall(r"\{([^{}]*)\}", self.roleArnPattern or "")

    def role_arn(self, namespace: str, account_id: str | None) -> str:
        """The role ARN for ``namespace`` (placeholders checked by ``checks.check_settings``)."""
        if self.roleArn:
            return self.roleArn
        arn = str(self.roleArnPattern).replace("{namespace}", namespace)
        return arn.replace("{accountId}", account_id or "{accountId}")


class KedaSecretRef(BaseModel):
    """The Secret holding AWS keys for KEDA, when ``authProvider`` is ``secret``."""

    model_config = _Strict

    name: str = Field(min_length=1)
    accessKeyIdKey: str = Field(default="AWS_ACCESS_KEY_ID", min_length=1)
    secretAccessKeyKey: str = Field(default="AWS_SECRET_ACCESS_KEY", min_length=1)


class KedaSettings(BaseModel):
    """How KEDA authenticates to SQS."""

    model_config = _Strict

    authProvider: Literal["podIdentity", "secret"] = "podIdentity"
    secretRef: KedaSecretRef | None = None
    identityOwner: Literal["keda", "workload"] | None = Field(
        default=None,
        description="podIdentity: whose AWS role reads the queue; KEDA's own (default) or "
        "the role on the actor pods' IRSA service account.",
    )

    @model_validator(mode="after")
    def _secret(self) -> KedaSettings:
        if self.authProvider == "secret" and self.secretRef is None:
            msg = "secretRef is required when authProvider is secret"
            raise ValueError(msg)
        if self.authProvider == "secret" and self.identityOwner is not None:
            msg = "identityOwner only applies to authProvider podIdentity"
            raise ValueError(msg)
        return self


class SidecarSettings(BaseModel):
    """Defaults of the sidecar container."""

    model_config = _Strict

    image: str = Field(default="ghcr.io/deliveryhero/asya-sidecar:latest", min_length=1)
    imagePullPolicy: Literal["Always", "IfNotPresent", "Never"] = "IfNotPresent"
    logLevel: Literal["debug", "info", "warn", "error"] = "info"


class RuntimeSettings(BaseModel):
    """Where the runtime script and the runtime/sidecar socket live in the pod."""

    model_config = _Strict

    configMap: str = Field(default="asya-runtime", pattern=DNS_LABEL)
    scriptPath: str = Field(default="/opt/asya/asya_runtime.py", pattern=ABSOLUTE_PATH)
    socketDir: str = Field(default="/var/run/asya", pattern=ABSOLUTE_PATH)


class DlqSettings(BaseModel):
    """The per-namespace dead-letter queue ``asya-<namespace>-dlq`` (needs ``aws.accountId``)."""

    model_config = _Strict

    enabled: bool = Field(
        default=True,
        description="Compose the namespace's dead-letter queue and redrive to it (with "
        "aws.accountId); false: no redrive.",
    )
    maxReceiveCount: int = Field(
        default=3,
        ge=1,
        le=1000,
        description="Receives before a message moves to the dead-letter queue (SQS allows 1 "
        "to 1000); a flavor or claim sets its own with resiliency.retry.maxAttempts.",
    )
    retentionSeconds: int = Field(
        default=1209600,
        ge=60,
        le=1209600,
        description="How long failed messages stay in the dead-letter queue (SQS allows 60 s "
        "to 14 days).",
    )


class QueueSettings(BaseModel):
    """The SQS attributes of every actor queue, unless a flavor or the claim sets its own.

    The defaults are the Asya Crossplane integration guide's queue properties.
    """

    model_config = _Strict

    visibilityTimeoutSeconds: int = Field(default=30, ge=0, le=VISIBILITY_MAX)
    messageRetentionSeconds: int = Field(default=345600, ge=RETENTION_MIN, le=RETENTION_MAX)
    receiveWaitTimeSeconds: int = Field(default=20, ge=0, le=RECEIVE_WAIT_MAX)

    def under(self, own: QueueAttributes) -> QueueSettings:
        """These settings with the attributes ``own`` (a flavor's or the claim's) sets on top."""
        return self.model_copy(update=own.model_dump(exclude_none=True))


class ActorSettings(BaseModel):
    """Cluster-wide async-actor settings: step input ``settings`` under the EnvironmentConfigs."""

    model_config = ConfigDict(extra="ignore")  # the environment is shared with other modules

    aws: AwsSettings
    irsa: IrsaSettings = Field(default_factory=IrsaSettings)
    keda: KedaSettings = Field(default_factory=KedaSettings)
    sidecar: SidecarSettings = Field(default_factory=SidecarSettings)
    runtime: RuntimeSettings = Field(default_factory=RuntimeSettings)
    dlq: DlqSettings = Field(default_factory=DlqSettings)
    queue: QueueSettings = Field(default_factory=QueueSettings)
    transport: Literal["sqs"] = "sqs"
    kubernetesProviderConfig: str = Field(default="default", min_length=1)


# -- status ---------------------------------------------------------------------------------


class ComponentStatus(BaseModel):
    """Readiness of one part of the actor's infrastructure."""

    ready: bool | None = None
    message: str | None = None


class WorkloadStatus(BaseModel):
    """The Deployment's readiness and size."""

    ready: bool | None = None
    replicas: int | None = None
    readyReplicas: int | None = None


class Infrastructure(BaseModel):
    """Readiness of the queue, KEDA and the workload."""

    queue: ComponentStatus | None = None
    keda: ComponentStatus | None = None
    workload: WorkloadStatus | None = None


class ActorStatus(BaseModel):
    """``XAsyncActor.status``."""

    model_config = ConfigDict(extra="allow")  # Crossplane writes conditions itself

    actor: str | None = Field(default=None, description="The resolved actor name.")
    phase: Literal["Creating", "Ready", "Napping"] | None = Field(
        default=None,
        description="Creating until queue, KEDA and workload are ready; Napping at zero.",
    )
    queueUrl: str | None = Field(default=None, description="The SQS queue URL.")
    queueIdentifier: str | None = Field(default=None, description="The SQS queue ARN.")
    infrastructure: Infrastructure | None = None


class FlavorSelection(BaseModel):
    """Just ``spec.flavors``: read before the flavors are fetched, the rest validated after."""

    model_config = ConfigDict(extra="ignore")

    flavors: list[str] = Field(default_factory=list, max_length=MAX_FLAVORS)

    @field_validator("flavors")
    @classmethod
    def _flavor_names(cls, value: list[str]) -> list[str]:
        return check_flavor_names(value)
