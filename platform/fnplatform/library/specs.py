"""Typed, cloud-agnostic descriptions of what a composer asks the library for.

A spec names other composed resources by their composition name (``network="network"``); the
cloud module turns those into the references its provider understands. Where resources go
(cloud, region, account/project/resource group) is not in a spec: the composer places the whole
composite (:meth:`fnplatform.composition.Composition.place`) and builders read it from there.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Literal, TypeVar

from fnplatform.errors import SpecError

Preset = TypeVar("Preset")


@dataclass(frozen=True)
class NetworkSpec:
    """A network with one primary range; Kubernetes ranges and tags only when asked.

    ``pods_cidr``/``services_cidr`` are the secondary ranges a VPC-native GKE or an AKS overlay
    cluster allocates from (None: no secondary ranges). ``private`` puts workloads on subnets
    without public IPs; ``nat`` gives those egress (None: NAT exactly when private, the cluster
    module's choice). ``kubernetes`` adds the subnet tags Kubernetes load balancers are placed
    by (AWS ``kubernetes.io/role/elb``).
    """

    subnet_cidr: str
    pods_cidr: str | None = None
    services_cidr: str | None = None
    private: bool = False
    nat: bool | None = None
    kubernetes: bool = False
    #: None: the placed region. A second site's network (a failover region) names its own.
    region: str | None = None

    @property
    def egress_nat(self) -> bool:
        """Whether private subnets get a NAT for egress."""
        return self.private if self.nat is None else self.nat


@dataclass(frozen=True)
class ClusterSpec:
    """A managed Kubernetes control plane."""

    network: str  # composition name of the network
    private: bool
    connection_secret: str  # Secret name (in the provider namespace) for the kubeconfig
    connection_namespace: str = "crossplane-system"
    version: str | None = None
    pods_cidr: str | None = None  # pod range, for clouds whose cluster (not network) owns it
    #: The nodes' own range (the network's subnet): where a cloud lets API-server clients in
    #: when the platform names no allowlist (GKE's authorized networks).
    node_cidr: str | None = None
    services_cidr: str | None = None  # Service range the control plane allocates from
    default_machine_type: str | None = None  # for pools the cloud creates with the cluster
    #: The cloud's name for the cluster (its external name); None: derived from the composite.
    cluster_name: str | None = None
    #: The network's NetworkSpec.private (nodes in private subnets) and .egress_nat (a NAT
    #: gateway for their egress), so a builder needs not look at what the network emitted.
    private_network: bool = False
    network_nat: bool = False


@dataclass(frozen=True)
class Taint:
    """A Kubernetes node taint; ``effect`` as Kubernetes spells it (``NoSchedule``...)."""

    key: str
    value: str
    effect: str

    @property
    def api_effect(self) -> str:
        """The effect as the GKE and EKS APIs spell it: ``NoSchedule`` -> ``NO_SCHEDULE``."""
        return "".join(f"_{c}" if c.isupper() else c for c in self.effect).lstrip("_").upper()


@dataclass(frozen=True)
class NodePoolSpec:
    """A group of worker nodes.

    ``disk_type`` is the cloud's own name (GKE ``pd-balanced``, EBS ``gp3``, AKS ``Managed``):
    each builder checks it. ``zones`` are the cloud's zone names (GKE ``europe-west1-b``, AWS
    ``eu-west-1a``, AKS ``1``). Spot capacity, disk and zones can't change on an existing pool
    on every cloud: a builder refuses what would replace the pool (a SpecError naming it).
    """

    cluster: str  # composition name of the cluster
    network: str  # composition name of the network
    pool: str  # the user's pool name
    machine_type: str
    min_nodes: int
    max_nodes: int
    disk_size_gb: int | None = None
    disk_type: str | None = None
    labels: Mapping[str, str] = field(default_factory=dict)
    taints: tuple[Taint, ...] = ()
    spot: bool = False
    zones: tuple[str, ...] = ()
    #: The cluster's ClusterSpec.cluster_name (None: derived), for clouds whose pools name it.
    cluster_name: str | None = None
    #: The cluster's ClusterSpec.version (None: the cloud picks), for pools that state it.
    version: str | None = None
    #: The network's NetworkSpec.private: the nodes live in its private subnets.
    private_network: bool = False


@dataclass(frozen=True)
class DnsZoneSpec:
    """A DNS zone for ``domain``; private zones are visible only inside ``network``."""

    domain: str
    private: bool
    network: str | None = None


class IdentityPurpose(StrEnum):
    """What a workload identity may do: each cloud grants exactly that, nothing broader."""

    #: cert-manager's DNS01 solver: manage records in the spec's zones.
    DNS_RECORDS = "dns"
    #: cluster-autoscaler: resize the cluster's own node groups.
    NODE_AUTOSCALING = "cluster-autoscaler"
    #: a CI pipeline: write (put, overwrite, delete, list) the objects of the spec's buckets.
    BUCKET_WRITER = "bucket-writer"


@dataclass(frozen=True)
class ExternalCluster:
    """A cluster the composite does not compose, by what its cloud trusts its tokens through:
    AWS the EKS cluster's name (and region, default the composite's) for the Pod Identity
    association; GCP the workload identity pool (``<project>.svc.id.goog``); Azure the
    cluster's OIDC issuer URL for the federated credential."""

    name: str
    region: str | None = None


