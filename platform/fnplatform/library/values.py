"""The value capabilities and flags: what composers ask a cloud to compute, typed.

Each is a :class:`~fnplatform.library.capability.Value` (or
:class:`~fnplatform.library.capability.Flag`) a cloud module answers with
``@<value>.on("<cloud>")`` in the file of the capability it belongs to
(``bucket_address`` in ``clouds/<cloud>/bucket.py``, say): the ``home`` each declares says
which, and a test holds every cloud to it.
"""

from __future__ import annotations

from typing import Any, Literal, NamedTuple, TypedDict

from fnplatform.library.capability import Flag, Value
from fnplatform.library.specs import (
    BucketPart,
    BucketReader,
    CdnCustomDomain,
    CdnSpec,
    ClusterSpec,
    DatabaseSpec,
    FailoverDnsSpec,
    NameRule,
    WorkloadIdentitySpec,
)

#: Kubernetes annotations or labels, as a composer puts them on an object.
Labels = dict[str, str]
#: A Helm chart's values, or a ProviderConfig's ``identity`` block.
Document = dict[str, Any]


class ExternalClusterSetting(NamedTuple):
    """Where the platform names a cluster it runs outside this composite
    (:class:`~fnplatform.library.specs.ExternalCluster`): the settings key of its name as the
    cloud trusts its tokens through, and of its region where the cloud needs one."""

    name_key: str
    region_key: str | None = None


class BucketAddress(TypedDict):
    """How others name a composed bucket: its cloud name, and its id once the cloud has one."""

    name: str
    id: str | None


# -- cluster -------------------------------------------------------------------------------

cluster_credentials = Value[[str, ClusterSpec], Document](
    "cluster_credentials",
    "The ProviderConfig ``identity`` the Helm and Kubernetes providers need on this cloud.",
    home="cluster",
)
kubeconfig_source = Value[[str], str](
    "kubeconfig_source",
    "The composed resource whose connection Secret holds the cluster's kubeconfig.",
    home="cluster",
)
cluster_access = Value[[str], list[str]](
    "cluster_access",
    "Composed resources the providers' access needs besides the kubeconfig (RBAC grants).",
    home="cluster",
)
cluster_status = Value[[str], None](
    "cluster_status",
    "Copy the observed cluster's endpoint, CA, name and issuer to status.",
    home="cluster",
)
cluster_name_rule = Value[[], NameRule](
    "cluster_name_rule",
    "What the cloud accepts as a managed Kubernetes cluster name.",
    home="cluster",
)
running_version = Value[[str], str | None](
    "running_version",
    "The Kubernetes version the cloud reports for the running cluster.",
    home="cluster",
)
#: The cluster composite's plane (its ``planeId`` label) names the scope the cluster goes in
#: (the GCP project, the Azure resource group); a cloud without the flag scopes clusters by
#: its provider's credentials (the AWS account).
cluster_scope_from_plane = Flag(
    "cluster_scope_from_plane",
    "The cluster composite's plane id names its scope (project, resource group).",
    home="cluster",
)
autoscaler_values = Value[[str, ClusterSpec], Document](
    "autoscaler_values",
    "cluster-autoscaler values, on clouds whose pools do not resize themselves.",
    home="cluster",
)

# -- network and identity ------------------------------------------------------------------

internal_load_balancer = Value[[], Labels](
    "internal_load_balancer",
    "Annotations that make a LoadBalancer Service internal.",
    home="network",
)
identity_annotations = Value[[str, WorkloadIdentitySpec], Labels](
    "identity_annotations",
    "ServiceAccount annotations binding it to its cloud identity.",
    home="identity",
)
external_cluster_setting = Value[[], ExternalClusterSetting](
    "external_cluster_setting",
    "The setting naming a cluster this composite does not compose (ExternalCluster), as the "
    "platform writes it.",
    home="identity",
)
identity_pod_labels = Value[[], Labels](
    "identity_pod_labels",
    "Pod labels the cloud's workload-identity webhook needs.",
    home="identity",
)
identity_id = Value[[str], str | None](
    "identity_id",
    "What a pipeline names identity ``name`` by (role ARN, service account email, client "
    "ID), once known.",
    home="identity",
)
identity_binding = Value[[str], str](
    "identity_binding",
    "The composed resource that binds identity ``name`` to its service account.",
    home="identity",
)

# -- storage, keys, queues -----------------------------------------------------------------

