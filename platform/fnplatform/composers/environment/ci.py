"""The environment's CI identity (``spec.ci``, opt-in): the unified-environment document's
"major pitfall". The squad's pipeline uploads the built frontends to the asset bucket; it gets
a cloud identity that may write that bucket's objects and nothing else, assumed without keys by
the runner pods' Kubernetes service account on the platform's CI cluster (environment ``ci``):

- AWS: an IAM role with a policy on the bucket and its objects, bound by an EKS Pod Identity
  association on the CI cluster (``ci.eksClusterName``);
- GCP: a Google service account with ``roles/storage.objectAdmin`` on the bucket, which the
  runner's service account impersonates through GKE Workload Identity (``ci.gkeWorkloadPool``);
- Azure: a user-assigned identity with ``Storage Blob Data Contributor`` on the bucket's storage
  account, federated with the runner's service account (``ci.aksOidcIssuerUrl``).

The library's workload identity capability builds it (purpose ``bucket-writer``), as it builds
cert-manager's and the autoscaler's identities for the cluster module. ``status.ciIdentity``
names what the pipeline assumes and the annotations its service account needs.
"""

from __future__ import annotations

from fnplatform.composers.environment.model import CiIdentity, EnvironmentSettings
from fnplatform.composition import Composition
from fnplatform.errors import InputError
from fnplatform.library import add_workload_identity
from fnplatform.library.identity import (
    ExternalCluster,
    IdentityBucket,
    IdentityPurpose,
    WorkloadIdentitySpec,
    external_cluster_setting,
    identity_annotations,
    identity_id,
)

CI_IDENTITY = "ci-identity"


def _ci_cluster(comp: Composition, settings: EnvironmentSettings) -> ExternalCluster:
    """The CI cluster as the environment's cloud knows it (the settings key it answers with
    ``external_cluster_setting``); an error naming the setting."""
    ci = settings.ci
    setting = external_cluster_setting(comp)
    name = getattr(ci, setting.name_key)
    if not name:
        raise InputError(
            f"environment.ci.{setting.name_key}",
            f"required for spec.ci on {comp.cloud}: where the CI runners run",
        )
    region = getattr(ci, setting.region_key) if setting.region_key else None
    return ExternalCluster(name, region)


def ci_identity(
    comp: Composition,
    ci: CiIdentity | None,
    settings: EnvironmentSettings,
    *,
    bucket: str,
    bucket_name: str,
) -> None:
    """Identity ``ci-identity`` writing composed bucket ``bucket`` (``bucket_name`` in the
    cloud), when the claim opts in."""
    if ci is None:
        return
    spec = WorkloadIdentitySpec(
        cluster="",
        namespace=ci.namespace,
        service_account=ci.serviceAccount,
        purpose=IdentityPurpose.BUCKET_WRITER,
        buckets=(IdentityBucket(bucket, bucket_name),),
        external_cluster=_ci_cluster(comp, settings),
    )
    add_workload_identity(
        comp,
        CI_IDENTITY,
        spec,
        fields={"namespace": "spec.ci.namespace", "service_account": "spec.ci.serviceAccount"},
    )
    comp.set_status(
        "ciIdentity",
        {
            "serviceAccount": f"{ci.namespace}/{ci.serviceAccount}",
            **({"id": identity} if (identity := identity_id(comp, CI_IDENTITY)) else {}),
            **(
                {"annotations": annotations}
                if (annotations := identity_annotations(comp, CI_IDENTITY, spec))
                else {}
            ),
        },
    )
