"""The openstack module's four APIs, its status shapes and the region settings it reads.

Pools (``ControlPlaneCluster``, ``HypervisorCluster``, ``StorageCluster``) are provisioned once
per region as Gardener Shoots; many tenant ``OpenStackCluster``\\ s consume them, shared or
dedicated. Field names follow the CobaltCore (C5C3) design docs, ``docs/07-crossplane/``.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    ValidationInfo,
    field_validator,
    model_validator,
)

from fnplatform.api.validation import DNS_LABEL, DOMAIN, check_labels, describe_pattern
from fnplatform.api.xrd import ClaimRule, claim_rule, ordered

QUANTITY = describe_pattern(
    r"^[0-9]+(\.[0-9]+)?(Ki|Mi|Gi|Ti|Pi|Ei|k|M|G|T|P|E)?$",
    "a Kubernetes quantity such as 50Gi or 500Ti",
)
KUBERNETES_VERSION = describe_pattern(
    r"^[0-9]+\.[0-9]+(\.[0-9]+)?$", "a Kubernetes version such as 1.33 or 1.33.4"
)
OPENSTACK_RELEASE = describe_pattern(r"^\d{4}\.[12]$", "an OpenStack release such as 2025.2")
STORAGE_SIZE = describe_pattern(r"^[0-9]+(Mi|Gi|Ti)$", "a size in Mi, Gi or Ti such as 100Gi")

PoolName = Annotated[str, Field(pattern=DNS_LABEL, min_length=1, max_length=40)]
Size = Literal["small", "medium", "large", "xlarge"]
Pipeline = Literal["nova", "cinder", "manila"]
DEFAULT_PIPELINES: tuple[Pipeline, ...] = ("nova", "cinder")

_Strict = ConfigDict(extra="forbid")
_Spec = ConfigDict(extra="ignore")  # Crossplane writes its own fields into every XR spec


class IronCore(BaseModel):
    """Where the pool's machines come from in IronCore."""

    model_config = _Strict

    machinePool: str = Field(
        min_length=1,
        max_length=63,
        description="IronCore machine pool the workers are placed in (the worker zone).",
    )
    machineClass: str | None = Field(
        default=None,
        min_length=1,
        max_length=63,
        description="IronCore machine class (the worker machine type); defaults to the region's.",
    )


class ControlPlaneClusterSpec(BaseModel):
    """The region's control-plane cluster: where every tenant's OpenStack control plane runs."""

    model_config = _Spec

    region: str = Field(
        min_length=1, max_length=40, pattern=DNS_LABEL, description="Region, e.g. eu-de-1."
    )
    kubernetesVersion: str | None = Field(
        default=None,
        pattern=KUBERNETES_VERSION,
        description="Kubernetes version; defaults to the region's.",
    )
    workers: int = Field(default=5, ge=1, le=1000, description="Worker nodes.")
    machineType: str | None = Field(
        default=None,
        min_length=1,
        max_length=63,
        description="Worker machine type; defaults to the region's.",
    )
    volumeSize: str = Field(
        default="50Gi", pattern=QUANTITY, description="Root volume size of each worker."
    )
    highAvailability: bool = Field(
        default=True, description="Zone-redundant Kubernetes control plane."
    )


class PoolSpec(BaseModel):
    """What every IronCore pool (hypervisor, storage) states first: where it is, its name and
    Kubernetes version. Subclasses add their fields after these, in the XRD's order."""

    model_config = _Spec

    region: str = Field(
        min_length=1, max_length=40, pattern=DNS_LABEL, description="Region, e.g. eu-de-1."
    )
    name: PoolName | None = Field(
        default=None, description="Pool (and Shoot) name; defaults to the claim's name."
    )
    kubernetesVersion: str | None = Field(
        default=None,
        pattern=KUBERNETES_VERSION,
        description="Kubernetes version; defaults to the region's.",
    )


