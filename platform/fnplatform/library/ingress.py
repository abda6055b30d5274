"""Ingress rules on a network: spec, call and values.

A cloud registers its builder with ``@add_<capability>.on("<cloud>")`` and its answers with
``@<value>.on("<cloud>")`` in ``clouds/<cloud>/ingress.py``, the home each object declares.
"""

from __future__ import annotations

from dataclasses import dataclass

from fnplatform.library.capability import Capability, Value


@dataclass(frozen=True)
class IngressRule:
    """Traffic admitted from one source range to a port range over one protocol."""

    protocol: str  # tcp | udp
    from_port: int
    to_port: int
    source: str  # a CIDR; never the whole internet when a composer says so
    description: str = ""


@dataclass(frozen=True)
class IngressRulesSpec:
    """A set of inbound allow rules attached to ``network`` (its subnet on Azure).

    Each rule's composed name derives from a hash of protocol, ports and source, so adding or
    removing one rule never renames another.
    """

    network: str  # composition name of the network
    rules: tuple[IngressRule, ...]
    description: str = ""
    #: None: the placed region; else the region of ``network`` (a failover site's).
    region: str | None = None


add_ingress_rules = Capability[IngressRulesSpec](
    "ingress_rules",
    "Inbound allow rules on a network, one resource per (protocol, ports, source).",
    home="ingress",
)


ingress_rules_id = Value[[str], str | None](
    "ingress_rules_id",
    "The id of the security group/NSG/firewall of rules ``name``.",
    home="ingress",
)


ingress_rules_parts = Value[[str], tuple[str, ...]](
    "ingress_rules_parts",
    "The composition names (``<prefix>*``: all of that prefix) of the resources of rules "
    "``name``, as the ingress builder emits them.",
    home="ingress",
)
