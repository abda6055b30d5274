"""Layer 1: the agnostic resource capabilities composers call.

Each is a :class:`~fnplatform.library.capability.Capability` typed by its spec, one call shape
for all: ``add_<capability>(comp, name, spec, *, uses=(), fields=None, cloud=None)`` (see the
class). A cloud registers its builder with ``@add_<capability>.on("<cloud>")`` in
``clouds/<cloud>/<home>.py``, :data:`HOMES` naming the file; the value capabilities are in
:mod:`fnplatform.library.values`.
"""

from __future__ import annotations

from typing import Any

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
    "network", "A network, its subnets and (when private) router and NAT."
)
add_cluster = Capability[ClusterSpec](
    "cluster", "A managed Kubernetes cluster writing its kubeconfig to spec.connection_secret."
)
add_node_pool = Capability[NodePoolSpec]("node_pool", "A node pool of the cluster spec.cluster.")
add_dns_zone = Capability[DnsZoneSpec]("dns_zone", "A public or private DNS zone.")
add_workload_identity = Capability[WorkloadIdentitySpec](
    "workload_identity", "A cloud identity bound to a Kubernetes service account."
)
add_queue = Capability[QueueSpec]("queue", "A message queue.")
add_key = Capability[KeySpec](
    "key", "A customer-managed key with rotation, and the grants its cloud's storage needs."
)
add_bucket = Capability[BucketSpec](
    "bucket", "A never-public, versioned, TLS-only bucket encrypted with a composed key."
)
add_ingress_rules = Capability[IngressRulesSpec](
    "ingress_rules", "Inbound allow rules on a network, one resource per (protocol, ports, source)."
)
add_failover_dns = Capability[FailoverDnsSpec](
    "failover_dns", "A DNS name that moves from primary to secondary when a health check fails."
)
add_resource_group = Capability[ResourceGroupSpec](
    "resource_group", "A resource group the composite owns (clouds that have them)."
)
add_database = Capability[DatabaseSpec](
    "database", "A private PostgreSQL server with a provider-generated password."
)
add_cdn = Capability[CdnSpec]("cdn", "A CDN in front of a private bucket, one cache path each.")


#: The file (``clouds/<cloud>/<home>.py``) every cloud builds each capability in.
HOMES: dict[Capability[Any], str] = {
    add_network: "network",
    add_cluster: "cluster",
    add_node_pool: "cluster",
    add_dns_zone: "dns",
    add_workload_identity: "identity",
    add_queue: "queue",
    add_key: "key",
    add_bucket: "bucket",
    add_ingress_rules: "ingress",
    add_failover_dns: "failover",
    add_resource_group: "resource_group",
    add_database: "database",
    add_cdn: "cdn",
}
