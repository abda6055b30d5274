"""AWS-only knobs a platform team may set in the environment under ``aws``.

All optional; the cloud-agnostic composers never need to know them.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, field_validator

from fnplatform.api.validation import Cidr, describe_pattern, parse
from fnplatform.composition import Composition

# Managed addons: the CNI and kube-proxy every node needs, CoreDNS, and the agent that hands
# EKS Pod Identity credentials to pods (used by cert-manager's DNS01 identity).
ADDONS = ("coredns", "eks-pod-identity-agent", "kube-proxy", "vpc-cni")


class AwsPrivateNetwork(BaseModel):
    """``env.aws.privateNetworks.<region>``: the VPC databases of the region join (owned by
    the platform team); passed to the builder in ``DatabaseSpec.network``."""

    model_config = ConfigDict(extra="forbid")

    vpcId: str = Field(
        pattern=describe_pattern(r"^vpc-[0-9a-f]+$", "a VPC id such as vpc-0a1b2c3d4e5f60718")
    )
    #: The VPC's CIDR: the only source admitted to a database's port.
    cidr: Cidr
    #: Private subnets in at least two availability zones (RDS requires two).
    subnetIds: list[str] = Field(min_length=2)


class AwsCdnDomains(BaseModel):
    """``env.aws.cdnDomains``: how CloudFront gets certificates and DNS for custom domains."""

    model_config = ConfigDict(extra="forbid")

    #: The Route 53 hosted zone holding the custom domains: the certificate's DNS validation
    #: records and each host's alias to the distribution are composed into it. Unset: the
    #: claim says which records the platform must create.
    hostedZoneId: str | None = Field(
        None,
        pattern=describe_pattern(
            r"^Z[0-9A-Z]{1,31}$", "a Route 53 hosted zone id such as Z0123456789ABCDEFGHIJ"
        ),
    )
    #: An issued ACM certificate in us-east-1 (CloudFront takes no other region) covering
    #: every custom domain, used instead of composing one per environment.
    certificateArn: str | None = Field(
        None,
        pattern=describe_pattern(
            r"^arn:aws:acm:us-east-1:[0-9]{12}:certificate/[0-9a-f-]+$",
            "an ACM certificate ARN in us-east-1 (CloudFront's region), such as "
            "arn:aws:acm:us-east-1:123456789012:certificate/<id>",
        ),
    )


class AwsEnvironment(BaseModel):
    """``env.aws``."""

    model_config = ConfigDict(extra="ignore")

    #: The account id, for composers that place resources by environment (contact-center).
    accountId: str | None = Field(None, pattern=r"^[0-9]{12}$")

    #: CIDRs (say the management cluster's egress IPs) that may reach the public API endpoint
    #: so Crossplane's Helm and Kubernetes providers can: required for public clusters; a
    #: private cluster gets a public endpoint only when set.
    endpointPublicAccessCidrs: list[str] | None = None
    #: Addon versions by addon name. Without a pin EKS installs the addon's default version
    #: for the cluster's minor at creation and the provider keeps it: a cluster upgrade does
    #: not upgrade its addons. Platform teams that upgrade clusters pin them here.
    addonVersions: dict[str, str] = Field(default_factory=dict)
    cdnDomains: AwsCdnDomains = Field(default_factory=AwsCdnDomains)
    #: The EKS-optimised AMI release of the node groups (``1.33.4-20250904``, say). Without a
    #: pin a node group keeps the AMI it was created with (the provider doesn't late-init it):
    #: node OS patches then need a new pool. Bumping it rolls the nodes.
    nodeReleaseVersion: str | None = Field(None, min_length=1)

    @field_validator("addonVersions", mode="before")
    @classmethod
    def _known_addons(cls, versions: object) -> object:
        if not isinstance(versions, dict) or not all(
            isinstance(v, str) and v for v in versions.values()
        ):
            msg = "must be a map of addon name to version, e.g. vpc-cni: v1.20.0"
            raise ValueError(msg)
        unknown = sorted(set(versions) - set(ADDONS))
        if unknown:
            msg = f"unknown addons {', '.join(unknown)}; known: {', '.join(ADDONS)}"
            raise ValueError(msg)
        return versions


def aws_environment(comp: Composition) -> AwsEnvironment:
    """The parsed ``aws`` environment block; an InputError names any bad field."""
    raw = comp.env.get("aws")
    return parse(AwsEnvironment, raw if raw is not None else {}, "environment.aws")
