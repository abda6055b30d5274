"""Nothing is created inside imported infrastructure unless asked for.

The resources listed in ``import.resources`` are adopted (read-only in observe mode, only the
named fields in manage mode: :mod:`fnplatform.importing`); but a composer also composes their
children: subnets, routers and firewalls in an imported network, node pools in an imported
cluster, ProviderConfigs and Helm releases that install into it. Those would be *created
inside* infrastructure that already has its own (with ranges and settings from the module,
not from what is there). :func:`leave_imported_alone` removes, after the composer ran, every
desired resource that uses, references (``*Ref``/``*Refs`` by name) or waits for an imported
resource or such a child, unless it is imported itself or ``import.include`` names it; the
imported resources stop waiting for what was removed. An event lists what was left out and
how to opt in.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, replace
from fnmatch import fnmatchcase
from typing import Any

from fnplatform.composition import Composition
from fnplatform.errors import suggest


def _referenced_names(node: Any) -> Iterator[str]:
    """``metadata.name``s a provider resolves from ``*Ref``/``*Refs`` fields of ``node``."""
    if isinstance(node, dict):
        for key, value in node.items():
            if key.endswith("Ref") and isinstance(value, dict) and "name" in value:
                yield str(value["name"])
            elif key.endswith("Refs") and isinstance(value, list):
                yield from (str(v["name"]) for v in value if isinstance(v, dict) and "name" in v)
            else:
                yield from _referenced_names(value)
    elif isinstance(node, list):
        for item in node:
            yield from _referenced_names(item)


def _needs(comp: Composition) -> dict[str, set[str]]:
    """For each desired resource, the desired resources it uses or references by name."""
    by_name = {e.body["metadata"]["name"]: n for n, e in comp.desired.items()}
    needs = {}
    for name, emitted in comp.desired.items():
        body_spec = emitted.body.get("spec") or {}
        refs = set(_referenced_names(body_spec.get("forProvider")))
        refs |= set(_referenced_names(body_spec.get("initProvider")))
        needed = {by_name[r] for r in refs if r in by_name} | set(emitted.uses)
        needs[name] = needed - {name}
    return needs


def _named_after(name: str, imported: set[str]) -> bool:
    """Whether ``name`` is named as a helper of an imported resource (``cluster-role`` of
    ``cluster``): composers name a resource's own helpers after it."""
    return any(name.startswith(f"{parent}-") for parent in imported)


@dataclass(frozen=True)
class _Adoption:
    """What one pass adopts: the composition, what each desired resource needs, the imported
    resources and those kept beside them (imported, or named by ``import.include``)."""

    comp: Composition
    needs: dict[str, set[str]]
    imported: set[str]
    kept: set[str]


def _children(a: _Adoption) -> set[str]:
    """Desired resources inside the imported ones, or helpers only those need."""
    comp, needs, imported, kept = a.comp, a.needs, a.imported, a.kept
    users: dict[str, set[str]] = {name: set() for name in comp.desired}
    for name, needed in needs.items():
        for used in needed:
            users.setdefault(used, set()).add(name)
    inside = set(imported)
    changed = True
    while changed:
        changed = False
        for name in comp.desired:
            if name in inside or name in kept:
                continue
            # Inside an imported resource, or a helper only something inside needs (the
            # Elastic IP of a NAT gateway in an imported VPC).
            helper_of_inside = bool(users[name]) and users[name] <= inside - imported
            if needs[name] & inside or helper_of_inside:
                inside.add(name)
                changed = True
    return inside - imported


def _held_children(
    comp: Composition, imported: set[str], children: set[str], kept: set[str]
) -> set[str]:
    """Held back (not emitted) because they wait for an imported resource or a child, or
    named as an imported resource's helper (``cluster-addon-coredns``): they would go inside
    too."""
    found: set[str] = set()
    while True:  # transitively: a release waiting for a held pool of an imported cluster
        inside = children | imported | found
        more = {
            name
            for name, hold in comp.notes.held.items()
            if name not in kept
            and name not in found
            and (hold.resources & inside or _named_after(name, imported))
        }
        if not more:
            return found
        found |= more


