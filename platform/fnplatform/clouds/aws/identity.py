"""AWS workload identity: IAM roles bound to Kubernetes service accounts by EKS Pod Identity.

Pod Identity, not IRSA: no OIDC provider and thumbprint to manage, a trust policy that doesn't
embed the cluster's issuer URL (known only once the cluster is observed), and no
ServiceAccount annotation whose value would change after the first pass. What the role may do
follows the spec's ``purpose``: ``dns`` (cert-manager's DNS01 solver in the spec's zones) or
``cluster-autoscaler`` (resizing this cluster's own node groups).

Composed names: ``<name>`` (IAM Role), ``<name>-policy``, ``<name>-policy-attachment``,
``<name>-association`` (EKS PodIdentityAssociation).
"""

from __future__ import annotations

from collections.abc import Iterable

from fnplatform.clouds.aws.common import eks_cluster_name, partition, policy_document
from fnplatform.clouds.aws.iam import add_pod_identity
from fnplatform.clouds.aws.tags import autoscaler_discovery_tags
from fnplatform.composition import Composition
from fnplatform.errors import SpecError
from fnplatform.library.identity import (
    ExternalClusterSetting,
    IdentityBucket,
    IdentityPurpose,
    IdentityZone,
    WorkloadIdentitySpec,
    add_workload_identity,
    external_cluster_setting,
    identity_annotations,
    identity_binding,
    identity_id,
    identity_pod_labels,
)


@add_workload_identity.on("aws")
def workload_identity(comp: Composition, name: str, spec: WorkloadIdentitySpec) -> None:
    """An IAM role the service account assumes through EKS Pod Identity, for ``spec.purpose``."""
    region = comp.region
    external = spec.external_cluster
    if spec.purpose is IdentityPurpose.DNS_RECORDS:
        summary = f"DNS01 challenges of {comp.name} in its Route53 zones"
        policy = dns01_policy(comp, spec.zones, region)
    elif spec.purpose is IdentityPurpose.BUCKET_WRITER:
        summary = f"write the objects of {comp.name}'s buckets, nothing else"
        policy = bucket_writer_policy(comp, spec.buckets, region)
    else:  # IdentityPurpose.NODE_AUTOSCALING
        summary = f"cluster-autoscaler of {comp.name}: its own node groups only"
        policy = autoscaler_policy(eks_cluster_name(comp, spec.cluster, spec.cluster_name), region)
    add_pod_identity(
        comp,
        name,
        cluster=spec.cluster,
        region=(external and external.region) or region,
        namespace=spec.namespace,
        service_account=spec.service_account,
        description=f"{spec.namespace}/{spec.service_account} in {comp.name} ({spec.purpose})",
        policy_description=summary,
        policy=policy,
        cluster_name=external.name if external else None,
    )


def bucket_writer_policy(comp: Composition, buckets: Iterable[IdentityBucket], region: str) -> str:
    """Put, overwrite, delete and list the objects of ``buckets`` (``aws s3 sync --delete``),
    nothing else: no bucket configuration, no other bucket."""
    names = sorted(bucket.bucket_name for bucket in buckets)
    if not names:
        raise SpecError("buckets", "a bucket-writer identity needs at least one bucket")
    arn = f"arn:{partition(region)}:s3:::"
    return policy_document(
        [
            {
                "Effect": "Allow",
                "Action": ["s3:ListBucket", "s3:GetBucketLocation"],
                "Resource": [f"{arn}{n}" for n in names],
            },
            {
                "Effect": "Allow",
                "Action": [
                    "s3:PutObject",
                    "s3:GetObject",
                    "s3:DeleteObject",
                    "s3:AbortMultipartUpload",
                    "s3:ListMultipartUploadParts",
                ],
                "Resource": [f"{arn}{n}/*" for n in names],
            },
        ]
    )


@identity_id.on("aws")
def aws_identity_id(comp: Composition, name: str) -> str | None:
    """The role's ARN, once observed."""
    return comp.observed_string(name, "status.atProvider.arn")


@identity_binding.on("aws")
def aws_identity_binding(comp: Composition, name: str) -> str:
    """The Pod Identity association: pods get AWS credentials only once it exists."""
    return f"{name}-association"