@dataclass(frozen=True)
class IdentityZone:
    """A composed DNS zone an identity writes records in: its composition name and what its
    :class:`DnsZoneSpec` said (the builder needs the domain for record-name conditions, and
    whether it is private, without reading the zone's body)."""

    name: str  # composition name of the zone
    domain: str
    private: bool


@dataclass(frozen=True)
class IdentityBucket:
    """A composed bucket a ``bucket-writer`` identity writes, as its builder needs it."""

    name: str  # composition name of the bucket
    bucket_name: str  # its name in the cloud (what values.bucket_address returned)


@dataclass(frozen=True)
class WorkloadIdentitySpec:
    """A cloud identity that a Kubernetes service account assumes without static keys."""

    cluster: str  # composition name of the cluster ("" with external_cluster)
    namespace: str
    service_account: str
    purpose: IdentityPurpose
    zones: tuple[IdentityZone, ...] = field(default_factory=tuple)  # the DNS zones it writes
    #: the buckets a ``bucket-writer`` identity may write, nothing else
    buckets: tuple[IdentityBucket, ...] = field(default_factory=tuple)
    #: the service account lives on a cluster this composite does not compose
    external_cluster: ExternalCluster | None = None
    #: the composed cluster's ClusterSpec.cluster_name (None: derived)
    cluster_name: str | None = None


@dataclass(frozen=True)
class QueueSpec:
    """A message queue."""

    queue_name: str
    visibility_timeout_seconds: int = 30
    message_retention_seconds: int = 345600
    receive_wait_time_seconds: int = 20
    dead_letter_arn: str | None = None
    max_receive_count: int = 3
    tags: dict[str, str] = field(default_factory=dict)
    #: Other composites declare the same queue (a namespace's dead-letter queue): this one
    #: creates it if missing and never updates or deletes it, so they never fight over it.
    shared: bool = False


@dataclass(frozen=True)
class SecretKey:
    """One key of a Kubernetes Secret on the Crossplane cluster."""

    name: str
    namespace: str
    key: str


@dataclass(frozen=True)
class PrivateNetwork:
    """The platform's private network a database joins, as the platform wrote it, and where.

    ``settings`` is the cloud's own block (an AWS VPC's ids, an Azure subnet, a GCP network),
    read by that cloud's builder with its model; ``field`` is where it was written
    (``environment.aws.privateNetworks.eu-west-1``), so an error about it names that field.
    """

    settings: Mapping[str, Any]
    field: str


@dataclass(frozen=True)
class DatabaseSpec:
    """A private PostgreSQL server sized by a preset, its password generated by the provider.

    ``size`` picks a row of the cloud's preset table (instance class / tier / SKU and storage,
    documented in each cloud's ``database.py``). The server joins ``network`` (the private
    network the composer chose for its region) and has no public address. The provider, never the
    function, generates the administrator password (GCP, whose provider cannot, reads it from
    the platform's Secret or ``password_secret``); the connection details go to
    ``connection_secret`` in ``connection_namespace``.
    """

    size: str  # small | medium | large
    engine_version: str  # PostgreSQL major version, e.g. "16"
    database_name: str
    connection_secret: str
    connection_namespace: str
    admin_username: str = "appadmin"
    #: Take a final snapshot on deletion (AWS RDS); False deletes without one.
    final_snapshot: bool = True
    #: The Secret the composer had the administrator's password generated into, for a cloud
    #: whose provider cannot generate one and whose platform names none
    #: (``database_password_source`` is ``"generated"``).
    password_secret: SecretKey | None = None
    #: The private network of the database's region; None: the platform names none (a
    #: SpecError on ``network`` when the cloud's builder needs one).
    network: PrivateNetwork | None = None

    def required_network(self, what: str) -> PrivateNetwork:
        """:attr:`network`, or a SpecError on ``network`` saying ``what`` the cloud needs."""
        if self.network is None:
            raise SpecError("network", f"required for a database: {what}")
        return self.network

    def preset(self, table: Mapping[str, Preset]) -> Preset:
        """The row of a cloud's preset ``table`` for ``size``; a SpecError lists the sizes."""
        if self.size not in table:
            raise SpecError("size", f"unknown size {self.size!r}; one of {', '.join(table)}")
        return table[self.size]