def _unneeded_helpers(a: _Adoption, dropped: set[str]) -> set[str]:
    """Resources named after an imported one (``cluster-role``, ``cluster-vpc-cni``, GKE's
    ``cluster-webhooks``) that nothing still composed needs: the adopted resource has its own.
    The EKS node role and launch template stay while an opted-in node group needs them."""
    comp, needs, imported, kept = a.comp, a.needs, a.imported, a.kept
    helpers = {
        name for name in comp.desired if name not in kept | dropped and _named_after(name, imported)
    }
    # Held resources count by what they wait for, when opted in (else they go with it).
    needs = {
        **needs,
        **{name: hold.resources for name, hold in comp.notes.held.items() if name in kept},
    }
    needed: set[str] = set()
    pending = [n for n in needs if n not in helpers | dropped | imported]
    while pending:
        for used in needs[pending.pop()] & helpers - needed:
            needed.add(used)
            pending.append(used)
    return helpers - needed


def _used_only_by_the_adopted(a: _Adoption, dropped: set[str]) -> set[str]:
    """What an imported resource uses (the network of an adopted cluster), with that
    resource's own helpers (``network-*``), when nothing still composed needs them.

    The adopted resource already runs on its own: a new VPC, router and NAT beside it would be
    billed and never used. ``import.include`` (or importing them too) keeps
    them; so does anything still composed that needs them (an opted-in node pool needs the
    network's subnets).
    """
    comp, needs, imported, kept = a.comp, a.needs, a.imported, a.kept
    found: set[str] = set()
    while True:
        outside = set(comp.desired) - imported - dropped - found
        used = {d for name in imported for d in needs.get(name, ())} & outside - kept
        more: set[str] = set()
        for dependency in sorted(used):
            family = {n for n in outside - kept if n == dependency or _named_after(n, {dependency})}
            if not any(needs.get(other, set()) & family for other in outside - family):
                more |= family
        if not more:
            return found
        found |= more


def _without_refs_to(node: Any, gone: set[str]) -> Any:
    """``node`` without the ``*Ref``/``*Refs``/``*Selector`` fields naming a resource in
    ``gone`` (by ``metadata.name``): nothing may wait to resolve a resource not composed."""
    if isinstance(node, dict):
        kept: dict[str, Any] = {}
        for key, value in node.items():
            if key.endswith("Ref") and isinstance(value, dict) and value.get("name") in gone:
                continue
            if (
                key.endswith("Refs")
                and isinstance(value, list)
                and any(isinstance(v, dict) and v.get("name") in gone for v in value)
            ):
                continue
            kept[key] = _without_refs_to(value, gone)
        return kept
    if isinstance(node, list):
        return [_without_refs_to(item, gone) for item in node]
    return node


def _warn_unmatched(comp: Composition, include: list[str], composed: list[str]) -> None:
    """A warning for each ``import.include`` entry that names nothing composed: a misspelt
    opt-in would otherwise leave its resource out without a word."""
    for index, pattern in enumerate(include):
        if not any(fnmatchcase(name, pattern) for name in composed):
            comp.event(
                f"spec.parameters.import.include[{index}]: {pattern!r} names no composed "
                f"resource; {suggest(pattern, composed, 'names')}",
                warning=True,
                reason="ImportIncludeUnmatched",
            )


def leave_imported_alone(comp: Composition) -> None:
    """Drop the children of imported resources (see the module docstring)."""
    spec = comp.import_spec
    if not spec.adopting():
        return
    imported = {name for name in spec.resources if name in comp.desired}
    composed = [*comp.desired, *comp.notes.held]
    included = {name for name in composed if spec.includes(name)}
    _warn_unmatched(comp, spec.include, composed)
    kept = imported | included
    adoption = _Adoption(comp, _needs(comp), imported, kept)
    children = _children(adoption)
    children |= _held_children(comp, imported, children, kept)
    helpers = _unneeded_helpers(adoption, children)
    if helpers:  # and what waits for them (a node group for its launch template)
        children |= helpers
        children |= _held_children(comp, imported, children, kept)
    children |= _used_only_by_the_adopted(adoption, children)
    if not children:
        return
    gone = {
        comp.desired[name].body["metadata"]["name"] for name in children if name in comp.desired
    }
    for name in children:
        comp.desired.pop(name, None)
        comp.notes.held.pop(name, None)
    for name, emitted in list(comp.desired.items()):
        body = emitted.body
        if "spec" in body and name in imported:
            body = {**body, "spec": _without_refs_to(body["spec"], gone)}
        if any(u in children for u in emitted.uses) or body is not emitted.body:
            comp.desired[name] = replace(
                emitted, body=body, uses=tuple(u for u in emitted.uses if u not in children)
            )
    comp.event(
        f"Not composed inside or for imported resources ({', '.join(sorted(imported))}): "
        f"{', '.join(sorted(children))}. List any of them in spec.parameters.import.include "
        "to create it anyway.",
        reason="NotComposedInsideImported",
    )


__all__ = ["leave_imported_alone"]