class HypervisorClusterSpec(PoolSpec):
    """A pool of hypervisor nodes that tenant OpenStack clusters run their VMs on."""

    workers: int = Field(ge=1, le=1000, description="Hypervisor nodes (the autoscaler minimum).")
    maxWorkers: int | None = Field(
        default=None,
        ge=1,
        le=1000,
        description="Autoscaler maximum; defaults to workers (a fixed-size pool).",
    )
    labels: dict[str, str] = Field(
        default_factory=dict,
        description='Pool labels, carried to the nodes. dedicated: "true" plus tenant: '
        "<claim namespace> reserves the pool for one tenant.",
    )
    ironcore: IronCore = Field(description="IronCore machine pool and class.")

    _labels = field_validator("labels")(check_labels)

    _bounds = ordered("workers", "maxWorkers", blame_high=True)


class Ceph(BaseModel):
    """The Ceph cluster a storage pool runs (read by the OpenStack clusters that consume it)."""

    model_config = _Strict

    osdCount: int = Field(default=3, ge=1, le=10000, description="Ceph OSDs.")
    deviceClass: Literal["hdd", "ssd", "nvme"] = Field(
        default="nvme", description="Device class tenant pools are placed on."
    )
    targetCapacity: str | None = Field(
        default=None, pattern=QUANTITY, description="Raw capacity the pool aims at, e.g. 500Ti."
    )
    replicationFactor: int = Field(
        default=3, ge=1, le=5, description="Replicas of tenant block pools."
    )
    encrypted: bool = Field(
        default=False,
        description="The pool's OSDs are encrypted at rest (Rook dm-crypt: the CephCluster's "
        "storage.config.encryptedDevice or encrypted storageClassDeviceSets). Verified: the "
        "pool is Ready only once its CephCluster says so. OpenStack clusters with "
        "encryptedStorage accept only such pools.",
    )


class StorageClusterSpec(PoolSpec):
    """A pool of storage nodes running Ceph (Rook), shared by tenant OpenStack clusters."""

    workers: int = Field(default=3, ge=1, le=1000, description="Storage nodes.")
    labels: dict[str, str] = Field(
        default_factory=dict,
        description="Pool labels, carried to the nodes; dedicated/tenant as for hypervisors.",
    )
    ironcore: IronCore = Field(description="IronCore machine pool and class.")
    ceph: Ceph = Field(default_factory=Ceph, description="Ceph settings.")

    _labels = field_validator("labels")(check_labels)


class Services(BaseModel):
    """OpenStack services of the tenant cluster (the design's set)."""

    model_config = _Strict

    keystone: bool = Field(default=True, description="Identity (always needed).")
    nova: bool = Field(default=True, description="Compute (with placement).")
    neutron: bool = Field(default=True, description="Networking.")
    cinder: bool = Field(default=True, description="Block storage.")
    glance: bool = Field(default=True, description="Images.")
    horizon: bool = Field(default=True, description="Dashboard.")
    octavia: bool = Field(default=False, description="Load balancers.")
    manila: bool = Field(default=False, description="Shared filesystems (CephFS).")

    _keystone = claim_rule(
        ClaimRule(
            "keystone",
            "cannot be disabled: every other service authenticates against it",
            "!has(self.keystone) || self.keystone",
            lambda services: services.keystone,
        )
    )


class Cortex(BaseModel):
    """Cortex, the scheduling extension."""

    model_config = _Strict

    enabled: bool = Field(default=True, description="Run Cortex.")
    pipelines: list[Pipeline] = Field(
        default_factory=lambda: list(DEFAULT_PIPELINES), description="Schedulers Cortex serves."
    )


class Tls(BaseModel):
    """TLS of the public endpoints."""

    model_config = _Strict

    enabled: bool = Field(default=True, description="Serve the APIs over TLS.")
    issuerRef: str | None = Field(
        default=None,
        min_length=1,
        max_length=253,
        description="cert-manager ClusterIssuer name; default: the region's "
        "controlPlane.tlsIssuerRef.",
    )


