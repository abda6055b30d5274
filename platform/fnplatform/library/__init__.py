"""The 3-layer resource library.

1. Agnostic capabilities (:mod:`fnplatform.library.calls`, :mod:`fnplatform.library.values`):
   objects typed by their spec and result. A composer calls ``add_network(comp, name, spec)``
   or ``values.bucket_address(comp, name, bucket_name)`` and knows nothing about clouds.
2. Cloud modules (:mod:`fnplatform.clouds.aws`, ``gcp``, ``azure``) register on those objects,
   ``@add_network.on("aws")``, a builder that emits the cloud's kinds, or an answer to a value,
   in ``clouds/<cloud>/<home>.py`` (the same file name on every cloud).
3. Cloud extras, ``@add_cluster.extra("aws")``, add what only one cloud needs (EKS
   ``ClusterAuth`` and addons, say) after the builder ran.

The objects are in :mod:`fnplatform.library.capability`; the clouds register when
:mod:`fnplatform.clouds` is imported, once, as the function starts.
"""

from fnplatform.library import values
from fnplatform.library.calls import (
    add_bucket,
    add_cdn,
    add_cluster,
    add_database,
    add_dns_zone,
    add_failover_dns,
    add_ingress_rules,
    add_key,
    add_network,
    add_node_pool,
    add_queue,
    add_resource_group,
    add_workload_identity,
)
from fnplatform.library.capability import Capability, Flag, Value
from fnplatform.library.kubernetes import (
    ObjectReadiness,
    add_cluster_provider_configs,
    add_helm_release,
    add_object,
)

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
    "values",
]
