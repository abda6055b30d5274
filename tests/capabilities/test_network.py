"""add_network on every cloud: a plain network assumes no Kubernetes; asked, it gets one.

``plain`` is what the contact-center endpoint asks (one range, public subnets);
``kubernetes`` what the cluster module asks (secondary ranges, private subnets with NAT, the
subnet tags load balancers are placed by).
"""

from __future__ import annotations

import json

import pytest
from fnplatform.composition import Composition
from fnplatform.library.network import NetworkSpec, add_network

from tests.capabilities.harness import Case, check_converges, table


def plain(comp: Composition) -> None:
    add_network(comp, "net", NetworkSpec(subnet_cidr="10.70.0.0/16"))


def kubernetes(comp: Composition) -> None:
    add_network(
        comp,
        "net",
        NetworkSpec(
            subnet_cidr="10.70.0.0/16",
            pods_cidr="10.80.0.0/14",
            services_cidr="10.90.0.0/16",
            private=True,
            kubernetes=True,
        ),
    )


CASES = [
    Case(
        "plain",
        plain,
        kinds={
            "aws": frozenset({"VPC", "Subnet"}),
            "gcp": frozenset({"Network", "Subnetwork"}),
            "azure": frozenset({"VirtualNetwork", "Subnet"}),
        },
    ),
    Case(
        "kubernetes",
        kubernetes,
        kinds={
            "aws": frozenset({"VPC", "Subnet", "NATGateway", "EIP"}),
            "gcp": frozenset({"Network", "Subnetwork", "Router", "RouterNAT"}),
            "azure": frozenset({"VirtualNetwork", "Subnet", "NATGateway", "PublicIP"}),
        },
    ),
]


@pytest.mark.parametrize(("case", "cloud"), table(add_network, CASES))
def test_composes_schema_valid_bodies_that_converge(case: Case, cloud: str) -> None:
    check_converges(case, cloud)


@pytest.mark.parametrize("cloud", add_network.clouds())
def test_network_has_no_kubernetes_assumptions(cloud: str) -> None:
    done = check_converges(CASES[0], cloud)
    text = json.dumps(done.desired)
    assert "kubernetes.io/role" not in text
    assert "NATGateway" not in done.kinds
    assert "RouterNAT" not in done.kinds
    assert "secondaryIpRange" not in text


@pytest.mark.parametrize("cloud", ["aws", "gcp"])
def test_kubernetes_network_has_what_kubernetes_needs(cloud: str) -> None:
    """The control of the test above: the markers it looks for do appear when asked."""
    text = json.dumps(check_converges(CASES[1], cloud).desired)
    assert {"aws": "kubernetes.io/role", "gcp": "secondaryIpRange"}[cloud] in text
