"""A workload identity, a cloud identity a Kubernetes service account assumes: spec, call, values.

A cloud registers its builder with ``@add_<capability>.on("<cloud>")`` and its answers with
``@<value>.on("<cloud>")`` in ``clouds/<cloud>/identity.py``, the home each object declares.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from typing import NamedTuple

from fnplatform.library.capability import Capability, Labels, Value


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
    bucket_name: str  # its name in the cloud (what bucket_address returned)


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


class ExternalClusterSetting(NamedTuple):
    """Where the platform names a cluster it runs outside this composite
    (:class:`ExternalCluster`): the settings key of its name as the
    cloud trusts its tokens through, and of its region where the cloud needs one."""

    name_key: str
    region_key: str | None = None


add_workload_identity = Capability[WorkloadIdentitySpec](
    "workload_identity",
    "A cloud identity bound to a Kubernetes service account.",
    home="identity",
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
