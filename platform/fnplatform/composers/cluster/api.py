"""The cluster module's composite API: claim ``myplatform.io/v1alpha1 Cluster``, XR ``XCluster``.

``tools/generate_apis.py`` writes ``apis/cluster/definition.yaml`` from :data:`API`; the spec
schema comes from the same model the composer validates with, so they cannot drift apart.
"""

from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field

from fnplatform.api.xrd import ApiDefinition, PrinterColumn
from fnplatform.composers.cluster.model import Cloud, ClusterSpec


class ClusterStatus(BaseModel):
    """``XCluster.status``: what the function learned from the observed cloud resources."""

    model_config = ConfigDict(extra="allow")  # Crossplane writes conditions etc. itself

    cloud: Cloud | None = Field(None, description="The cloud the cluster runs on.")
    clusterName: str | None = Field(None, description="The cluster's name in the cloud.")
    clusterEndpoint: str | None = Field(None, description="The Kubernetes API server endpoint.")
    clusterCA: str | None = Field(None, description="The API server's CA certificate (base64 PEM).")
    kubeconfigSecret: str | None = Field(
        None,
        description="Namespaced form: the Secret in this namespace holding the cluster's "
        "kubeconfig (key kubeconfig), written by the cloud provider.",
    )
    oidcIssuer: str | None = Field(
        None, description="The cluster's OIDC issuer URL, for workload identity."
    )
    oidcProviderArn: str | None = Field(
        None,
        description="AWS: the IAM OIDC provider of the issuer, the federated principal IRSA "
        "role trust policies name.",
    )


API = ApiDefinition(
    group="myplatform.io",
    kind="XCluster",
    claim_kind="Cluster",
    spec_model=ClusterSpec,
    status_model=ClusterStatus,
    connection_secret_keys=("kubeconfig", "endpoint", "clusterCA"),
    printer_columns=(
        PrinterColumn("CLOUD", ".metadata.labels.cloud"),
        PrinterColumn("LOCATION", ".spec.forProvider.location"),
        PrinterColumn("ENDPOINT", ".status.clusterEndpoint"),
    ),
)
