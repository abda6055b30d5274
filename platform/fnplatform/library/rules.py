"""Identity of ingress rules and buckets' naming rule checks: the cloud-agnostic part.

A rule's composed name comes from what it admits (protocol, ports, source), never from its
position in the user's list, so adding one trusted range never renames, replaces or briefly
drops every later rule. The same hash orders rules wherever a cloud needs an order.
"""

from __future__ import annotations

import hashlib
import re

from fnplatform.library.specs import IngressRule, NameRule

RULE_ID_LENGTH = 10


def rule_key(rule: IngressRule) -> str:
    """What a rule admits, canonically: ``udp:10000-20000:203.0.113.0/24``."""
    return f"{rule.protocol.lower()}:{rule.from_port}-{rule.to_port}:{rule.source}"


def rule_id(rule: IngressRule) -> str:
    """A short stable id of ``rule``: hex digits of the SHA-256 of :func:`rule_key`."""
    return hashlib.sha256(rule_key(rule).encode()).hexdigest()[:RULE_ID_LENGTH]


def rule_digest(rule: IngressRule) -> int:
    """The rule's hash as an integer, for clouds that place rules in a numbered range."""
    return int(hashlib.sha256(rule_key(rule).encode()).hexdigest(), 16)


def unique_rules(rules: tuple[IngressRule, ...]) -> list[IngressRule]:
    """``rules`` without duplicates (same protocol, ports and source), sorted by id."""
    seen: dict[str, IngressRule] = {}
    for rule in rules:
        seen.setdefault(rule_id(rule), rule)
    return [seen[key] for key in sorted(seen)]


def name_problem(rule: NameRule, value: str) -> str | None:
    """Why ``value`` breaks ``rule``, or None when it fits."""
    if not rule.min_length <= len(value) <= rule.max_length:
        return f"{value!r} has {len(value)} characters; must be {rule.description}"
    if not re.fullmatch(rule.pattern, value):
        return f"{value!r} must be {rule.description}"
    return None
