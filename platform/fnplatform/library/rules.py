"""Identity of ingress rules and buckets' naming rule checks: the cloud-agnostic part.

A rule's composed name comes from what it admits (protocol, ports, source), never from its
position in the user's list, so adding one trusted range never renames, replaces or briefly
drops every later rule. The same hash orders rules wherever a cloud needs an order.
"""

from __future__ import annotations

import functools
import hashlib
import re
from dataclasses import dataclass

from fnplatform.api.validation import ip_network
from fnplatform.errors import SpecError
from fnplatform.library.ingress import IngressRule

PROTOCOLS = ("tcp", "udp")

RULE_ID_LENGTH = 10


@dataclass(frozen=True)
class NameRule:
    """What a cloud accepts as a name: a composer validates user-chosen names against it."""

    pattern: str  # a full-match regular expression
    min_length: int
    max_length: int
    description: str  # for error messages: "3-63 lowercase letters, digits, '-' and '.'"


def rule_key(rule: IngressRule) -> str:
    """What a rule admits, canonically: ``udp:10000-20000:203.0.113.0/24``."""
    return f"{rule.protocol.lower()}:{rule.from_port}-{rule.to_port}:{rule.source}"


@functools.lru_cache(maxsize=4096)  # every pass names (and sorts) every rule again
def rule_id(rule: IngressRule) -> str:
    """A short stable id of ``rule``: hex digits of the SHA-256 of :func:`rule_key`."""
    return hashlib.sha256(rule_key(rule).encode()).hexdigest()[:RULE_ID_LENGTH]


def rule_digest(rule: IngressRule) -> int:
    """The rule's hash as an integer, for clouds that place rules in a numbered range."""
    return int(hashlib.sha256(rule_key(rule).encode()).hexdigest(), 16)


def unique_rules(rules: tuple[IngressRule, ...]) -> list[IngressRule]:
    """``rules`` checked, without duplicates (same protocol, ports and source), sorted by id.

    A SpecError on ``rules`` names the first bad rule by its index.
    """
    seen: dict[str, IngressRule] = {}
    for index, rule in enumerate(rules):
        _check(index, rule)
        seen.setdefault(rule_id(rule), rule)
    return [seen[key] for key in sorted(seen)]


def _check(index: int, rule: IngressRule) -> None:
    if rule.protocol.lower() not in PROTOCOLS:
        raise SpecError("rules", f"rule {index}: protocol {rule.protocol!r} is not tcp or udp")
    if not 1 <= rule.from_port <= rule.to_port <= 65535:
        raise SpecError(
            "rules",
            f"rule {index}: ports {rule.from_port}-{rule.to_port} are not "
            "a range within 1-65535, low to high",
        )
    try:
        ip_network(rule.source, strict=False)
    except ValueError:
        raise SpecError("rules", f"rule {index}: {rule.source!r} is not a CIDR range") from None


def name_problem(rule: NameRule, value: str) -> str | None:
    """Why ``value`` breaks ``rule``, or None when it fits."""
    if not rule.min_length <= len(value) <= rule.max_length:
        return f"{value!r} has {len(value)} characters; must be {rule.description}"
    if not re.fullmatch(rule.pattern, value):
        return f"{value!r} must be {rule.description}"
    return None


def check_name(rule: NameRule, value: str, attribute: str) -> str:
    """``value``, refused with :func:`name_problem`'s reason as a :class:`SpecError` on the
    spec's ``attribute`` (which the call maps to the user's field) when it breaks ``rule``:
    the one refusal of a cloud name for every builder (S3, GCS, Azure storage accounts)."""
    problem = name_problem(rule, value)
    if problem:
        raise SpecError(attribute, problem)
    return value
