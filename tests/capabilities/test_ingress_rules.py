"""add_ingress_rules on every cloud: one resource per rule, named by what it admits.

The rules come from the composite's ``spec.rules`` so one composer serves every row; a rule's
composed name (and Azure priority) must not depend on where it sits in the list.
"""

from __future__ import annotations

import copy
import dataclasses
from typing import Any

import pytest
from fnplatform.composition import Composition
from fnplatform.library.ingress import IngressRule, IngressRulesSpec, add_ingress_rules
from fnplatform.library.network import NetworkSpec, add_network
from fnplatform.library.rules import rule_id

from tests.capabilities.harness import Case, check_converges, compose_once, converge, table

SIP = IngressRule("udp", 5060, 5080, "198.51.100.0/24", "SIP")
RTP = IngressRule("udp", 16384, 32767, "198.51.100.0/24", "RTP")
EXTRA = IngressRule("tcp", 5061, 5061, "2001:db8::/48", "SIP TLS")


def ingress(comp: Composition) -> None:
    add_network(comp, "net", NetworkSpec(subnet_cidr="10.70.0.0/16"))
    rules = tuple(IngressRule(**rule) for rule in comp.spec["rules"])
    add_ingress_rules(comp, "ingress", IngressRulesSpec(network="net", rules=rules))


def spec(*rules: IngressRule) -> dict[str, Any]:
    return {"rules": [dataclasses.asdict(rule) for rule in rules]}


KINDS = {
    "aws": frozenset({"SecurityGroup", "SecurityGroupIngressRule"}),
    "gcp": frozenset({"Firewall"}),
    "azure": frozenset({"SecurityGroup", "SecurityRule", "SubnetNetworkSecurityGroupAssociation"}),
}
CASES = [
    Case("sip-and-rtp", ingress, kinds=KINDS, spec=spec(SIP, RTP)),
    Case("ipv6-tcp", ingress, kinds=KINDS, spec=spec(EXTRA)),
]


@pytest.mark.parametrize(("case", "cloud"), table(add_ingress_rules, CASES))
def test_composes_schema_valid_bodies_that_converge(case: Case, cloud: str) -> None:
    check_converges(case, cloud)


@pytest.mark.parametrize("cloud", add_ingress_rules.clouds())
def test_rule_names_hash_what_they_admit_not_their_position(cloud: str) -> None:
    before = set(converge(cloud, ingress, spec=spec(SIP, RTP)).desired)
    after = set(converge(cloud, ingress, spec=spec(EXTRA, RTP, SIP)).desired)
    assert after - before >= {f"ingress-{rule_id(EXTRA)}"}
    assert {f"ingress-{rule_id(SIP)}", f"ingress-{rule_id(RTP)}"} <= before & after


def test_azure_priorities_are_hash_derived_unique_and_stable() -> None:
    def priorities(*rules: IngressRule) -> dict[str, int]:
        done = converge("azure", ingress, spec=spec(*rules))
        return {
            name: body["spec"]["forProvider"]["priority"]
            for name, body in done.desired.items()
            if body["kind"] == "SecurityRule"
        }

    two = priorities(SIP, RTP)
    three = priorities(RTP, EXTRA, SIP)
    assert len(set(three.values())) == 3
    assert all(100 <= p < 3100 for p in three.values())
    assert {name: three[name] for name in two} == two
    assert priorities(SIP, RTP) == two


@pytest.mark.parametrize("cloud", add_ingress_rules.clouds())
def test_a_bad_rule_is_an_error_naming_it(cloud: str) -> None:
    bad = IngressRule("udp", 5060, 5080, "not-a-range")
    failed = compose_once(cloud, ingress, spec=spec(SIP, bad))
    assert failed.fatal and "rule 1" in failed.fatal[0], failed.fatal


def test_rule_id_ignores_description_and_list_position() -> None:
    assert rule_id(SIP) == rule_id(IngressRule("udp", 5060, 5080, "198.51.100.0/24", "other"))
    assert rule_id(SIP) != rule_id(RTP)
    assert copy.deepcopy(SIP) == SIP
