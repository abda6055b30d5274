"""What every AWS builder shares: ARNs and partitions, IAM documents, names and tags."""

from __future__ import annotations

import json
from typing import Any

from fnplatform.composition import Composition

GLOBAL_REGION = "us-east-1"  # Route53 and IAM are global; the provider still wants a region


def partition(region: str) -> str:
    """The ARN partition of ``region``: managed policy ARNs differ in China and GovCloud."""
    if region.startswith("cn-"):
        return "aws-cn"
    if region.startswith("us-gov-"):
        return "aws-us-gov"
    return "aws"


def managed_policy_arn(region: str, policy: str) -> str:
    """The ARN of the AWS managed policy ``policy``."""
    return f"arn:{partition(region)}:iam::aws:policy/{policy}"


def trust_policy(service: str, *actions: str) -> str:
    """An IAM trust policy letting AWS service ``service`` assume the role."""
    statement = {"Effect": "Allow", "Principal": {"Service": service}, "Action": list(actions)}
    return policy_document([statement])


def policy_document(statements: list[dict[str, Any]]) -> str:
    """A deterministic IAM policy document (sorted keys, compact)."""
    return json.dumps(
        {"Version": "2012-10-17", "Statement": statements}, sort_keys=True, separators=(",", ":")
    )


def eks_cluster_name(comp: Composition, cluster: str, cluster_name: str | None) -> str:
    """The name of composed cluster ``cluster`` in EKS: its external name when imported, else
    ``cluster_name`` (its ClusterSpec's), else its ``metadata.name`` (the provider names an
    EKS cluster after its resource), as the cluster builder emits it."""
    return comp.cloud_name(cluster, cluster_name or comp.resource_name(cluster))


def name_tag(comp: Composition, name: str) -> dict[str, str]:
    """The ``Name`` tag the AWS console shows: the resource's Kubernetes name."""
    return {"Name": comp.ref(name)["name"]}
