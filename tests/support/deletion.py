"""Play Crossplane's deletion of a composite from its desired resources and ClusterUsages.

When a composite is deleted, Crossplane deletes every composed resource at once; a
``ClusterUsage`` refuses the deletion of its ``of`` while its ``by`` exists, and the Usage
itself goes when its ``by`` is gone. :func:`deletion_rounds` replays that in rounds: each round
deletes every resource no living user holds. It fails on a cycle (nothing deletable, something
left). :func:`deletion_order` is what the Usages imply: every ``(of, by)`` where ``of`` outlives
``by``, directly or through other Usages (the function emits only the Usages that order
needs, so a test of "X goes before Y" asks this, not for one Usage).
:func:`credential_violations` then checks that no resource lost its credentials first:
a resource's composed ProviderConfig, and whatever writes the kubeconfig Secret that
ProviderConfig reads, must both be deleted in a later round than the resource.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

Body = dict[str, Any]
USAGE_KINDS = {
    ("protection.crossplane.io/v1beta1", "ClusterUsage"),
    ("protection.crossplane.io/v1beta1", "Usage"),
    ("apiextensions.crossplane.io/v1beta1", "Usage"),
}


def _key(api_version: str, kind: str, name: str) -> tuple[str, str, str]:
    return (api_version, kind, name)


def _is_usage(body: Mapping[str, Any]) -> bool:
    return (str(body.get("apiVersion")), str(body.get("kind"))) in USAGE_KINDS


def usage_edges(resources: Mapping[str, Body]) -> list[tuple[str, str]]:
    """``(of, by)`` composition-name pairs of every Usage between two composed resources
    (Usages protecting a fetched resource from a composed user are not edges here)."""
    by_key = {
        _key(b["apiVersion"], b["kind"], b["metadata"]["name"]): name
        for name, b in resources.items()
    }
    edges = []
    for body in resources.values():
        if not _is_usage(body):
            continue
        spec = body["spec"]
        of, by = spec.get("of"), spec.get("by")
        if not of or not by:
            continue
        of_name = by_key.get(_key(of["apiVersion"], of["kind"], of["resourceRef"]["name"]))
        by_name = by_key.get(_key(by["apiVersion"], by["kind"], by["resourceRef"]["name"]))
        assert by_name, f"a Usage names a user that is not composed: {spec}"
        if of_name is None:
            # comp.protect: the ``of`` is a fetched resource (a shared pool), not composed
            # here; it outlives this composite's user and orders nothing among its resources.
            continue
        edges.append((of_name, by_name))
    return edges


def deletion_order(resources: Mapping[str, Body]) -> set[tuple[str, str]]:
    """``(of, by)`` for every ``of`` the Usages keep until ``by`` is gone, directly or
    transitively (the transitive closure of :func:`usage_edges`)."""
    below: dict[str, set[str]] = {}
    for of, by in usage_edges(resources):
        below.setdefault(by, set()).add(of)
    order = set()
    for by, direct in below.items():
        seen: set[str] = set()
        stack = list(direct)
        while stack:
            of = stack.pop()
            if of not in seen:
                seen.add(of)
                stack.extend(below.get(of, ()))
        order |= {(of, by) for of in seen}
    return order


def deletion_rounds(resources: Mapping[str, Body]) -> dict[str, int]:
    """The round in which each non-Usage resource is deleted; AssertionError on a cycle."""
    edges = usage_edges(resources)
    alive = {name for name, body in resources.items() if not _is_usage(body)}
    rounds: dict[str, int] = {}
    round_no = 0
    while alive:
        held = {of for of, by in edges if by in alive and of != by}
        deletable = alive - held
        assert deletable, f"deletion cycle: {sorted(alive)} all hold each other"
        for name in deletable:
            rounds[name] = round_no
        alive -= deletable
        round_no += 1
    return rounds


def _provider_group(api_version: str) -> str:
    return api_version.split("/", 1)[0]


def credential_violations(resources: Mapping[str, Body], rounds: Mapping[str, int]) -> list[str]:
    """Resources deleted no earlier than the composed ProviderConfig or kubeconfig writer they
    need to reach their API (so their deletion could never finish)."""
    configs: dict[tuple[str, str], str] = {}
    for name, body in resources.items():
        if body.get("kind") in ("ProviderConfig", "ClusterProviderConfig"):
            configs[(_provider_group(body["apiVersion"]), body["metadata"]["name"])] = name
    writers: dict[tuple[str, str], str] = {}
    for name, body in resources.items():
        ref = (body.get("spec") or {}).get("writeConnectionSecretToRef")
        if ref:
            writers[(str(ref.get("namespace", "")), str(ref["name"]))] = name
    problems = []
    for name, body in resources.items():
        if name not in rounds:
            continue
        ref = ((body.get("spec") or {}).get("providerConfigRef") or {}).get("name")
        config = configs.get((_provider_group(body["apiVersion"]), str(ref)))
        if config is None:
            continue  # an environment ProviderConfig: not this composite's to delete
        if rounds[config] <= rounds[name]:
            problems.append(f"{name} outlives its ProviderConfig {config}")
        secret = ((resources[config].get("spec") or {}).get("credentials") or {}).get("secretRef")
        if not secret:
            continue
        writer = writers.get((str(secret.get("namespace", "")), str(secret["name"])))
        if writer is not None and rounds[writer] <= rounds[name]:
            problems.append(f"{name} outlives {writer}, which writes its kubeconfig")
    return sorted(problems)