bucket_name_rule = Value[[], NameRule](
    "bucket_name_rule", "What the cloud accepts as a bucket name.", home="bucket"
)
bucket_name_from = Value[[str], str](
    "bucket_name_from",
    "The cloud's bucket name for a composer's wanted ``<prefix>-<app>``.",
    home="bucket",
)
#: Called with the bucket's :attr:`BucketSpec.bucket_name` (None: derived), so the address
#: follows from the same arguments the builder had, never from what it emitted.
bucket_address = Value[[str, str | None], BucketAddress](
    "bucket_address",
    "Name and (once known) id of composed bucket ``name`` (its BucketSpec.bucket_name).",
    home="bucket",
)
bucket_parts = Value[[str, BucketPart], tuple[str, ...]](
    "bucket_parts",
    "The composition names (``<prefix>*``: all of that prefix) of the resources of bucket "
    "``name`` doing ``part``, as the bucket builder emits them.",
    home="bucket",
)
#: Deleting the bucket deletes its objects with it, no ``force_destroy`` asked (an Azure
#: storage account goes with its blobs); else a bucket is deleted only once empty.
bucket_deleted_with_objects = Flag(
    "bucket_deleted_with_objects",
    "Deleting the bucket deletes the objects in it.",
    home="bucket",
)
bucket_replication = Flag(
    "bucket_replication",
    "The cloud replicates a bucket to another region (BucketSpec.replicate_to).",
    home="failover",
)
bucket_geo_replication = Flag(
    "bucket_geo_replication",
    "The cloud replicates a bucket inside itself to a second region "
    "(BucketSpec.geo_replica_region).",
    home="failover",
)
key_id = Value[[str, str | None, str | None], str | None](
    "key_id",
    "The id of composed key ``name`` (its KeySpec.region and geo_replica_region), once known.",
    home="key",
)
#: Deleting the key resource deletes the key; a cloud without the flag can only destroy its
#: versions (Cloud KMS keeps every CryptoKey), so a composer keeps the key on delete.
key_deletable = Flag("key_deletable", "Deleting the key resource deletes the key.", home="key")
queue_name = Value[..., str](
    "queue_name", "The queue's cloud name from its parts, exactly.", home="queue"
)
queue_arn = Value[[str], str | None](
    "queue_arn", "The ARN of queue ``queue_name``, when it is known before it exists.", home="queue"
)

# -- database and CDN ----------------------------------------------------------------------

database_host = Value[[str], str | None](
    "database_host",
    "The private host of composed database ``name``, once observed.",
    home="database",
)
database_env = Value[[DatabaseSpec, str], list[Document]](
    "database_env",
    "Container env vars connecting an app through the connection Secret.",
    home="database",
)
#: Who makes the database administrator's password: the ``provider`` itself, a Secret the
#: ``platform`` names, or none of them, so the composer has it ``generated`` into
#: :attr:`DatabaseSpec.password_secret` before the database is composed.
PasswordSource = Literal["provider", "platform", "generated"]
database_password_source = Value[[], PasswordSource](
    "database_password_source", "Who makes the database administrator's password.", home="database"
)
#: One private network serves a database in any region: the network is global (GCP: a VPC
#: network is, and Cloud SQL takes a subnet of its private services range in the instance's
#: region). A cloud without the flag has regional networks whose ids do not name the region
#: (AWS ``vpc-``/``subnet-`` ids, Azure resource ids), so a platform names one per region.
global_private_network = Flag(
    "global_private_network",
    "One private network serves databases in every region (the network is global).",
    home="database",
)
cdn_bucket_reader = Value[[str], BucketReader | None](
    "cdn_bucket_reader", "Who the CDN ``name`` reads the bucket as, once known.", home="cdn"
)
cdn_domain = Value[[str, CdnSpec], str | None](
    "cdn_domain", "The CDN's public domain, once observed.", home="cdn"
)
cdn_custom_domains = Value[[str, CdnSpec], tuple[CdnCustomDomain, ...]](
    "cdn_custom_domains",
    "Each custom host of the CDN ``name`` (CdnSpec.custom_domains): served yet, and the DNS "
    "records still to create.",
    home="cdn",
)

# -- ingress and failover ------------------------------------------------------------------

ingress_rules_id = Value[[str], str | None](
    "ingress_rules_id",
    "The id of the security group/NSG/firewall of rules ``name``.",
    home="ingress",
)
ingress_rules_parts = Value[[str], tuple[str, ...]](
    "ingress_rules_parts",
    "The composition names (``<prefix>*``: all of that prefix) of the resources of rules "
    "``name``, as the ingress builder emits them.",
    home="ingress",
)
failover_address = Value[[str, FailoverDnsSpec], str | None](
    "failover_address", "The DNS name that fails over, once composed.", home="failover"
)
