"""GCP's answers to the value capabilities: credentials, annotations, labels, status."""

from __future__ import annotations

from typing import Any

from fnplatform.clouds.gcp.common import service_account_email
from fnplatform.clouds.gcp.settings import gcp_environment
from fnplatform.composition import Composition
from fnplatform.importing import EXTERNAL_NAME
from fnplatform.library.registry import provides
from fnplatform.library.specs import ClusterSpec, WorkloadIdentitySpec

GKE_SERVICE_ACCOUNT_ANNOTATION = "iam.gke.io/gcp-service-account"
INTERNAL_LB_ANNOTATION = "networking.gke.io/load-balancer-type"
GKE_OIDC_BASE = "https://container.googleapis.com/v1"


@provides("cluster_credentials", "gcp")
def cluster_credentials(comp: Composition, cluster_name: str, spec: ClusterSpec) -> dict[str, Any]:
    """``GoogleApplicationCredentials``: the kubeconfig alone cannot authenticate to GKE.

    provider-upjet-gcp writes a kubeconfig with the endpoint, the CA and the legacy client
    certificate. GKE stopped issuing client certificates (and the cluster asks for none), so
    that user is anonymous. GKE authenticates Google OAuth tokens: with this identity,
    provider-helm and provider-kubernetes mint a token from Google credentials and add it to
    the kubeconfig. By default they use the credentials injected into their pods
    (``InjectedIdentity``: GKE workload identity of the control plane, no static key);
    ``environment.gcp.clusterIdentity`` may name a Secret with a key file instead.

    That Google identity needs ``roles/container.admin`` in the project, not
    ``roles/container.developer``: the charts create ClusterRoles, ClusterRoleBindings, CRDs
    and webhook configurations, and creating RBAC roles needs ``container.clusterRoles.create``
    (and ``...bind``/``escalate``), which only Kubernetes Engine Admin carries among the
    predefined roles (GCP IAM, "Google Kubernetes Engine roles and permissions"). The grant is
    not composed: the identity is the management cluster's, outside this composite.
    """
    identity = gcp_environment(comp).clusterIdentity
    credentials: dict[str, Any] = {
        "type": "GoogleApplicationCredentials",
        "source": identity.source,
    }
    if identity.source == "Secret" and identity.secretRef is not None:
        credentials["secretRef"] = identity.secretRef.model_dump()
    return credentials


@provides("kubeconfig_source", "gcp")
def kubeconfig_source(comp: Composition, cluster: str) -> str:
    """The GKE Cluster itself writes the kubeconfig (its connection secret)."""
    return cluster


@provides("cluster_access", "gcp")
def cluster_access(comp: Composition, cluster: str) -> list[str]:
    """Nothing composed: the providers' Google identity is granted outside the composite."""
    return []


@provides("internal_load_balancer", "gcp")
def internal_load_balancer(comp: Composition) -> dict[str, str]:
    """A GKE Service of type LoadBalancer becomes an internal passthrough Network LB."""
    return {INTERNAL_LB_ANNOTATION: "Internal"}


@provides("identity_annotations", "gcp")
def identity_annotations(
    comp: Composition, name: str, spec: WorkloadIdentitySpec
) -> dict[str, str]:
    """Bind the Kubernetes service account to the Google one by its email.

    The email is known before the account exists (observed when it does): the account id
    is deterministic and the project is the composite's.
    """
    body = comp.desired[name].body if name in comp.desired else None
    return {GKE_SERVICE_ACCOUNT_ANNOTATION: service_account_email(comp, name, body)}


@provides("identity_pod_labels", "gcp")
def identity_pod_labels(comp: Composition) -> dict[str, str]:
    """GKE workload identity needs no pod labels (the node's metadata server does the work)."""
    return {}


@provides("cluster_status", "gcp")
def cluster_status(comp: Composition, cluster_name: str) -> None:
    """Endpoint, CA, name and OIDC issuer of the observed GKE cluster into the XR status.

    GKE reports the endpoint as a bare IP; status carries a URL like the other clouds.
    The issuer is GKE's per-cluster OIDC discovery URL, derived from the cluster id
    ``projects/<p>/locations/<l>/clusters/<name>``.
    """
    endpoint = comp.observed_value(cluster_name, "status.atProvider.endpoint")
    if endpoint:
        url = endpoint if str(endpoint).startswith("https://") else f"https://{endpoint}"
        comp.set_status("clusterEndpoint", url)
    comp.status_from(cluster_name, "status.atProvider.masterAuth.clusterCaCertificate", "clusterCA")
    cluster_id = comp.observed_value(cluster_name, "status.atProvider.id")
    annotations = comp.observed_value(cluster_name, "metadata.annotations") or {}
    named = annotations.get(EXTERNAL_NAME)
    if cluster_id:
        comp.set_status("clusterName", str(cluster_id).rsplit("/", 1)[-1])
        comp.set_status("oidcIssuer", f"{GKE_OIDC_BASE}/{cluster_id}")
    elif named:
        comp.set_status("clusterName", str(named))
