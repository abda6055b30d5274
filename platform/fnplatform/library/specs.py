"""Typed, cloud-agnostic descriptions of what a composer asks the library for.

A spec names other composed resources by their composition name (``network="network"``); the
cloud module turns those into the references its provider understands. Where resources go
(cloud, region, account/project/resource group) is not in a spec: the composer places the whole
composite (:meth:`fnplatform.composition.Composition.place`) and builders read it from there.
"""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class NetworkSpec:
    """A private network with one primary subnet range and pod/service ranges."""

    subnet_cidr: str
    pods_cidr: str
    services_cidr: str
    private: bool  # nodes without public IPs: router + NAT for egress


@dataclass(frozen=True)
class ClusterSpec:
    """A managed Kubernetes control plane."""

    network: str  # composition name of the network
    private: bool
    connection_secret: str  # Secret name (in the provider namespace) for the kubeconfig
    connection_namespace: str = "crossplane-system"
    version: str | None = None
    pods_cidr: str | None = None  # pod range, for clouds whose cluster (not network) owns it
    services_cidr: str | None = None  # Service range the control plane allocates from
    default_machine_type: str | None = None  # for pools the cloud creates with the cluster


@dataclass(frozen=True)
class NodePoolSpec:
    """A group of worker nodes."""

    cluster: str  # composition name of the cluster
    network: str  # composition name of the network
    pool: str  # the user's pool name
    machine_type: str
    min_nodes: int
    max_nodes: int


@dataclass(frozen=True)
class DnsZoneSpec:
    """A DNS zone for ``domain``; private zones are visible only inside ``network``."""

    domain: str
    private: bool
    network: str | None = None


@dataclass(frozen=True)
class WorkloadIdentitySpec:
    """A cloud identity that a Kubernetes service account assumes without static keys."""

    cluster: str  # composition name of the cluster
    namespace: str
    service_account: str
    purpose: str  # what it may do, e.g. "dns" (manage records of the zones)
    zones: tuple[str, ...] = field(default_factory=tuple)  # composition names of DNS zones


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
