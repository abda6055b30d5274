"""The environment API's models: the claim's spec and status, and the environment keys read.

The XRD (``apis/environment/definition.yaml``) is generated from :class:`EnvironmentSpec` and
:class:`EnvironmentStatus`, so the API server and the function agree on what a valid claim is.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from fnplatform.api.validation import DNS_LABEL, DOMAIN, describe_pattern, repeated
from fnplatform.cloud import Cloud

ENV_NAME = r"^[A-Za-z_][A-Za-z0-9_]*$"
CPU = r"^[0-9]+(\.[0-9]+)?m?$"
MEMORY = r"^[0-9]+(Ki|Mi|Gi|Ti|K|M|G|T)?$"
ENGINE_VERSION = r"^(13|14|15|16|17)$"
URL_PATH = r"^/[a-z0-9]([a-z0-9/_-]*[a-z0-9])?$"
REGION = r"^[a-z0-9-]+$"
#: ``<prefix>-<appName>-<8 hex>`` must fit S3/GCS's 63 characters: with the shortest prefix
#: (1) 63 - 11 = 52; a longer prefix leaves less, checked when composing.
APP_NAME_MAX = 52
BUCKET_PREFIX_MAX = 20
BUCKET_NAME_MAX = 63
#: Bucket name prefixes S3 (xn--, sthree-) or GCS (goog) refuse.
RESERVED_BUCKET_PREFIXES = ("xn--", "sthree-", "goog")
Size = Literal["small", "medium", "large"]
#: A few custom hosts per environment: each is a certificate name (ACM allows 10 names per
#: certificate by default) and a DNS record or two.
CUSTOM_DOMAINS_MAX = 5
CustomDomain = Annotated[str, Field(pattern=DOMAIN, max_length=253)]


class EnvVar(BaseModel):
    """A plain environment variable of the backend container (secrets come from envFrom)."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(
        pattern=describe_pattern(
            ENV_NAME, "a variable name: letters, digits and _, not starting with a digit"
        ),
        description="Variable name.",
    )
    value: str = Field("", description="Literal value.")


class ResourceAmounts(BaseModel):
    """CPU and memory amounts, in Kubernetes quantity form."""

    model_config = ConfigDict(extra="forbid")

    cpu: str | None = Field(
        None,
        pattern=describe_pattern(CPU, "a CPU amount such as 250m or 1.5"),
        description="e.g. 250m.",
    )
    memory: str | None = Field(
        None,
        pattern=describe_pattern(MEMORY, "a memory amount such as 256Mi or 1Gi"),
        description="e.g. 256Mi.",
    )


class Resources(BaseModel):
    """Requests and limits of the backend container."""

    model_config = ConfigDict(extra="forbid")

    requests: ResourceAmounts = Field(default_factory=ResourceAmounts)
    limits: ResourceAmounts = Field(default_factory=ResourceAmounts)


class Backend(BaseModel):
    """The Python backend: a Deployment and a Service in the environment's namespace."""

    model_config = ConfigDict(extra="forbid")

    image: str = Field(min_length=1, description="Container image, e.g. ghcr.io/acme/api:1.4.")
    port: int = Field(8000, ge=1, le=65535, description="Port the backend listens on.")
    replicas: int = Field(1, ge=0, le=50, description="Number of backend pods.")
    env: list[EnvVar] = Field(default_factory=list, description="Plain environment variables.")
    resources: Resources = Field(default_factory=Resources, description="Requests and limits.")
    healthPath: str | None = Field(
        None,
        pattern=r"^/",
        description="HTTP path of the readiness and liveness probes; unset: a TCP check of "
        "the port (an app need not serve a health path).",
    )
    probes: bool = Field(
        True, description="Probe the backend (false: no readiness or liveness probes)."
    )

    @field_validator("env")
    @classmethod
    def _unique_env(cls, env: list[EnvVar]) -> list[EnvVar]:
        duplicates = repeated(item.name for item in env)
        if duplicates:
            msg = f"duplicate variables: {', '.join(duplicates)}"
            raise ValueError(msg)
        return env


class Database(BaseModel):
    """The PostgreSQL database, sized by a preset (see docs/environment.md per cloud)."""

    model_config = ConfigDict(extra="forbid")

    size: Size = Field(description="Preset: small, medium or large.")
    engineVersion: str = Field(
        "16",
        pattern=describe_pattern(ENGINE_VERSION, "a PostgreSQL major version: 13 to 17"),
        description="PostgreSQL major version.",
    )