@dataclass(frozen=True)
class CdnPath:
    """One cache path: requests under ``path`` (``/checkout``) are cached as their own route."""

    name: str
    path: str


@dataclass(frozen=True)
class CdnSpec:
    """A CDN serving the private bucket composed as ``bucket`` (``bucket_name`` in the cloud).

    The bucket stays private: the CDN reads it as a named reader (AWS origin access control,
    GCP private bucket access, Azure Front Door private link). ``hostname`` is the public
    name where a cloud needs one for its certificate (GCP's managed certificate).
    """

    bucket: str  # composition name of the bucket
    bucket_name: str
    paths: tuple[CdnPath, ...] = ()
    hostname: str | None = None
    root_object: str = "index.html"
    #: The backend's HTTPS origin host (the platform's ingress, reached by this name): when
    #: set, ``api_path/*`` is forwarded there uncached with every method.
    api_origin: str | None = None
    api_path: str = "/api"
    #: GCP: the global backend service (self link) reaching the platform's ingress; a URL
    #: map routes to backend services, not host names.
    api_backend: str | None = None
    #: The users' own host names (``shop.example.com``): the CDN serves them too, each with a
    #: certificate the cloud issues once DNS proves the domain (see :class:`CdnCustomDomain`).
    custom_domains: tuple[str, ...] = ()


@dataclass(frozen=True)
class DnsRecord:
    """A DNS record someone must create: ``name`` fully qualified, no trailing dot."""

    name: str
    type: str  # CNAME, TXT, A
    value: str


@dataclass(frozen=True)
class CdnCustomDomain:
    """One custom host of a CDN, from observed state.

    ``ready``: the CDN serves the host with an issued certificate. ``records``: what the
    platform must still create in its own DNS because it named no zone the cloud may write
    (certificate validation, the host pointing at the CDN); empty when they are composed.
    """

    host: str
    ready: bool
    records: tuple[DnsRecord, ...] = ()


# -- storage, keys, ingress (issue 8, section 2) ----------------------------------------------


@dataclass(frozen=True)
class NameRule:
    """What a cloud accepts as a name: a composer validates user-chosen names against it."""

    pattern: str  # a full-match regular expression
    min_length: int
    max_length: int
    description: str  # for error messages: "3-63 lowercase letters, digits, '-' and '.'"


@dataclass(frozen=True)
class BucketReader:
    """Someone named as allowed to read (or, with ``write``, deliver) the bucket's objects.

    ``principal`` is in the cloud's own form: AWS a service principal
    (``cloudfront.amazonaws.com``) or an IAM role ARN; GCP an IAM member
    (``serviceAccount:...``); Azure a principal (object) id. ``source`` narrows a service
    principal to one resource acting through it (AWS ``aws:SourceArn``, e.g. a CloudFront
    distribution ARN).
    """

    name: str  # unique within the bucket: the policy statement id / helper resource suffix
    principal: str
    source: str | None = None
    write: bool = False


@dataclass(frozen=True)
class KeySpec:
    """A customer-managed encryption key with automatic rotation, usable by the cloud's storage.

    The key's grants let the storage service of its cloud use it for the buckets that name it:
    AWS a key policy for S3 in the account, GCP the project's Cloud Storage service agent, Azure
    a user-assigned identity the storage account runs as.
    """

    description: str
    rotation_days: int = 365
    region: str | None = None  # None: the placed region (a replica's key lives by its replica)
    #: The key encrypts a bucket keeping a copy there (:attr:`BucketSpec.geo_replica_region`):
    #: a cloud whose key must be where both copies are puts it there (GCP: a dual-region
    #: bucket's key ring in that dual-region's Cloud KMS location); others ignore it.
    geo_replica_region: str | None = None
    #: Principals besides the storage service that may decrypt with the key, in the cloud's
    #: form (see :class:`BucketReader`): a CDN reading objects it encrypts, say.
    decrypters: tuple[BucketReader, ...] = ()


@dataclass(frozen=True)
class BucketReplica:
    """The composed bucket a bucket replicates to, with what replication needs of it: what
    its own :class:`BucketSpec` said (region, key, name), so the builder never reads its body."""

    bucket: str  # composition name of the destination bucket
    region: str
    key: str | None = None  # composition name of the key encrypting it
    bucket_name: str | None = None  # its BucketSpec.bucket_name