class OpenStackClusterSpec(BaseModel):
    """A tenant OpenStack cluster on shared (or dedicated) hypervisor and storage pools."""

    model_config = _Spec

    region: str = Field(
        min_length=1, max_length=40, pattern=DNS_LABEL, description="Region, e.g. eu-de-1."
    )
    size: Size = Field(description="Size preset: replicas of the control-plane services.")
    hypervisorClusters: list[PoolName] = Field(
        min_length=1, max_length=200, description="HypervisorCluster pools (claim names)."
    )
    storageClusters: list[PoolName] = Field(
        min_length=1,
        max_length=50,
        description="StorageCluster pools (claim names); the tenant's Ceph pools and client go "
        "on each, CephFS (manila) on the first.",
    )
    controlPlaneCluster: PoolName | None = Field(
        default=None, description="ControlPlaneCluster claim; default <region>-control-plane."
    )
    services: Services = Field(default_factory=Services, description="OpenStack services.")
    cortex: Cortex = Field(default_factory=Cortex, description="Cortex scheduling.")
    tls: Tls = Field(default_factory=Tls, description="TLS.")
    encryptedStorage: bool = Field(
        default=False,
        description="Require every storage pool to be encrypted (its ceph.encrypted): an "
        "unencrypted one leaves the cluster Pending, naming the pool.",
    )

    @field_validator("hypervisorClusters", "storageClusters")
    @classmethod
    def _unique(cls, names: list[str]) -> list[str]:
        if len(set(names)) != len(names):
            msg = "lists a pool twice"
            raise ValueError(msg)
        return names

    def control_plane_claim(self) -> str:
        """The ControlPlaneCluster claim this cluster's control plane runs in."""
        return self.controlPlaneCluster or f"{self.region}-control-plane"


# ----------------------------------------------------------------------------- status


class PoolStatus(BaseModel):
    """What a pool reports."""

    phase: str | None = Field(default=None, description="Pending, Provisioning or Ready.")
    clusterName: str | None = Field(default=None, description="The Gardener Shoot.")
    providerConfig: str | None = Field(
        default=None, description="provider-kubernetes ProviderConfig reaching the cluster."
    )
    nodeCount: int | None = Field(default=None, description="Worker nodes (minimum).")
    capacity: str | None = Field(default=None, description="Target raw capacity (storage).")
    encrypted: bool | None = Field(
        default=None,
        description="Storage: OSD encryption declared and seen on the pool's CephCluster.",
    )


class StorageQuota(BaseModel):
    """Quotas of a tenant's three RBD pools (logical bytes, as Ceph's max_bytes counts them),
    as Kubernetes quantities."""

    model_config = _Strict

    volumes: str | None = Field(default=None, pattern=QUANTITY, description="Cinder volumes.")
    images: str | None = Field(default=None, pattern=QUANTITY, description="Glance images.")
    ephemeral: str | None = Field(
        default=None, pattern=QUANTITY, description="Nova ephemeral disks."
    )


class ConsumedPool(BaseModel):
    """A pool an OpenStack cluster consumes, with its state when last resolved."""

    name: str = Field(description="Pool claim name.")
    status: str = Field(description="Ready, NotReady, Missing, WrongRegion or Dedicated.")
    providerConfig: str | None = Field(default=None, description="ProviderConfig of the pool.")
    composite: str | None = Field(default=None, description="The pool's composite resource.")
    reason: str | None = Field(default=None, description="Why the pool is not usable.")
    nodeCount: int | None = Field(default=None, description="Hypervisor nodes.")
    availableCapacity: str | None = Field(default=None, description="Storage capacity.")
    replicationFactor: int | None = Field(default=None, description="Storage: Ceph replicas.")
    deviceClass: str | None = Field(default=None, description="Storage: Ceph device class.")
    encrypted: bool | None = Field(default=None, description="Storage: OSDs encrypted.")
    quotas: StorageQuota | None = Field(
        default=None, description="Storage: the tenant's Ceph pool quotas (maxSize) here."
    )
    quotaReason: str | None = Field(
        default=None, description="Storage: why the quotas are less than the size preset's."
    )


class ConsumedPools(BaseModel):
    """The pools an OpenStack cluster composes on."""

    hypervisor: list[ConsumedPool] = Field(default_factory=list, description="Hypervisors.")
    storage: list[ConsumedPool] = Field(default_factory=list, description="Storage.")


