"""The workload identity cert-manager's DNS01 solver (and other pods) run as.

Workload identity on GKE: a Google service account, a ``roles/iam.workloadIdentityUser``
binding that lets the Kubernetes service account ``<namespace>/<name>`` (member
``serviceAccount:<project>.svc.id.goog[<namespace>/<name>]``) impersonate it, and
``roles/dns.admin`` for the Google service account. No key is ever created.
"""

from __future__ import annotations

from fnplatform.clouds.gcp import kinds
from fnplatform.clouds.gcp.common import (
    service_account_email,
    workload_pool,
)
from fnplatform.clouds.gcp.iam import add_service_account, grant_project_roles
from fnplatform.composition import Composition
from fnplatform.errors import SpecError
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

WORKLOAD_IDENTITY_USER = "roles/iam.workloadIdentityUser"
#: What a bucket-writer identity holds on each of its buckets, and nowhere else.
BUCKET_WRITER_ROLE = "roles/storage.objectAdmin"
#: What each purpose of a workload identity may do in the project.
PURPOSE_ROLES: dict[IdentityPurpose, tuple[str, ...]] = {
    IdentityPurpose.DNS_RECORDS: ("roles/dns.admin",),
}


@add_workload_identity.on("gcp")
def workload_identity(
    comp: Composition,
    name: str,
    spec: WorkloadIdentitySpec,
) -> None:
    """The Google service account as ``name``, its KSA binding and its project roles.

    The binding waits for the cluster (it creates the workload pool the member lives in) and
    for the account; the role grants wait for the account. Usages order their deletion.
    """
    roles = PURPOSE_ROLES.get(spec.purpose)
    if roles is None and spec.purpose is not IdentityPurpose.BUCKET_WRITER:
        raise SpecError("purpose", f"gcp has no roles for {spec.purpose.value!r}")
    add_service_account(
        comp,
        name,
        display_name=f"{spec.namespace}/{spec.service_account} of {comp.name}",
        description=f"Workload identity of {spec.namespace}/{spec.service_account}",
    )
    external = spec.external_cluster
    pool = external.name if external else workload_pool(comp)
    ksa = f"serviceAccount:{pool}[{spec.namespace}/{spec.service_account}]"
    comp.emit(
        f"{name}-binding",
        kinds.SERVICE_ACCOUNT_IAM_MEMBER.new(
            {
                "serviceAccountIdRef": comp.ref(name),
                "role": WORKLOAD_IDENTITY_USER,
                "member": ksa,
            }
        ),
        # an external cluster's pool exists already; a composed one's comes with the cluster
        uses=[name] if external else sorted({name, spec.cluster}),
    )
    if roles:
        grant_project_roles(comp, name, roles)
    member = f"serviceAccount:{service_account_email(comp, name)}"
    for bucket in (written.name for written in spec.buckets):
        # objectAdmin on that bucket only: create, overwrite and delete objects (a sync with
        # --delete); objectCreator could not overwrite or delete
        comp.emit(
            f"{name}-{bucket}",
            kinds.BUCKET_IAM_MEMBER.new(
                {
                    "bucketRef": comp.ref(bucket),
                    "role": BUCKET_WRITER_ROLE,
                    "member": member,
                }
            ),
            uses=sorted({name, bucket}),
        )


@identity_binding.on("gcp")
def gcp_identity_binding(comp: Composition, name: str) -> str:
    """The workloadIdentityUser binding that lets the Kubernetes SA act as the GCP SA."""
    return f"{name}-binding"


@identity_id.on("gcp")
def gcp_identity_id(comp: Composition, name: str) -> str | None:
    """The Google service account's email (known before it exists: see the annotation)."""
    return service_account_email(comp, name)


GKE_SERVICE_ACCOUNT_ANNOTATION = "iam.gke.io/gcp-service-account"


@identity_annotations.on("gcp")
def gcp_identity_annotations(
    comp: Composition, name: str, spec: WorkloadIdentitySpec
) -> dict[str, str]:
    """Bind the Kubernetes service account to the Google one by its email.

    The email is known before the account exists (observed when it does): the account id
    is deterministic and the project is the composite's.
    """
    return {GKE_SERVICE_ACCOUNT_ANNOTATION: service_account_email(comp, name)}


@identity_pod_labels.on("gcp")
def gcp_identity_pod_labels(comp: Composition) -> dict[str, str]:
    """GKE workload identity needs no pod labels (the node's metadata server does the work)."""
    return {}


@external_cluster_setting.on("gcp")
def gcp_external_cluster_setting(comp: Composition) -> ExternalClusterSetting:
    """A cluster outside the composite, by the GKE workload identity pool,
    ``<project>.svc.id.goog``."""
    return ExternalClusterSetting("gkeWorkloadPool")