def dns01_policy(comp: Composition, zones: Iterable[IdentityZone], region: str) -> str:
    """Route53 permissions for cert-manager's DNS01 solver, least privilege.

    Record changes are limited to ``_acme-challenge`` TXT records of the zones' domains (IAM
    condition keys, as cert-manager documents), and to the zones' own ARNs once their IDs are
    observed; until then to any hosted zone, still only for those record names.
    """
    zone_names = sorted(zone.name for zone in zones)
    domains = sorted({zone.domain for zone in zones})
    if not domains:  # ForAllValues over an empty list would allow every record name
        raise SpecError("zones", "a DNS identity needs at least one DNS zone")
    zone_ids = [comp.observed_value(z, "status.atProvider.zoneId") for z in zone_names]
    arn = f"arn:{partition(region)}:route53:::"
    zone_arns = (
        [f"{arn}hostedzone/{zid}" for zid in sorted(zone_ids)]
        if zone_ids and all(zone_ids)
        else [f"{arn}hostedzone/*"]
    )
    record_names = [f"_acme-challenge.{d}" for d in domains] + [
        f"_acme-challenge.*.{d}" for d in domains
    ]
    return policy_document(
        [
            {"Effect": "Allow", "Action": ["route53:GetChange"], "Resource": [f"{arn}change/*"]},
            {
                "Effect": "Allow",
                "Action": ["route53:ListResourceRecordSets"],
                "Resource": zone_arns,
            },
            {
                "Effect": "Allow",
                "Action": ["route53:ChangeResourceRecordSets"],
                "Resource": zone_arns,
                "Condition": {
                    "ForAllValues:StringEquals": {
                        "route53:ChangeResourceRecordSetsRecordTypes": ["TXT"]
                    },
                    "ForAllValues:StringLike": {
                        "route53:ChangeResourceRecordSetsNormalizedRecordNames": record_names
                    },
                },
            },
            {"Effect": "Allow", "Action": ["route53:ListHostedZonesByName"], "Resource": ["*"]},
        ]
    )


def autoscaler_policy(cluster_name: str, region: str) -> str:
    """The autoscaler's IAM policy, least privilege (the autoscaler's documented minimum).

    Reads are account-wide (describe calls take no resource). Resizing and terminating are
    limited to Auto Scaling groups tagged as this cluster's, and reading node groups (their
    labels and taints, to scale a pool up from zero) to this cluster's node groups.
    """
    owned = {
        f"aws:ResourceTag/{tag}": value
        for tag, value in autoscaler_discovery_tags(cluster_name).items()
    }
    node_groups = f"arn:{partition(region)}:eks:{region}:*:nodegroup/{cluster_name}/*"
    return policy_document(
        [
            {
                "Effect": "Allow",
                "Action": [
                    "autoscaling:DescribeAutoScalingGroups",
                    "autoscaling:DescribeAutoScalingInstances",
                    "autoscaling:DescribeLaunchConfigurations",
                    "autoscaling:DescribeScalingActivities",
                    "autoscaling:DescribeTags",
                    "ec2:DescribeImages",
                    "ec2:DescribeInstanceTypes",
                    "ec2:DescribeLaunchTemplateVersions",
                    "ec2:GetInstanceTypesFromInstanceRequirements",
                ],
                "Resource": ["*"],
            },
            {
                "Effect": "Allow",
                "Action": [
                    "autoscaling:SetDesiredCapacity",
                    "autoscaling:TerminateInstanceInAutoScalingGroup",
                ],
                "Resource": ["*"],
                "Condition": {"StringEquals": owned},
            },
            {"Effect": "Allow", "Action": ["eks:DescribeNodegroup"], "Resource": [node_groups]},
        ]
    )


@identity_annotations.on("aws")
def aws_identity_annotations(
    comp: Composition, name: str, spec: WorkloadIdentitySpec
) -> dict[str, str]:
    """None: EKS Pod Identity binds the role by association, not by ServiceAccount annotation."""
    return {}


@identity_pod_labels.on("aws")
def aws_identity_pod_labels(comp: Composition) -> dict[str, str]:
    """None: the Pod Identity webhook injects credentials into every pod of an associated SA."""
    return {}


@external_cluster_setting.on("aws")
def aws_external_cluster_setting(comp: Composition) -> ExternalClusterSetting:
    """A cluster outside the composite, by the EKS cluster's name (Pod Identity associations
    name it) and its region."""
    return ExternalClusterSetting("eksClusterName", "eksRegion")
