"""The 3-layer resource library.

1. Agnostic capabilities, one module each (:mod:`fnplatform.library.bucket`, ``network``,
   ``cluster``...; the name is the ``home`` every cloud implements it in): the spec, the call
   and the values of the capability, typed by their spec and result. A composer calls
   ``add_network(comp, name, spec)`` or ``bucket_address(comp, name, bucket_name)`` and knows
   nothing about clouds.
2. Cloud modules (:mod:`fnplatform.clouds.aws`, ``gcp``, ``azure``) register on those objects,
   ``@add_network.on("aws")``, a builder that emits the cloud's kinds, or an answer to a value,
   in ``clouds/<cloud>/<home>.py`` (the same file name on every cloud, the library module's).
3. Cloud extras, ``@add_cluster.extra("aws")``, add what only one cloud needs (EKS
   ``ClusterAuth`` and addons, say) after the builder ran.

The objects are in :mod:`fnplatform.library.capability`; the clouds register when
:mod:`fnplatform.clouds` is imported, once, as the function starts.
"""

from fnplatform.library.bucket import add_bucket
from fnplatform.library.capability import Capability, Flag, Value
from fnplatform.library.cdn import add_cdn
from fnplatform.library.cluster import add_cluster, add_node_pool
from fnplatform.library.database import add_database
from fnplatform.library.dns import add_dns_zone
from fnplatform.library.failover import add_failover_dns
from fnplatform.library.identity import add_workload_identity
from fnplatform.library.ingress import add_ingress_rules
from fnplatform.library.key import add_key
from fnplatform.library.kubernetes import (
    ObjectReadiness,
    add_cluster_provider_configs,
    add_helm_release,
    add_object,
)
from fnplatform.library.network import add_network
from fnplatform.library.queue import add_queue
from fnplatform.library.resource_group import add_resource_group

__all__ = [
    "Capability",
    "Flag",
    "ObjectReadiness",
    "Value",
    "add_bucket",
    "add_cdn",
    "add_cluster",
    "add_cluster_provider_configs",
    "add_database",
    "add_dns_zone",
    "add_failover_dns",
    "add_helm_release",
    "add_ingress_rules",
    "add_key",
    "add_network",
    "add_node_pool",
    "add_object",
    "add_queue",
    "add_resource_group",
    "add_workload_identity",
]
