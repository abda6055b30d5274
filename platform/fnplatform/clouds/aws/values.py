"""AWS values the cloud-agnostic composers ask for: credentials, annotations, status."""

from __future__ import annotations

from typing import Any

from fnplatform.clouds.aws.common import CLOUD, eks_cluster_name
from fnplatform.composition import Composition
from fnplatform.library.registry import provides
from fnplatform.library.specs import ClusterSpec, WorkloadIdentitySpec


@provides("cluster_credentials", CLOUD)
def cluster_credentials(comp: Composition, cluster_name: str, spec: ClusterSpec) -> dict[str, Any]:
    """No ``identity`` block: the kubeconfig alone works.

    ClusterAuth's kubeconfig carries a bearer token (not an ``exec`` aws-iam-authenticator
    plugin, which provider pods lack) and ClusterAuth refreshes it before its 15-minute expiry.
    ``AWSWebIdentityCredentials`` would additionally need IRSA on the provider pods, which a
    management cluster need not have.
    """
    return {}


@provides("kubeconfig_source", CLOUD)
def kubeconfig_source(comp: Composition, cluster: str) -> str:
    """``<cluster>-auth``: EKS publishes no kubeconfig; ClusterAuth writes (and refreshes) it.

    Whatever reads the kubeconfig uses this resource, so a ClusterUsage keeps ClusterAuth (and
    its Secret) until the Releases and ProviderConfigs are gone: deleted first, it would take
    the Secret with it and every Release would fail to uninstall and keep its finalizer.
    """
    return f"{cluster}-auth"


@provides("cluster_access", CLOUD)
def cluster_access(comp: Composition, cluster: str) -> list[str]:
    """Nothing besides ClusterAuth: its token is the creator's, cluster admin from creation."""
    return []


@provides("internal_load_balancer", CLOUD)
def internal_load_balancer(comp: Composition) -> dict[str, str]:
    """Annotations making a LoadBalancer Service internal: the in-tree AWS cloud provider reads
    ``aws-load-balancer-internal``, the AWS Load Balancer Controller ``-scheme``."""
    return {
        "service.beta.kubernetes.io/aws-load-balancer-internal": "true",
        "service.beta.kubernetes.io/aws-load-balancer-scheme": "internal",
    }


@provides("identity_annotations", CLOUD)
def identity_annotations(
    comp: Composition, name: str, spec: WorkloadIdentitySpec
) -> dict[str, str]:
    """None: EKS Pod Identity binds the role by association, not by ServiceAccount annotation."""
    return {}


@provides("identity_pod_labels", CLOUD)
def identity_pod_labels(comp: Composition) -> dict[str, str]:
    """None: the Pod Identity webhook injects credentials into every pod of an associated SA."""
    return {}


@provides("cluster_status", CLOUD)
def cluster_status(comp: Composition, cluster_name: str) -> None:
    """XR status from the observed EKS cluster: endpoint, CA, name and OIDC issuer."""
    comp.status_from(cluster_name, "status.atProvider.endpoint", "clusterEndpoint")
    comp.status_from(cluster_name, "status.atProvider.certificateAuthority[0].data", "clusterCA")
    comp.status_from(cluster_name, "status.atProvider.id", "clusterName")
    comp.status_from(cluster_name, "status.atProvider.identity[0].oidc[0].issuer", "oidcIssuer")



@provides("autoscaler_values", CLOUD)
def autoscaler_values(comp: Composition, cluster: str) -> dict[str, Any]:
    """cluster-autoscaler chart values of this cloud: discover this cluster's node groups by
    tag, in its region.

    Only AWS provides this: GKE and AKS resize their pools themselves.
    """
    return {
        "cloudProvider": "aws",
        "awsRegion": comp.region,
        "autoDiscovery": {"clusterName": eks_cluster_name(comp, cluster)},
    }


@provides("running_version", CLOUD)
def running_version(comp: Composition, cluster: str) -> str | None:
    """The Kubernetes version EKS reports for the running cluster (it picks its newest when
    none was asked for)."""
    version = comp.observed_value(cluster, "status.atProvider.version")
    return str(version) if version else None
