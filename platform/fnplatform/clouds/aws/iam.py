"""AWS IAM: roles a service assumes, policy attachments, and EKS Pod Identity bindings."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from fnplatform.clouds.aws.common import managed_policy_arn, name_tag, trust_policy
from fnplatform.clouds.aws.kinds import (
    IAM_POLICY,
    IAM_ROLE,
    POD_IDENTITY_ASSOCIATION,
    ROLE_POLICY_ATTACHMENT,
)
from fnplatform.composition import Composition

POD_IDENTITY_SERVICE = "pods.eks.amazonaws.com"
#: What nodes themselves need. Not the CNI policy: vpc-cni (aws-node) runs under its own
#: Pod Identity role, so a pod reaching the node's credentials can't manage network interfaces.
NODE_POLICIES = {
    "worker": "AmazonEKSWorkerNodePolicy",
    "ecr": "AmazonEC2ContainerRegistryReadOnly",
}
CNI_POLICY = "AmazonEKS_CNI_Policy"


def add_role(
    comp: Composition,
    name: str,
    service: str,
    description: str,
    *,
    uses: Iterable[str] = (),
) -> None:
    """An IAM role that AWS service ``service`` may assume (and tag its sessions)."""
    role = {
        "assumeRolePolicy": trust_policy(service, "sts:AssumeRole", "sts:TagSession"),
        "description": description,
        "tags": name_tag(comp, name),
    }
    comp.emit(name, IAM_ROLE.new(role), uses=uses)


def attach_policy(
    comp: Composition,
    name: str,
    role: str,
    policy: Mapping[str, Any],
    *,
    uses: Iterable[str] = (),
) -> None:
    """Attach a policy (``{"policyArn": ...}`` or ``{"policyArnRef": ...}``) to ``role``."""
    comp.emit(name, ROLE_POLICY_ATTACHMENT.new({"roleRef": comp.ref(role), **policy}), uses=uses)


def add_managed_role(
    comp: Composition,
    name: str,
    service: str,
    *,
    region: str,
    policies: Mapping[str, str],
    description: str,
) -> list[str]:
    """A role ``service`` assumes with AWS managed ``policies``; returns the attachments."""
    add_role(comp, name, service, description)
    attachments = []
    for part, policy in sorted(policies.items()):
        attach_policy(
            comp, f"{name}-{part}", name, {"policyArn": managed_policy_arn(region, policy)}
        )
        attachments.append(f"{name}-{part}")
    return attachments


def node_role_attachments(cluster: str) -> list[str]:
    """Composition names of the node role's policy attachments: a node group needs them."""
    return [f"{cluster}-node-role-{part}" for part in sorted(NODE_POLICIES)]


def add_pod_identity(
    comp: Composition,
    name: str,
    *,
    cluster: str,
    region: str,
    namespace: str,
    service_account: str,
    description: str,
    policy_description: str,
    policy: str,
    uses: Iterable[str] = (),
    cluster_name: str | None = None,
) -> str:
    """An IAM role with its own ``policy``, bound to a service account by EKS Pod Identity.

    Emits ``name`` (Role), ``name-policy``, ``name-policy-attachment`` and
    ``name-association``; returns the association's name: pods started before it exists get
    no credentials, so whatever runs them waits for it. ``cluster`` is the composed cluster;
    ``cluster_name`` instead names an EKS cluster the composite does not compose.
    """
    add_role(comp, name, POD_IDENTITY_SERVICE, description, uses=uses)
    comp.emit(
        f"{name}-policy", IAM_POLICY.new({"description": policy_description, "policy": policy})
    )
    # Held with the role (which waits for the cluster): no reference left dangling meanwhile.
    attach_policy(
        comp,
        f"{name}-policy-attachment",
        name,
        {"policyArnRef": comp.ref(f"{name}-policy")},
        uses=[name],
    )
    association = f"{name}-association"
    target = (
        {"clusterName": cluster_name} if cluster_name else {"clusterNameRef": comp.ref(cluster)}
    )
    comp.emit(
        association,
        POD_IDENTITY_ASSOCIATION.new(
            {
                "region": region,
                **target,
                "namespace": namespace,
                "serviceAccount": service_account,
                "roleArnRef": comp.ref(name),
            }
        ),
        uses=[] if cluster_name else [cluster],
    )
    return association
