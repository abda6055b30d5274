"""What every GCP builder shares: the project, GCP resource names, service-account emails.

GCP names are stricter than Kubernetes names: compute, DNS and GKE names must start with a
letter, and GKE clusters and node pools allow 40 characters, service-account ids 6 to 30.
``metadata.name`` (a DNS label that may start with a digit, up to 63) is the external name by
default; when it doesn't fit, the builder sets a deterministic external name that does.
"""

from __future__ import annotations

from fnplatform.composition import Composition
from fnplatform.naming import dns_label

GKE_NAME_MAX = 40
SERVICE_ACCOUNT_ID_MIN, SERVICE_ACCOUNT_ID_MAX = 6, 30


def project(comp: Composition) -> str:
    """The GCP project id: the scope the composer placed the composite in."""
    return comp.scope


def gcp_name(comp: Composition, name: str, max_length: int = 63) -> str:
    """A GCP resource name for composed resource ``name``: starts with a letter, fits."""
    label = dns_label(comp.name, name, max_length=max_length)
    if not label[0].isalpha():
        label = dns_label("x", comp.name, name, max_length=max_length)
    return label


def external_name(comp: Composition, name: str, max_length: int = 63) -> str | None:
    """The external name to set on ``name``, or None when ``metadata.name`` already fits."""
    wanted = gcp_name(comp, name, max_length)
    return None if wanted == comp.resource_name(name) else wanted


def service_account_id(comp: Composition, name: str) -> str:
    """The account id (6-30 characters, starts with a letter) of service account ``name``."""
    account = gcp_name(comp, name, SERVICE_ACCOUNT_ID_MAX)
    return account if len(account) >= SERVICE_ACCOUNT_ID_MIN else f"{account}-sa-id"[:30]


def service_account_email(comp: Composition, name: str) -> str:
    """The email of the service account composed as ``name``.

    The observed email when there is one; otherwise it follows from the account id (the
    external name: the imported account's, else :func:`service_account_id`) and the project,
    which GCP fixes as ``<id>@<project>.iam.gserviceaccount.com``.
    """
    observed = comp.observed_string(name, "status.atProvider.email")
    if observed:
        return observed
    account = comp.cloud_name(name, service_account_id(comp, name))
    return f"{account}@{project(comp)}.iam.gserviceaccount.com"


def workload_pool(comp: Composition) -> str:
    """The GKE workload identity pool of the project."""
    return f"{project(comp)}.svc.id.goog"


def subnet_name(network: str) -> str:
    """The composition name of the primary subnetwork of ``network``."""
    return f"{network}-subnet"
