"""Cloud DNS zones and the workload identity cert-manager's DNS01 solver runs as.

Workload identity on GKE: a Google service account, a ``roles/iam.workloadIdentityUser``
binding that lets the Kubernetes service account ``<namespace>/<name>`` (member
``serviceAccount:<project>.svc.id.goog[<namespace>/<name>]``) impersonate it, and
``roles/dns.admin`` for the Google service account. No key is ever created.
"""

from __future__ import annotations

from typing import Any

from fnplatform.clouds.gcp import kinds
from fnplatform.clouds.gcp.common import external_name, project, workload_pool
from fnplatform.clouds.gcp.iam import add_service_account, grant_project_roles
from fnplatform.composition import Composition
from fnplatform.errors import SpecError
from fnplatform.library.registry import provides
from fnplatform.library.specs import DnsZoneSpec, WorkloadIdentitySpec

WORKLOAD_IDENTITY_USER = "roles/iam.workloadIdentityUser"
#: What each purpose of a workload identity may do in the project.
PURPOSE_ROLES: dict[str, tuple[str, ...]] = {"dns": ("roles/dns.admin",)}


@provides("dns_zone", "gcp")
def dns_zone(
    comp: Composition,
    name: str,
    spec: DnsZoneSpec,
) -> None:
    """A Cloud DNS zone for ``spec.domain``; private zones are visible in ``spec.network`` only."""
    visibility = "private" if spec.private else "public"
    for_provider: dict[str, Any] = {
        "project": project(comp),
        "dnsName": f"{spec.domain.rstrip('.')}.",
        "visibility": visibility,
        "description": f"{visibility.capitalize()} zone {spec.domain} of {comp.name}",
        # Never delete records others wrote (cert-manager, external-dns) with the zone.
        "forceDestroy": False,
    }
    if spec.private:
        if not spec.network:
            raise SpecError("network", "a private zone needs a network")
        for_provider["privateVisibilityConfig"] = {
            "networks": [{"networkUrlRef": comp.ref(spec.network)}]
        }
    comp.emit(
        name,
        kinds.MANAGED_ZONE.new(for_provider),
        external_name=external_name(comp, name),
    )


@provides("workload_identity", "gcp")
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
    if roles is None:
        raise SpecError("purpose", f"gcp has no roles for {spec.purpose!r}")
    account = add_service_account(
        comp,
        name,
        display_name=f"{spec.namespace}/{spec.service_account} of {comp.name}",
        description=f"Workload identity of {spec.namespace}/{spec.service_account}",
    )
    ksa = f"serviceAccount:{workload_pool(comp)}[{spec.namespace}/{spec.service_account}]"
    comp.emit(
        f"{name}-binding",
        kinds.SERVICE_ACCOUNT_IAM_MEMBER.new(
            {
                "serviceAccountIdRef": comp.ref(name),
                "role": WORKLOAD_IDENTITY_USER,
                "member": ksa,
            }
        ),
        uses=sorted({name, spec.cluster}),
    )
    grant_project_roles(comp, name, account, roles)


@provides("identity_binding", "gcp")
def identity_binding(comp: Composition, name: str) -> str:
    """The workloadIdentityUser binding that lets the Kubernetes SA act as the GCP SA."""
    return f"{name}-binding"
