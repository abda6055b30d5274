"""add_workload_identity on every cloud: cert-manager's DNS01 identity on a zone (details:
test_cluster_*), bound to its service account and annotated as each cloud's webhook needs."""

from __future__ import annotations

import pytest
from fnplatform.composition import Composition
from fnplatform.library.dns import DnsZoneSpec, add_dns_zone
from fnplatform.library.identity import (
    IdentityPurpose,
    IdentityZone,
    WorkloadIdentitySpec,
    add_workload_identity,
    identity_annotations,
    identity_binding,
)

from tests.capabilities.clusters import cluster
from tests.capabilities.harness import Case, check_converges, table

IDENTITY = WorkloadIdentitySpec(
    cluster="cluster",
    namespace="cert-manager",
    service_account="cert-manager",
    purpose=IdentityPurpose.DNS_RECORDS,
    zones=(IdentityZone("dns-public", "probe.example.com", private=False),),
)


def dns_solver(comp: Composition) -> None:
    cluster(comp)
    add_dns_zone(comp, "dns-public", DnsZoneSpec(domain="probe.example.com", private=False))
    add_workload_identity(comp, "cert-manager-identity", IDENTITY, uses=["cluster"])
    comp.set_status("binding", identity_binding(comp, "cert-manager-identity"))
    comp.set_status("annotations", identity_annotations(comp, "cert-manager-identity", IDENTITY))


CASES = [
    Case(
        "dns-solver",
        dns_solver,
        kinds={
            "aws": frozenset({"iam/Role", "eks/PodIdentityAssociation"}),
            "gcp": frozenset(
                {"cloudplatform/ServiceAccount", "cloudplatform/ServiceAccountIAMMember"}
            ),
            "azure": frozenset(
                {
                    "managedidentity/UserAssignedIdentity",
                    "managedidentity/FederatedIdentityCredential",
                }
            ),
        },
    )
]


@pytest.mark.parametrize(("case", "cloud"), table(add_workload_identity, CASES))
def test_composes_schema_valid_bodies_that_converge(case: Case, cloud: str) -> None:
    done = check_converges(case, cloud)
    assert done.status["binding"] in done.desired
