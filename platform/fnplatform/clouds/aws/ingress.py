"""AWS ingress rules: a security group in the network's VPC and one ingress rule resource each.

``<name>`` is the ``SecurityGroup``; each rule is a ``SecurityGroupIngressRule`` named
``<name>-<id>``, where ``id`` hashes protocol, ports and source range
(:func:`fnplatform.library.rules.rule_id`): adding a trusted range adds one resource and
touches no other. Separate rule resources (not inline ``ingress`` blocks) are what the
provider recommends, so one rule's change never rewrites the group. No egress rule is added:
the group keeps AWS's default allow-all egress.
"""

from __future__ import annotations

from fnplatform.api.validation import ip_network
from fnplatform.clouds.aws.kinds import SECURITY_GROUP, SECURITY_GROUP_INGRESS_RULE
from fnplatform.composition import Composition
from fnplatform.library.ingress import (
    IngressRulesSpec,
    add_ingress_rules,
    ingress_rules_id,
    ingress_rules_parts,
)
from fnplatform.library.rules import rule_id, unique_rules


@add_ingress_rules.on("aws")
def ingress_rules(comp: Composition, name: str, spec: IngressRulesSpec) -> None:
    """Security group ``name`` and its ingress rules ``<name>-<rule id>``."""
    region = spec.region or comp.region  # the network's: a security group is regional
    # A security group's description cannot change (EC2 has no call for it; the provider
    # replaces the group, which upjet refuses): it is set at creation only (initProvider), so
    # a later change of the words never leaves the group failing to update.
    comp.emit(
        name,
        SECURITY_GROUP.new(
            {
                "region": region,
                "name": comp.resource_name(name),
                "vpcIdRef": comp.ref(spec.network),
                "revokeRulesOnDelete": True,
            },
            initProvider={"description": spec.description or f"Ingress of {comp.name}"},
        ),
        uses=(spec.network,),
    )
    for rule in unique_rules(spec.rules):
        source = ip_network(rule.source, strict=False)
        body = {
            "region": region,
            "securityGroupIdRef": comp.ref(name),
            "ipProtocol": rule.protocol.lower(),
            "fromPort": rule.from_port,
            "toPort": rule.to_port,
            "cidrIpv6" if source.version == 6 else "cidrIpv4": str(source),
        }
        if rule.description:
            body["description"] = rule.description
        comp.emit(f"{name}-{rule_id(rule)}", SECURITY_GROUP_INGRESS_RULE.new(body), uses=(name,))


@ingress_rules_id.on("aws")
def aws_ingress_rules_id(comp: Composition, name: str) -> str | None:
    """The security group id once AWS assigned it."""
    return comp.observed_string(name, "status.atProvider.id")


@ingress_rules_parts.on("aws")
def aws_ingress_rules_parts(comp: Composition, name: str) -> tuple[str, ...]:
    """The resources of rules ``name``: the security group and its rules."""
    return (name, f"{name}-*")
