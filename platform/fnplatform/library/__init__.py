"""The 3-layer resource library.

1. Agnostic calls (:mod:`fnplatform.library.calls`): ``add_network``, ``add_cluster``,
   ``add_node_pool``, ``add_dns_zone``, ``add_workload_identity`` ... take a typed spec and a
   composed-resource name, and know nothing about clouds.
2. Cloud modules (:mod:`fnplatform.clouds.gcp`, ``aws``, ``azure``) register a builder per
   capability that emits the cloud's kinds, with their apiVersion, kind and spec.
3. Cloud extras, registered per capability and cloud, add what only one cloud needs
   (EKS ``ClusterAuth`` and addons, say) after the builder ran.

Dispatch is through the explicit registry in :mod:`fnplatform.library.registry`.
"""

from fnplatform.library.calls import (
    add_bucket,
    add_cdn,
    add_cluster,
    add_database,
    add_dns_zone,
    add_network,
    add_node_pool,
    add_queue,
    add_workload_identity,
    cloud_value,
)
from fnplatform.library.kubernetes import (
    ObjectReadiness,
    add_cluster_provider_configs,
    add_helm_release,
    add_object,
)

__all__ = [
    "ObjectReadiness",
    "add_bucket",
    "add_cdn",
    "add_cluster",
    "add_cluster_provider_configs",
    "add_database",
    "add_dns_zone",
    "add_helm_release",
    "add_network",
    "add_node_pool",
    "add_object",
    "add_queue",
    "add_workload_identity",
    "cloud_value",
]
