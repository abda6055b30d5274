"""Layer 1: the agnostic resource capabilities composers call.

Each is a :class:`~fnplatform.library.capability.Capability` typed by its spec, one call shape
for all: ``add_<capability>(comp, name, spec, *, uses=(), fields=None, cloud=None)`` (see the
class). A cloud registers its builder with ``@add_<capability>.on("<cloud>")`` in
``clouds/<cloud>/<home>.py``, the ``home`` each declares; the value capabilities are in
:mod:`fnplatform.library.values`.
"""

from __future__ import annotations

from fnplatform.library.capability import Capability
from fnplatform.library.specs import (
    BucketSpec,
    CdnSpec,
    ClusterSpec,
    DatabaseSpec,
    DnsZoneSpec,
    FailoverDnsSpec,
    IngressRulesSpec,
    KeySpec,
    NetworkSpec,
    NodePoolSpec,
    QueueSpec,
    ResourceGroupSpec,
    WorkloadIdentitySpec,
)

add_network = Capability[NetworkSpec](
    "network",
    "A network, its subnets and (when private) router and NAT.",
    home="network",
)
add_cluster = Capability[ClusterSpec](
    "cluster",
    "A managed Kubernetes cluster writing its kubeconfig to spec.connection_secret.",
    home="cluster",
)
add_node_pool = Capability[NodePoolSpec](
    "node_pool",
    "A node pool of the cluster spec.cluster.",
    home="cluster",
)
add_dns_zone = Capability[DnsZoneSpec]("dns_zone", "A public or private DNS zone.", home="dns")
add_workload_identity = Capability[WorkloadIdentitySpec](
    "workload_identity",
    "A cloud identity bound to a Kubernetes service account.",
    home="identity",
)
add_queue = Capability[QueueSpec]("queue", "A message queue.", home="queue")
add_key = Capability[KeySpec](
    "key",
    "A customer-managed key with rotation, and the grants its cloud's storage needs.",
    home="key",
)
add_bucket = Capability[BucketSpec](
    "bucket",
    "A never-public, versioned, TLS-only bucket encrypted with a composed key.",
    home="bucket",
)
add_ingress_rules = Capability[IngressRulesSpec](
    "ingress_rules",
    "Inbound allow rules on a network, one resource per (protocol, ports, source).",
    home="ingress",
)
add_failover_dns = Capability[FailoverDnsSpec](
    "failover_dns",
    "A DNS name that moves from primary to secondary when a health check fails.",
    home="failover",
)
add_resource_group = Capability[ResourceGroupSpec](
    "resource_group",
    "A resource group the composite owns (clouds that have them).",
    home="resource_group",
)
add_database = Capability[DatabaseSpec](
    "database",
    "A private PostgreSQL server with a provider-generated password.",
    home="database",
)
add_cdn = Capability[CdnSpec](
    "cdn",
    "A CDN in front of a private bucket, one cache path each.",
    home="cdn",
)