class MicroFrontend(BaseModel):
    """One micro-frontend: its assets live under ``path`` and get their own cache path."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(
        pattern=DNS_LABEL,
        max_length=30,
        description="Micro-frontend name.",
    )
    path: str = Field(
        pattern=describe_pattern(
            URL_PATH, "a URL path such as /checkout: lowercase letters, digits, /, _ and -"
        ),
        max_length=100,
        description="URL path prefix, e.g. /checkout.",
    )


class Frontend(BaseModel):
    """Frontend hosting: a private asset bucket behind the cloud's CDN."""

    model_config = ConfigDict(extra="forbid")

    appName: str = Field(
        pattern=DNS_LABEL,
        max_length=APP_NAME_MAX,
        description="Application name: lowercase letters, digits and '-'; names the bucket.",
    )
    microFrontends: list[MicroFrontend] = Field(
        default_factory=list, description="Micro-frontends, one cache path each."
    )
    customDomains: list[CustomDomain] = Field(
        default_factory=list,
        max_length=CUSTOM_DOMAINS_MAX,
        description="Your own host names (e.g. shop.example.com) the CDN serves the frontends "
        "on, with a certificate the cloud issues once DNS proves each domain (status."
        "customDomains says which DNS records the platform must create, if any).",
    )

    @field_validator("customDomains")
    @classmethod
    def _unique_domains(cls, domains: list[str]) -> list[str]:
        duplicates = repeated(domains)
        if duplicates:
            msg = f"duplicate custom domains: {', '.join(duplicates)}"
            raise ValueError(msg)
        return domains

    @field_validator("microFrontends")
    @classmethod
    def _unique(cls, items: list[MicroFrontend]) -> list[MicroFrontend]:
        clash = [m.path for m in items if (m.path + "/").startswith("/api/")]
        if clash:
            msg = f"{', '.join(clash)}: /api is the backend's path on the CDN"
            raise ValueError(msg)
        for attribute in ("name", "path"):
            duplicates = repeated(getattr(item, attribute) for item in items)
            if duplicates:
                msg = f"duplicate micro-frontend {attribute}s: {', '.join(duplicates)}"
                raise ValueError(msg)
        return items


class CiIdentity(BaseModel):
    """The environment's CI identity (opt-in): a cloud identity that may write this
    environment's asset bucket and nothing else, assumed without keys by the pipeline's
    Kubernetes service account on the platform's CI cluster (environment ``ci``)."""

    model_config = ConfigDict(extra="forbid")

    namespace: str = Field(
        pattern=DNS_LABEL,
        max_length=63,
        description="Namespace of the CI runner pods on the CI cluster.",
    )
    serviceAccount: str = Field(
        pattern=DNS_LABEL,
        max_length=63,
        description="The runner pods' Kubernetes service account: only it gets the identity.",
    )


class EnvironmentSpec(BaseModel):
    """A squad's whole stack: backend, database and micro-frontends, on one cloud."""

    model_config = ConfigDict(extra="ignore")

    cloud: Cloud = Field("aws", description="Cloud to create the database and frontend on.")
    region: str | None = Field(
        None,
        pattern=describe_pattern(REGION, "a region such as eu-west-1 or westeurope"),
        max_length=40,
        description="Region, e.g. eu-west-1, westeurope; default: the platform's "
        "<cloud>.defaultRegion.",
    )
    backend: Backend
    database: Database
    frontend: Frontend
    ci: CiIdentity | None = Field(
        None,
        description="Opt-in: an identity for the squad's CI that may write the asset "
        "bucket and nothing else (status.ciIdentity names it).",
    )


class DnsRecordStatus(BaseModel):
    """A DNS record the platform must create for a custom domain."""

    name: str = Field(description="Fully qualified record name.")
    type: str = Field(description="CNAME, TXT or A.")
    value: str = Field(description="The record's value.")


class CustomDomainStatus(BaseModel):
    """A custom domain of the CDN, from observed state."""

    host: str = Field(description="The host name.")
    ready: bool = Field(description="The CDN serves it with an issued certificate.")
    dnsRecords: list[DnsRecordStatus] | None = Field(
        None, description="Records the platform must create in its DNS (no zone configured)."
    )


class CiIdentityStatus(BaseModel):
    """What the pipeline needs to act as the CI identity."""

    id: str | None = Field(
        None, description="AWS role ARN, GCP service account email or Azure client ID."
    )
    serviceAccount: str | None = Field(
        None, description="<namespace>/<name> of the service account bound to it."
    )
    annotations: dict[str, str] | None = Field(
        None, description="Annotations that service account needs (none on AWS: Pod Identity)."
    )


class EnvironmentStatus(BaseModel):
    """What the claim reports, from observed state."""

    databaseHost: str | None = Field(None, description="The database's private host name.")
    frontendBucketName: str | None = Field(None, description="Bucket to sync built assets to.")
    ready: bool | None = Field(None, description="True when every part is ready.")
    namespace: str | None = Field(None, description="The environment's namespace.")
    cdnDomainName: str | None = Field(None, description="Where the CDN serves the frontends.")
    backendService: str | None = Field(None, description="In-cluster address of the backend.")
    pending: list[str] | None = Field(None, description="Parts not ready yet.")
    databaseEngineVersion: str | None = Field(
        None, description="The PostgreSQL major the database runs (no going back from it)."
    )
    customDomains: list[CustomDomainStatus] | None = Field(
        None, description="Each custom domain: served yet, and DNS records still to create."
    )
    ciIdentity: CiIdentityStatus | None = Field(
        None, description="The CI identity (spec.ci): what the pipeline assumes."
    )


