"""add_dns_zone on every cloud: a public zone, and a private one seen only in its network."""

from __future__ import annotations

import pytest
from fnplatform.composition import Composition
from fnplatform.library.dns import DnsZoneSpec, add_dns_zone
from fnplatform.library.network import NetworkSpec, add_network

from tests.capabilities.harness import Case, check_converges, table


def public(comp: Composition) -> None:
    add_dns_zone(comp, "dns-public", DnsZoneSpec(domain="probe.example.com", private=False))


def private(comp: Composition) -> None:
    add_network(comp, "network", NetworkSpec(subnet_cidr="10.70.0.0/16"))
    add_dns_zone(
        comp,
        "dns-private",
        DnsZoneSpec(domain="probe.example.com", private=True, network="network"),
        uses=["network"],
    )


CASES = [
    Case(
        "public",
        public,
        kinds={
            "aws": frozenset({"route53/Zone"}),
            "gcp": frozenset({"dns/ManagedZone"}),
            "azure": frozenset({"network/DNSZone"}),
        },
    ),
    Case(
        "private",
        private,
        kinds={
            "aws": frozenset({"route53/Zone"}),
            "gcp": frozenset({"dns/ManagedZone"}),
            "azure": frozenset(
                {"network/PrivateDNSZone", "network/PrivateDNSZoneVirtualNetworkLink"}
            ),
        },
    ),
]


@pytest.mark.parametrize(("case", "cloud"), table(add_dns_zone, CASES))
def test_composes_schema_valid_bodies_that_converge(case: Case, cloud: str) -> None:
    done = check_converges(case, cloud)
    assert "probe.example.com" in str(done.body(f"dns-{case.id}"))
