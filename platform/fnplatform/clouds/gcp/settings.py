"""GCP-only knobs a platform team may set in the environment under ``gcp``.

All optional, with production defaults; the cloud-agnostic composer never needs to know them.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from fnplatform.api.validation import Cidr, SecretKeyRef, describe_pattern, parse
from fnplatform.composition import Composition


class ClusterIdentity(BaseModel):
    """Where provider-helm/provider-kubernetes get the Google credentials for a GKE cluster."""

    model_config = ConfigDict(extra="forbid")

    source: Literal["InjectedIdentity", "Secret"] = "InjectedIdentity"
    secretRef: SecretKeyRef | None = None

    @model_validator(mode="after")
    def _secret_named(self) -> ClusterIdentity:
        if self.source == "Secret" and self.secretRef is None:
            msg = "source Secret needs secretRef"
            raise ValueError(msg)
        return self


class AuthorizedNetwork(BaseModel):
    """A CIDR allowed to reach the GKE API server's public endpoint."""

    model_config = ConfigDict(extra="forbid")

    cidrBlock: Cidr
    displayName: str = Field(min_length=1)


class GcpPrivateNetwork(BaseModel):
    """``env.gcp.privateNetwork`` (or ``privateNetworks.<region>``): the VPC network databases
    join, with private services access already set up by its owner; passed to the builder in
    ``DatabaseSpec.network``."""

    model_config = ConfigDict(extra="forbid")

    network: str = Field(min_length=1)  # e.g. projects/<project>/global/networks/<name>
    allocatedIpRange: str | None = Field(
        None,
        pattern=describe_pattern(
            r"^[a-z]([-a-z0-9]*[a-z0-9])?$",
            "a GCP resource name: lowercase letters, digits and '-', starting with a letter",
        ),
        max_length=63,
    )


class GcpCdnDomains(BaseModel):
    """``env.gcp.cdnDomains``: DNS for the CDN's custom domains."""

    model_config = ConfigDict(extra="forbid")

    #: The Cloud DNS managed zone (its name, in ``gcp.project``) holding the custom domains:
    #: each host gets an A record to the load balancer's address. Unset: the claim says
    #: which records the platform must create.
    managedZone: str | None = Field(
        None,
        max_length=63,
        pattern=describe_pattern(
            r"^[a-z]([-a-z0-9]*[a-z0-9])?$",
            "a GCP resource name: lowercase letters, digits and '-', starting with a letter",
        ),
    )


class GcpEnvironment(BaseModel):
    """``env.gcp``."""

    model_config = ConfigDict(extra="ignore")

    releaseChannel: Literal["RAPID", "REGULAR", "STABLE", "EXTENDED"] = "REGULAR"
    masterCidr: Cidr = "172.16.0.0/28"
    deletionProtection: bool = False
    clusterIdentity: ClusterIdentity = Field(default_factory=ClusterIdentity)
    #: Required: only these CIDRs (and the VPC) reach the API server; include Crossplane's.
    masterAuthorizedNetworks: list[AuthorizedNetwork] = Field(default_factory=list)
    cdnDomains: GcpCdnDomains = Field(default_factory=GcpCdnDomains)
    #: The Secret holding the Cloud SQL root password (the provider cannot generate one).
    databasePasswordSecretRef: SecretKeyRef | None = None
    #: The project id, for composers that place resources by environment (contact-center).
    project: str | None = Field(None, min_length=1)
    #: The project NUMBER, for Google-managed service agents: the Cloud Storage one that must
    #: use a bucket's key (``service-<number>@gs-project-accounts.iam.gserviceaccount.com``),
    #: Cloud CDN's fill account that reads a private bucket.
    projectNumber: str | None = Field(
        None, pattern=describe_pattern(r"^[0-9]{6,20}$", "a GCP project number (6 to 20 digits)")
    )


def gcp_environment(comp: Composition) -> GcpEnvironment:
    """The parsed ``gcp`` environment block; an InputError names any bad field."""
    return parse(GcpEnvironment, comp.env.get("gcp") or {}, "environment.gcp")
