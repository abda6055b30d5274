"""AWS tags: their form (free-form keys and values, cut to AWS's lengths), and the tags AWS
services read back: the cluster autoscaler discovers node groups by them.

EKS copies a managed node group's tags to its Auto Scaling group, which is what the autoscaler
and its IAM condition read; the NodeGroup carries them so the intent is visible on the resource
Crossplane manages.
"""

from __future__ import annotations

from fnplatform.tagging import TagStyle, free_form

#: AWS tags: any key of at most 128 characters, any value of at most 256.
AWS_TAGS = TagStyle("aws", free_form(128, 256))

AUTOSCALER_ENABLED_TAG = "k8s.io/cluster-autoscaler/enabled"
AUTOSCALER_CLUSTER_TAG_PREFIX = "k8s.io/cluster-autoscaler/"


def autoscaler_discovery_tags(cluster_name: str) -> dict[str, str]:
    """The auto-discovery tags of a node group of ``cluster_name``."""
    return {
        AUTOSCALER_ENABLED_TAG: "true",
        f"{AUTOSCALER_CLUSTER_TAG_PREFIX}{cluster_name}": "owned",
    }