class Endpoints(BaseModel):
    """Public endpoints, once the ControlPlane reports them."""

    keystone: str | None = Field(default=None, description="Identity endpoint.")
    horizon: str | None = Field(default=None, description="Dashboard.")


class OpenStackClusterStatus(BaseModel):
    """What an OpenStack cluster reports."""

    phase: str | None = Field(default=None, description="Pending, Provisioning, Ready, Degraded.")
    controlPlane: str | None = Field(default=None, description="ControlPlane namespace/name.")
    controlPlaneCluster: ConsumedPool | None = Field(
        default=None, description="The control-plane cluster the ControlPlane runs in."
    )
    consumedPools: ConsumedPools | None = Field(default=None, description="Consumed pools.")
    endpoints: Endpoints | None = Field(default=None, description="Public endpoints.")


# ----------------------------------------------------------------------------- settings


class MachineImage(BaseModel):
    """The worker OS image."""

    model_config = _Strict

    name: str = Field(default="gardenlinux", min_length=1)
    version: str | None = Field(default=None, min_length=1)


#: Gardener provider extensions whose Shoot validation requires ``networking.nodes`` and a
#: zone per worker (their ``pkg/apis/<provider>/validation/shoot.go``).
ZONED_PROVIDERS = ("ironcore", "openstack")


class Gardener(BaseModel):
    """Where and how the region's Shoots are created."""

    model_config = _Strict

    project: str = Field(min_length=1, description="Gardener project.")
    namespace: str = Field(min_length=1, description="The project's namespace (garden-<p>).")
    providerConfig: str = Field(
        min_length=1, description="provider-kubernetes ProviderConfig of the garden."
    )
    providerType: str = Field(default="ironcore", min_length=1)
    region: str | None = Field(
        default=None, min_length=1, description="Gardener region name when it differs."
    )
    cloudProfile: dict[str, str] = Field(description="{kind, name} of the CloudProfile.")
    credentialsBindingName: str = Field(min_length=1)
    kubernetesVersion: str = Field(pattern=KUBERNETES_VERSION)
    machineClass: str = Field(min_length=1, description="Default worker machine class.")
    machineImage: MachineImage = Field(default_factory=MachineImage)
    purpose: Literal["evaluation", "testing", "development", "production", "infrastructure"] = (
        "production"
    )
    networking: dict[str, Any] | None = Field(default=None, validate_default=True)
    infrastructureConfig: dict[str, Any] | None = None
    controlPlaneConfig: dict[str, Any] | None = None
    workerVolumeSize: str = Field(default="50Gi", pattern=QUANTITY)
    workerVolumeType: str | None = Field(
        default=None,
        min_length=1,
        description="Worker volume type (IronCore volume class); required for ironcore.",
    )
    zones: list[str] = Field(
        default_factory=list,
        description="The region's zones (IronCore machine pools) the control-plane cluster's "
        "workers are spread over; required for ironcore and openstack.",
    )

    @model_validator(mode="after")
    def _profile(self) -> Gardener:
        if set(self.cloudProfile) != {"kind", "name"}:
            msg = "cloudProfile needs exactly kind and name"
            raise ValueError(msg)
        # Gardener's ValidateShootSpec allows purpose infrastructure in the garden namespace
        # only (pkg/apis/core/validation/shoot.go, availableShootPurposes).
        # gardener-extension-provider-ironcore pkg/apis/ironcore/validation/shoot.go: every
        # worker needs a volume with type and size, and at least one zone.
        if self.providerType == "ironcore" and not self.workerVolumeType:
            msg = (
                "workerVolumeType is required for ironcore: the IronCore extension refuses "
                "a worker volume without a type"
            )
            raise ValueError(msg)
        if self.providerType in ZONED_PROVIDERS and not self.zones:
            msg = (
                f"zones is required for {self.providerType}: its extension refuses workers "
                "without a zone (the control-plane cluster's workers go there)"
            )
            raise ValueError(msg)
        if self.purpose == "infrastructure" and self.namespace != "garden":
            msg = (
                f"purpose infrastructure is only allowed for Shoots in the garden namespace, "
                f"not {self.namespace}"
            )
            raise ValueError(msg)
        return self

    @field_validator("networking")
    @classmethod
    def _networking(
        cls, networking: dict[str, Any] | None, info: ValidationInfo
    ) -> dict[str, Any] | None:
        """Gardener refuses a Shoot with workers whose ``networking.type`` is missing
        (``validateNetworking`` in ``pkg/apis/core/validation/shoot.go``: "networking type
        must be provided"), and gardener-extension-provider-openstack one without
        ``networking.nodes`` ("a nodes CIDR must be provided for Openstack shoots"). Said here,
        before any Shoot is sent, instead of in the Object's sync error."""
        if not networking or not networking.get("type"):
            msg = (
                "needs type (the CNI, e.g. cilium or calico): Gardener refuses a Shoot "
                "with workers without networking.type"
            )
            raise ValueError(msg)
        provider = info.data.get("providerType")
        if provider in ZONED_PROVIDERS and not networking.get("nodes"):
            msg = (
                f"needs nodes (the node CIDR): the {provider} extension refuses a Shoot "
                "without networking.nodes"
            )
            raise ValueError(msg)
        return networking