class AppCluster(BaseModel):
    """Where the app runs: absent, on the Crossplane cluster itself."""

    model_config = ConfigDict(extra="forbid")

    providerConfig: str = Field(min_length=1)


class FrontendSettings(BaseModel):
    """Platform-wide frontend settings."""

    model_config = ConfigDict(extra="forbid")

    domain: str | None = Field(None, pattern=DOMAIN, max_length=253)
    bucketPrefix: str | None = Field(
        None,
        min_length=1,
        max_length=BUCKET_PREFIX_MAX,
        pattern=describe_pattern(
            r"^[a-z0-9](?:[a-z0-9-]*[a-z0-9])?$",  # a DNS label, described for buckets
            "lowercase letters, digits and '-', starting and ending with a letter or digit",
        ),
        description="Prefix of every asset bucket, <prefix>-<appName>-<8 hex>: S3 and GCS "
        "bucket names are global, so it names the platform (e.g. acme-mfe).",
    )

    @field_validator("bucketPrefix")
    @classmethod
    def _not_reserved(cls, prefix: str | None) -> str | None:
        reserved = next((r for r in RESERVED_BUCKET_PREFIXES if (prefix or "").startswith(r)), None)
        if reserved:
            msg = f"must not start with {reserved}: S3 or GCS reserves it"
            raise ValueError(msg)
        return prefix


API_PATH = "/api"


class ApiSettings(BaseModel):
    """Where the CDN sends ``/api/*``: the platform's ingress, one host name per environment."""

    model_config = ConfigDict(extra="forbid")

    originDomain: str = Field(
        pattern=DOMAIN,
        description="Each environment's backend is <appName>-<8 hex>.<originDomain> on the "
        "platform's ingress (wildcard DNS record and certificate are the platform's).",
    )
    ingressClassName: str | None = Field(
        None, min_length=1, description="The Ingress class; unset: the cluster's default."
    )
    gcpBackendService: str | None = Field(
        None,
        pattern=describe_pattern(
            r"^(https://www\.googleapis\.com/compute/v1/)?projects/[^/]+/global/"
            r"backendServices/[a-z]([-a-z0-9]*[a-z0-9])?$",
            "a global backend service such as projects/<project>/global/backendServices/<name>",
        ),
        description="GCP: the global backend service (EXTERNAL_MANAGED) reaching the ingress, "
        "e.g. through an internet NEG; the URL map rewrites the host per environment.",
    )


class DatabaseUserSettings(BaseModel):
    """The images of the Job that creates the app's own database user (see ``user.py``)."""

    model_config = ConfigDict(extra="forbid")

    kubectlImage: str = Field(
        "docker.io/alpine/k8s:1.33.4",
        min_length=1,
        description="An image with kubectl and a POSIX shell (writes the app's Secret).",
    )
    postgresImage: str = Field(
        "docker.io/library/postgres:17-alpine",
        min_length=1,
        description="An image with psql and a POSIX shell (creates the role, grants).",
    )


class CiClusterSettings(BaseModel):
    """Where the platform's CI runners run, per cloud: what that cloud trusts their service
    account tokens through (``spec.ci`` needs the one of the environment's cloud)."""

    model_config = ConfigDict(extra="forbid")

    eksClusterName: str | None = Field(
        None,
        min_length=1,
        max_length=100,
        description="AWS: the EKS cluster (EKS Pod Identity association).",
    )
    eksRegion: str | None = Field(
        None, min_length=1, description="AWS: its region; default the environment's."
    )
    gkeWorkloadPool: str | None = Field(
        None,
        pattern=describe_pattern(
            r"^[a-z][-a-z0-9]{4,28}[a-z0-9]\.svc\.id\.goog$",
            "a workload identity pool such as prod-eu.svc.id.goog",
        ),
        description="GCP: the GKE workload identity pool, <project>.svc.id.goog.",
    )
    aksOidcIssuerUrl: str | None = Field(
        None,
        pattern=describe_pattern(r"^https://", "an https:// OIDC issuer URL"),
        description="Azure: the AKS cluster's OIDC issuer URL (federated credential).",
    )


class EnvironmentSettings(BaseModel):
    """The environment keys this module reads (cloud keys are read by the cloud builders)."""

    model_config = ConfigDict(extra="ignore")

    dataOnDelete: Literal["keep", "delete"] = Field(
        "keep",
        description="When an environment is deleted: keep its database and asset bucket "
        "(deletionPolicy Orphan; deletion finishes, the data stays) or delete them completely "
        "(the bucket with its objects, the database without a final snapshot). Per environment "
        "class: set it in the class's EnvironmentConfig.",
    )

    appCluster: AppCluster | None = None
    databaseUser: DatabaseUserSettings = Field(default_factory=DatabaseUserSettings)
    api: ApiSettings | None = None
    frontend: FrontendSettings = Field(default_factory=FrontendSettings)
    ci: CiClusterSettings = Field(default_factory=CiClusterSettings)
