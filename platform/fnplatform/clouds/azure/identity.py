"""Azure workload identity: a user-assigned managed identity federated with a service account.

The Kubernetes service account ``namespace/service_account`` exchanges its projected token
(issued by the AKS OIDC issuer) for the identity's Entra token: no secret is ever stored.

What cert-manager gets, and why it is enough: the service account's
``azure.workload.identity/client-id`` annotation and the pods' ``azure.workload.identity/use``
label make AKS's webhook inject ``AZURE_CLIENT_ID``, ``AZURE_TENANT_ID`` and the token file, so
cert-manager's ``azureDNS`` solver authenticates as this identity. The chart is installed
without an Issuer; whoever writes one needs ``subscriptionID``, ``resourceGroupName`` (the
``planeId``), ``hostedZoneName`` (the domain) and, optionally, ``managedIdentity.clientID``
(``status.atProvider.clientId`` of this identity). Workload identity counts as *ambient*
credentials, which cert-manager allows only to a ``ClusterIssuer`` by default: a namespaced
``Issuer`` fails unless the controller runs with ``--issuer-ambient-credentials``.

For the ``dns`` purpose the identity is granted ``DNS Zone Contributor`` on each public zone
(``<name>-dns-<zone>``, an ``authorization.azure.upbound.io`` RoleAssignment scoped to the
zone's id): without it every DNS01 challenge fails with 403. Private zones get no grant:
cert-manager's ``azureDNS`` solver writes to public Azure DNS only.
"""

from __future__ import annotations

from fnplatform.clouds.azure.common import (
    grant_role,
    location,
    resource_group,
)
from fnplatform.clouds.azure.kinds import (
    FEDERATED_IDENTITY_CREDENTIAL,
    USER_ASSIGNED_IDENTITY,
)
from fnplatform.composition import Composition
from fnplatform.library.identity import (
    ExternalClusterSetting,
    IdentityPurpose,
    WorkloadIdentitySpec,
    add_workload_identity,
    external_cluster_setting,
    identity_annotations,
    identity_binding,
    identity_id,
    identity_pod_labels,
)

DNS_ZONE_CONTRIBUTOR = "DNS Zone Contributor"
BLOB_DATA_CONTRIBUTOR = "Storage Blob Data Contributor"
TOKEN_AUDIENCE = "api://AzureADTokenExchange"  # the audience Entra ID accepts for federation
CLIENT_ID_ANNOTATION = "azure.workload.identity/client-id"
USE_LABEL = "azure.workload.identity/use"
OIDC_ISSUER = "status.atProvider.oidcIssuerUrl"


@add_workload_identity.on("azure")
def workload_identity(
    comp: Composition,
    name: str,
    spec: WorkloadIdentitySpec,
) -> None:
    """Identity ``name`` and, once the cluster's OIDC issuer is known, ``<name>-federation``."""
    group = resource_group(comp)
    comp.emit(
        name,
        USER_ASSIGNED_IDENTITY.new(
            {
                "name": comp.resource_name(name),
                "location": location(comp),
                "resourceGroupName": group,
            }
        ),
    )
    if spec.purpose is IdentityPurpose.DNS_RECORDS:
        for zone in spec.zones:
            if not zone.private:
                grant_role(
                    comp,
                    f"{name}-dns-{zone.name}",
                    role=DNS_ZONE_CONTRIBUTOR,
                    principal_of=(name, "status.atProvider.principalId"),
                    scope_of=zone.name,
                )
    for bucket in (written.name for written in spec.buckets):
        # the bucket is a storage account with one container: the role on the account (its
        # only container and nothing else), data plane only (no keys, no account settings)
        grant_role(
            comp,
            f"{name}-{bucket}",
            role=BLOB_DATA_CONTRIBUTOR,
            principal_of=(name, "status.atProvider.principalId"),
            scope_of=bucket,
        )
    credential = f"{name}-federation"
    external = spec.external_cluster
    issuer = (
        external.name
        if external
        else comp.needs(spec.cluster, OIDC_ISSUER, by=credential, remember="oidcIssuer")
    )
    if issuer is None:
        return
    comp.emit(
        credential,
        FEDERATED_IDENTITY_CREDENTIAL.new(
            {
                "resourceGroupName": group,
                "parentIdRef": comp.ref(name),
                "issuer": str(issuer),
                "subject": f"system:serviceaccount:{spec.namespace}:{spec.service_account}",
                "audience": [TOKEN_AUDIENCE],
            }
        ),
    )


@identity_annotations.on("azure")
def azure_identity_annotations(
    comp: Composition, name: str, spec: WorkloadIdentitySpec
) -> dict[str, str]:
    """The service account's ``client-id`` annotation, once the identity is observed."""
    client_id = comp.observed_value(name, "status.atProvider.clientId")
    return {CLIENT_ID_ANNOTATION: str(client_id)} if client_id else {}


@identity_pod_labels.on("azure")
def azure_identity_pod_labels(comp: Composition) -> dict[str, str]:
    """The label that makes AKS's workload identity webhook inject the token into the pod."""
    return {USE_LABEL: "true"}


@identity_id.on("azure")
def azure_identity_id(comp: Composition, name: str) -> str | None:
    """The identity's client ID (``AZURE_CLIENT_ID``), once observed."""
    return comp.observed_string(name, "status.atProvider.clientId")


@identity_binding.on("azure")
def azure_identity_binding(comp: Composition, name: str) -> str:
    """The federated credential that trusts the cluster's service-account tokens."""
    return f"{name}-federation"


@external_cluster_setting.on("azure")
def azure_external_cluster_setting(comp: Composition) -> ExternalClusterSetting:
    """A cluster outside the composite, by the AKS cluster's OIDC issuer URL (federated
    credentials trust it)."""
    return ExternalClusterSetting("aksOidcIssuerUrl")