class Access(BaseModel):
    """How the management cluster reaches each new Shoot (see docs/openstack.md)."""

    model_config = _Strict

    namespace: str = Field(
        default="crossplane-system",
        min_length=1,
        description="Namespace of the kubeconfig Secrets and refreshers.",
    )
    gardenKubeconfigSecret: str = Field(
        min_length=1,
        description="Secret (key kubeconfig) of a Gardener project ServiceAccount allowed to "
        "create shoots/adminkubeconfig.",
    )
    refresherImage: str = Field(min_length=1, description="Image with kubectl and jq.")
    schedule: str = Field(default="*/15 * * * *", min_length=1)
    expirationSeconds: int = Field(default=3600, ge=600, le=86400)


class ControlPlaneSettings(BaseModel):
    """Region-wide values every ControlPlane needs and the claim does not say."""

    model_config = _Strict

    openStackRelease: str = Field(pattern=OPENSTACK_RELEASE)
    databaseClusterRef: str = Field(default="openstack-db", min_length=1)
    cacheClusterRef: str = Field(default="openstack-memcached", min_length=1)
    cacheBackend: str = Field(default="dogpile.cache.pymemcache", min_length=1)
    databaseStorageSize: str = Field(default="100Gi", pattern=STORAGE_SIZE)
    glanceBackends: list[dict[str, Any]] | None = None
    tlsIssuerRef: str | None = Field(
        default=None,
        min_length=1,
        max_length=253,
        description="The cert-manager ClusterIssuer of the region's public endpoints, for "
        "OpenStack clusters whose spec.tls names none (a tenant need not know it).",
    )
    domain: str | None = Field(
        default=None,
        pattern=DOMAIN,
        max_length=253,
        description="Public DNS domain: keystone and horizon of tenant t are served at "
        "keystone-t.<domain> and horizon-t.<domain>.",
    )


class Settings(BaseModel):
    """The region's EnvironmentConfig (merged), as the openstack module reads it."""

    model_config = ConfigDict(extra="ignore")

    gardener: Gardener
    access: Access
    poolNamespace: str = Field(
        default="infrastructure", min_length=1, description="Namespace of the pool claims."
    )
    controlPlane: ControlPlaneSettings | None = None
    cephNamespace: str = Field(default="rook-ceph", min_length=1)
    cephCluster: str = Field(
        default="rook-ceph",
        min_length=1,
        description="Name of the CephCluster in cephNamespace on every storage pool (what an "
        "encrypted pool's encryption is read from).",
    )
    storageQuotas: dict[Size, StorageQuota] = Field(
        default_factory=dict,
        description="The region's quotas per size, over the built-in presets (per RBD pool).",
    )
    maxTenantShare: int = Field(
        default=50,
        ge=1,
        le=100,
        description="Percent of a shared storage pool's raw capacity one tenant's quotas may "
        "take (replicas counted); dedicated pools: all of it.",
    )
