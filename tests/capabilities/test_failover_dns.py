"""add_failover_dns on every cloud: a health-checked name that moves to the secondary.

The composer reads the name back (``failover_address``), as the contact-center status does.
"""

from __future__ import annotations

import pytest
from fnplatform.composition import Composition
from fnplatform.library.failover import FailoverDnsSpec, add_failover_dns, failover_address

from tests.capabilities.harness import Case, check_converges, table

SECONDARY = {"aws": "eu-central-1", "gcp": "europe-west4", "azure": "northeurope"}
#: The name each cloud serves, where the builder knows it (Azure's is the profile's fqdn).
ADDRESS = {"aws": "probe.example.com", "gcp": "probe.example.com."}


def failover(comp: Composition) -> None:
    spec = FailoverDnsSpec(
        zone="probezone",
        record_name="probe.example.com",
        primary="203.0.113.1",
        secondary="203.0.113.2",
        secondary_region=SECONDARY[str(comp.cloud)],
        health_check_path=comp.spec.get("path", "/health"),
        routing=comp.spec.get("routing", "failover"),
    )
    add_failover_dns(comp, "failover", spec)
    comp.set_status("address", failover_address(comp, "failover", spec))


KINDS = {
    "aws": frozenset({"HealthCheck", "Record"}),
    "gcp": frozenset({"HealthCheck", "RecordSet"}),
    "azure": frozenset({"TrafficManagerProfile", "TrafficManagerExternalEndpoint"}),
}
CASES = [
    Case("health", failover, kinds=KINDS),
    Case("custom-path", failover, kinds=KINDS, spec={"path": "/ready"}),
    Case("latency", failover, kinds=KINDS, spec={"routing": "latency"}),
]


@pytest.mark.parametrize(("case", "cloud"), table(add_failover_dns, CASES))
def test_composes_schema_valid_bodies_that_converge(case: Case, cloud: str) -> None:
    done = check_converges(case, cloud)
    assert done.status["address"] == (ADDRESS.get(cloud) or done.reported("failover")["fqdn"])
    assert case.spec.get("path", "/health") in str(done.desired)
