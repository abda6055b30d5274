"""Azure ingress rules: a network security group on the network's subnet, one rule each.

``<name>`` is the ``SecurityGroup`` (no inline rules), ``<name>-<id>`` each ``SecurityRule``
(``id`` hashes protocol, ports and source: :func:`fnplatform.library.rules.rule_id`) and
``<name>-association`` attaches the group to the network's subnet.

NSG rules need a priority, unique within the group. It is derived from the same hash: rule
``r`` prefers ``FIRST + digest(r) mod SPAN``; rules are placed in the order of their ids and
a rule whose preferred priority is taken takes the next free one (wrapping within the
range). So a rule keeps its priority when others are added or removed unless they collide
with it, which for a handful of rules in 3,000 slots is rare -- and deterministic when it
happens. Every rule allows; their relative order therefore never changes what is admitted.
"""

from __future__ import annotations

from fnplatform.api.validation import ip_network
from fnplatform.clouds.azure.common import (
    resource_group,
    subnet_name,
)
from fnplatform.clouds.azure.kinds import (
    NETWORK_SECURITY_GROUP,
    NETWORK_SECURITY_RULE,
    SUBNET_NSG_ASSOCIATION,
)
from fnplatform.composition import Composition
from fnplatform.kinds import WITHOUT_LATE_INITIALIZE
from fnplatform.library.ingress import (
    IngressRule,
    IngressRulesSpec,
    add_ingress_rules,
    ingress_rules_id,
    ingress_rules_parts,
)
from fnplatform.library.rules import rule_digest, rule_id, unique_rules

#: Priorities of composed rules: 100 (the first allowed) up to 3099, leaving 3100-4096 for
#: rules a platform team adds by hand (deny rules, say) after every composed allow.
FIRST_PRIORITY, SPAN = 100, 3000


def priorities(rules: list[IngressRule]) -> dict[str, int]:
    """Rule id -> NSG priority, hash-derived and collision-free (see the module docstring)."""
    taken: set[int] = set()
    result: dict[str, int] = {}
    for rule in sorted(rules, key=rule_id):
        slot = rule_digest(rule) % SPAN
        while FIRST_PRIORITY + slot in taken:
            slot = (slot + 1) % SPAN
        taken.add(FIRST_PRIORITY + slot)
        result[rule_id(rule)] = FIRST_PRIORITY + slot
    return result


@add_ingress_rules.on("azure")
def ingress_rules(comp: Composition, name: str, spec: IngressRulesSpec) -> None:
    """NSG ``name``, its rules ``<name>-<rule id>`` and its subnet association."""
    group = resource_group(comp)
    # No LateInitialize: the group's inline ``securityRule`` is neither ignored nor moved to
    # status by the provider, so upjet would copy the separately composed rules into it, and
    # then remove a rule added later and restore a removed one (docs/drift.md).
    comp.emit(
        name,
        NETWORK_SECURITY_GROUP.new(
            {
                "location": spec.region or comp.region,
                "resourceGroupName": group,
            },
            managementPolicies=list(WITHOUT_LATE_INITIALIZE),
        ),
    )
    rules = unique_rules(spec.rules)
    placed = priorities(rules)
    for rule in rules:
        source = ip_network(rule.source, strict=False)
        ports = (
            str(rule.from_port)
            if rule.from_port == rule.to_port
            else f"{rule.from_port}-{rule.to_port}"
        )
        body = {
            "resourceGroupName": group,
            "networkSecurityGroupNameRef": comp.ref(name),
            "direction": "Inbound",
            "access": "Allow",
            "priority": placed[rule_id(rule)],
            "protocol": rule.protocol.capitalize(),
            "sourceAddressPrefix": str(source),
            "sourcePortRange": "*",
            "destinationAddressPrefix": "*",
            "destinationPortRange": ports,
        }
        if rule.description:
            body["description"] = rule.description
        comp.emit(f"{name}-{rule_id(rule)}", NETWORK_SECURITY_RULE.new(body), uses=(name,))
    comp.emit(
        f"{name}-association",
        SUBNET_NSG_ASSOCIATION.new(
            {
                "subnetIdRef": comp.ref(subnet_name(spec.network)),
                "networkSecurityGroupIdRef": comp.ref(name),
            }
        ),
        uses=(name, subnet_name(spec.network)),
    )


@ingress_rules_id.on("azure")
def azure_ingress_rules_id(comp: Composition, name: str) -> str | None:
    """The NSG's resource id once it exists."""
    return comp.observed_string(name, "status.atProvider.id")


@ingress_rules_parts.on("azure")
def azure_ingress_rules_parts(comp: Composition, name: str) -> tuple[str, ...]:
    """The resources of rules ``name``: the network security group, its rules and its
    subnet association."""
    return (name, f"{name}-*")