@dataclass(frozen=True)
class BucketSpec:
    """An object store that is never public, versioned, TLS-only, encrypted with ``key``.

    ``key`` names the composed :class:`KeySpec` key; None means the cloud's own managed
    encryption (only for buckets a service writes into that can't use a customer key, such as
    AWS server access logs). ``retention_days`` with ``lock`` holds every object version in
    compliance mode (nobody can delete it early, not even the account root); lifecycle
    expiration never comes before the lock ends. ``replica_of`` makes this bucket the
    replication destination of another composed bucket.
    """

    bucket_name: str | None = None  # None: derived from the composite and composition name
    key: str | None = None
    versioning: bool = True
    retention_days: int | None = None
    lock: bool = False  # compliance-mode object lock / locked retention policy / locked WORM
    access_logging: bool = False
    expire_after_days: int | None = None  # current versions; must be >= retention_days
    noncurrent_expire_after_days: int | None = None
    readers: tuple[BucketReader, ...] = ()
    replicate_to: BucketReplica | None = None  # the destination bucket (AWS)
    #: A second region holding a copy of every object, replicated by the storage service
    #: inside this bucket (Azure geo-redundant accounts, to the region's pair; GCP dual-region
    #: buckets): the same lock, key and settings, no second bucket. Where the cloud replicates
    #: only to another bucket (``values.bucket_replication``), ``replicate_to`` is used instead.
    #: Its key is given the same region (:attr:`KeySpec.geo_replica_region`).
    geo_replica_region: str | None = None
    region: str | None = None  # None: the placed region
    min_tls: str = "1.2"
    #: Deleting the bucket deletes its objects (and versions) first; else a bucket holding
    #: objects cannot be deleted, and neither can its claim (S3, GCS).
    force_destroy: bool = False

    def check_retention(self) -> None:
        """The rule every cloud shares: a lock needs a retention, and no lifecycle expiry may
        end before it (it would delete what the lock promises to keep)."""
        retention = self.retention_days or 0
        if self.lock and not self.retention_days:
            raise SpecError("retention_days", "required with a lock: how long to hold")
        for attribute in ("expire_after_days", "noncurrent_expire_after_days"):
            days = getattr(self, attribute)
            if days is not None and days < retention:
                raise SpecError(
                    attribute,
                    f"{days} days would expire objects before the {retention}-day retention ends",
                )


class BucketPart(StrEnum):
    """What a bucket does that a composer vouches for (a compliance condition): each cloud says
    which of the resources its bucket builder emits do it (``values.bucket_parts``)."""

    #: encryption with the spec's key, besides the bucket itself and the key's own resources
    ENCRYPTION = "encryption"
    NEVER_PUBLIC = "never-public"
    #: a minimum TLS version in transit (none where the cloud cannot: a gap)
    TLS = "tls"
    VERSIONING = "versioning"
    LIFECYCLE = "lifecycle"
    LOCK = "lock"
    ACCESS_LOGGING = "access-logging"
    #: the copy kept by the storage service itself (BucketSpec.geo_replica_region)
    GEO_REPLICATION = "geo-replication"
    #: the replication to another bucket (BucketSpec.replicate_to), besides that bucket
    REPLICATION = "replication"


@dataclass(frozen=True)
class IngressRule:
    """Traffic admitted from one source range to a port range over one protocol."""

    protocol: str  # tcp | udp
    from_port: int
    to_port: int
    source: str  # a CIDR; never the whole internet when a composer says so
    description: str = ""


@dataclass(frozen=True)
class IngressRulesSpec:
    """A set of inbound allow rules attached to ``network`` (its subnet on Azure).

    Each rule's composed name derives from a hash of protocol, ports and source, so adding or
    removing one rule never renames another.
    """

    network: str  # composition name of the network
    rules: tuple[IngressRule, ...]
    description: str = ""
    #: None: the placed region; else the region of ``network`` (a failover site's).
    region: str | None = None


@dataclass(frozen=True)
class ResourceGroupSpec:
    """A resource group the composite owns (clouds that have them: Azure)."""

    group_name: str


#: How a health-checked DNS name chooses between its two sites.
DnsRouting = Literal["failover", "latency"]


@dataclass(frozen=True)
class FailoverDnsSpec:
    """A health-checked DNS name over two sites, ``primary`` in the placed region and
    ``secondary`` in ``secondary_region``.

    ``routing`` ``failover``: answers with ``primary`` while its health check passes, else
    ``secondary``. ``latency``: answers each resolver with the site of lower latency (where the
    cloud measures it; GCP answers by the nearer region) among those whose checks pass, so
    either site's failure still moves everyone to the other.
    ``zone`` is the cloud's own zone handle (AWS hosted zone id, GCP managed zone name, Azure:
    the Traffic Manager profile's relative DNS name); targets are host names or IPv4 addresses.
    """

    zone: str
    record_name: str
    primary: str
    secondary: str
    secondary_region: str
    health_check_path: str = "/health"
    port: int = 443
    routing: DnsRouting = "failover"

    @staticmethod
    def is_address(target: str) -> bool:
        """Whether ``target`` is an IPv4 address (else a host name): clouds health-check and
        record the two differently (an A record and an address check, or a CNAME and a host
        name check), and some take only addresses."""
        try:
            ipaddress.IPv4Address(target)
        except ValueError:
            return False
        return True
