"""GCP ingress rules: one VPC firewall rule per admitted (protocol, ports, source).

Each rule is a ``Firewall`` named ``<name>-<id>`` (``id`` hashes protocol, ports and source:
see :func:`fnplatform.library.rules.rule_id`), direction INGRESS, in the network composed as
``spec.network``, logged. GCP has no security-group object: ``<name>`` itself is not composed,
and the rules apply to every instance of the network (no target tags).
"""

from __future__ import annotations

from fnplatform.clouds.gcp import kinds
from fnplatform.clouds.gcp.common import external_name, project
from fnplatform.composition import Composition
from fnplatform.library.ingress import (
    IngressRulesSpec,
    add_ingress_rules,
    ingress_rules_id,
    ingress_rules_parts,
)
from fnplatform.library.rules import rule_id, unique_rules

PRIORITY = 1000  # GCP's default; the implied deny-all ingress sits at 65535


@add_ingress_rules.on("gcp")
def ingress_rules(comp: Composition, name: str, spec: IngressRulesSpec) -> None:
    """Firewall rules ``<name>-<rule id>`` in network ``spec.network``."""
    for rule in unique_rules(spec.rules):
        composed = f"{name}-{rule_id(rule)}"
        ports = (
            str(rule.from_port)
            if rule.from_port == rule.to_port
            else f"{rule.from_port}-{rule.to_port}"
        )
        body = {
            "project": project(comp),
            "networkRef": comp.ref(spec.network),
            "direction": "INGRESS",
            "priority": PRIORITY,
            "allow": [{"protocol": rule.protocol.lower(), "ports": [ports]}],
            "sourceRanges": [rule.source],
            "description": rule.description or spec.description or f"Ingress of {comp.name}",
            "logConfig": {"metadata": "INCLUDE_ALL_METADATA"},
        }
        comp.emit(
            composed,
            kinds.FIREWALL.new(body),
            uses=(spec.network,),
            external_name=external_name(comp, composed),
        )


@ingress_rules_id.on("gcp")
def gcp_ingress_rules_id(comp: Composition, name: str) -> str:
    """GCP has no group object: the rules' common prefix names them."""
    return comp.resource_name(name)


@ingress_rules_parts.on("gcp")
def gcp_ingress_rules_parts(comp: Composition, name: str) -> tuple[str, ...]:
    """The resources of rules ``name``: one firewall per rule (nothing is named ``name`` itself)."""
    return (f"{name}-*",)
