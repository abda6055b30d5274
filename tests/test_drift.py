"""Late initialisation and drift (docs/drift.md): the managed resources whose unset fields the
cloud changes after creation are managed without ``LateInitialize``, so upjet never copies
those fields into ``forProvider`` and then fights the cloud over them.

Each case converges the module's baseline claim (both forms) and checks the resource's
management policies; the namespaced form's keep-on-delete keeps the narrower list.
"""

from __future__ import annotations

import pytest

from tests.support.cases import (
    ModuleCase,
    contact_center_case,
    converge,
    environment_case,
    namespaced_twin,
)
from tests.support.harness import FunctionClient

WITHOUT_LATE_INITIALIZE = ["Observe", "Create", "Update", "Delete"]

#: (case, composed resource, why): the Azure NSG's inline ``securityRule`` would absorb the
#: separately composed rules; Cloud SQL moves its primary zone on a regional failover; Azure
#: flexible servers swap zone and standby zone on a failover; RDS would copy in the previous
#: major's option group and the gp3 baseline iops/throughput, refused after an upgrade.
CASES = [
    (contact_center_case("azure"), "sip-ingress", "inline securityRule"),
    (environment_case("gcp"), "database", "locationPreference.zone"),
    (environment_case("azure"), "database", "zone and standby zone"),
    (environment_case("aws"), "database", "option group after a major upgrade, gp3 iops"),
]


def _ids(case: tuple[ModuleCase, str, str]) -> str:
    return f"{case[0].id}-{case[1]}"


@pytest.mark.parametrize("form", ["cluster-scoped", "namespaced"])
@pytest.mark.parametrize(("case", "name", "why"), CASES, ids=[_ids(c) for c in CASES])
def test_resources_the_cloud_changes_are_not_late_initialised(
    client: FunctionClient, case: ModuleCase, name: str, why: str, form: str
) -> None:
    chosen = namespaced_twin(case) if form == "namespaced" else case
    rendered, _ = converge(client.run, chosen)
    assert rendered.fatal == []
    policies = rendered.resource(name)["spec"].get("managementPolicies")
    assert policies is not None and "LateInitialize" not in policies, (why, policies)
    assert set(policies) <= set(WITHOUT_LATE_INITIALIZE)
    assert {"Observe", "Create", "Update"} <= set(policies)
