"""Dependencies between composed resources: hold dependents back, order deletion with Usages.

``uses=[...]`` on an emitted resource means two things. While a needed resource doesn't exist
yet, the dependent is held back (not created), unless the dependent itself already exists:
an existing resource is never dropped because something upstream is briefly missing. And a
Crossplane ``Usage`` ties the two together, so the needed resource outlives its dependent on
deletion (a node pool is deleted before its cluster), unless the other Usages already imply
that order (:func:`needed_pairs`).

Usages are ``protection.crossplane.io/v1beta1 ClusterUsage``: the
``apiextensions.crossplane.io/v1beta1 Usage`` is deprecated since Crossplane v2.0, and v1
composites are cluster-scoped. A namespaced composite emits the namespaced
``protection.crossplane.io/v1beta1 Usage`` instead (the kinds registry's twin of
``ClusterUsage``, applied by ``emit``); a fetched resource in another namespace is referenced
with its namespace, which a namespaced Usage allows only together with ``by``.

``by`` names the user; ``emit(reasons=...)`` adds why, where the dependency isn't obvious
from the two kinds (a Usage of a fetched resource always says why).
A fetched resource (a required resource, such as a pool another composite owns) can be
protected the same way with :meth:`fnplatform.composition.Composition.protect`.
"""

from __future__ import annotations

from collections.abc import Container, Mapping, Sequence
from typing import Any

from fnplatform.composition import Composition, Emitted
from fnplatform.holds import Wait, waiting_summary
from fnplatform.kinds import Readiness, register
from fnplatform.naming import dns_label

USAGE = register(
    "protection.crossplane.io/v1beta1", "ClusterUsage", managed=False, readiness=Readiness.EXISTS
)
#: On a Usage protecting a fetched resource: which one (:func:`protects`), so any composite can
#: ask Crossplane who else protects it (an exclusively held pool, see the openstack module).
PROTECTS_LABEL = "platform.fn.crossplane.io/protects"


def protects(resource: Mapping[str, Any]) -> str:
    """The :data:`PROTECTS_LABEL` value of Usages protecting ``resource``: kind and name."""
    return dns_label(
        str(resource.get("kind", "")).lower(), str((resource.get("metadata") or {}).get("name", ""))
    )


def hold_unmet(comp: Composition) -> None:
    """Remove dependents whose needs aren't met yet, until nothing more changes."""
    changed = True
    while changed:
        changed = False
        for emitted in list(comp.desired.values()):
            if emitted.name in comp.observed:
                continue
            missing = [u for u in emitted.uses if u not in comp.desired or u not in comp.observed]
            if missing:
                del comp.desired[emitted.name]
                comp.hold(emitted.name, *(Wait(used) for used in sorted(missing)))
                changed = True
        for name in list(comp.notes.held):
            comp.desired.pop(name, None)


def usage_name(used: str, user: str) -> str:
    """The composed-resource name of the Usage that keeps ``used`` while ``user`` exists."""
    return f"usage-{used}-by-{user}"


def needed_pairs(
    pairs: Sequence[tuple[str, str]],
    exists: Container[str] | None = None,
) -> list[tuple[str, str]]:
    """The ``(used, user)`` pairs deletion order needs: ``pairs`` without those implied by
    the others (their transitive reduction), in the order given.

    Why: a Usage only orders deletion, and that order is transitive. If A uses B and B uses
    C, C can't go before B nor B before A, so a Usage "C by A" orders nothing more, yet costs
    the control plane as much as any other: Crossplane applies every Usage on every composite
    reconcile, and core v2.4.0's Usage reconciler GETs the used resource and UPDATEs it (the
    in-use label: ``!used.OwnedBy(uu.GetUID())`` is always true for a composed resource, so
    every poll writes) and GETs the user on every poll
    (``internal/controller/protection/usage/reconciler.go``, ``Reconcile``, around
    L468-L510). On the goldens this drops 89 of 507 Usages between composed resources.

    Only this pass's ``pairs`` count as paths, and only through resources in ``exists`` (the
    observed ones; all when None): when the composite is deleted, a Usage whose user is not
    found goes at once (the same file's ``meta.WasDeleted`` branch), so it holds nothing. When
    the resource in between is held back (not desired) or missing (deleted from under a
    composite whose other resources stay), the direct pair is kept and deletion stays
    ordered meanwhile. Composing from scratch changes nothing: a resource is desired only
    once what it uses exists (``hold_unmet``), so everything below it exists already.

    How: Kahn's topological order over the users, then from the leaves up, each node's
    descendants as an int bitset; a pair is redundant when ``used`` is a descendant of
    another of ``user``'s direct needs. One pass over the pairs, each an OR of bitsets a
    few machine words wide (graphs have at most a few hundred pairs). On a cycle (which
    would deadlock deletion anyway, and which ``hold_unmet`` lets through only once one of
    its resources exists) the reduction isn't unique and dropping a pair could lose an
    order, so nothing is dropped.
    """
    needs: dict[str, list[str]] = {}
    for used, user in pairs:
        if used != user:
            needs.setdefault(user, []).append(used)
            needs.setdefault(used, [])
    # Kahn's algorithm on "user before used": a node is next once every user of it is placed
    # (a repeated pair counts once more on both sides).
    users_left: dict[str, int] = {}
    for needed in needs.values():
        for used in needed:
            users_left[used] = users_left.get(used, 0) + 1
    order = [name for name in needs if name not in users_left]
    for name in order:  # grows while iterating: order is the topological order
        for used in needs[name]:
            left = users_left[used] - 1
            users_left[used] = left
            if not left:
                order.append(used)
    if len(order) < len(needs):
        return list(pairs)  # a cycle: keep every pair (see above)
    bit: dict[str, int] = {}
    below: dict[str, int] = {}  # name -> bitset of everything it reaches, itself excluded
    implied: dict[str, int] = {}  # user -> bitset of what it reaches through another need
    for index, name in enumerate(reversed(order)):  # leaves first
        bit[name] = 1 << index
        through = direct = 0
        for used in needs[name]:
            if exists is None or used in exists:
                through |= below[used]
            direct |= bit[used]
        implied[name] = through
        below[name] = through | direct
    return [(used, user) for used, user in pairs if used == user or not implied[user] & bit[used]]


def add_usages(comp: Composition) -> None:
    """Emit a Usage for every dependency between two desired resources that deletion order
    needs (:func:`needed_pairs`), and for every fetched resource the composer protects.

    A dropped pair's ``reason`` isn't moved to the kept path: a Usage's reason is only the
    ``crossplane.io/usage-details`` annotation of that Usage (and with ``by`` set, Crossplane's
    deletion webhook names the user, never the reason: ``internal/webhook/protection/usage/
    handler.go``, ``inUseMessage``), so it explains that one pair. The used resource is then
    held by the last Usage of the kept path, which carries its own user's reason, if any."""
    pairs = [(u, e.name) for e in comp.desired.values() for u in e.uses if u in comp.desired]
    for used_name, by in needed_pairs(pairs, comp.observed):
        user = comp.desired[by]
        used = comp.desired[used_name].body
        spec: dict[str, Any] = {"of": _reference(used), "by": _reference(user.body)}
        if used_name in user.reasons:  # ``by`` already says who; a reason says why, if given
            spec["reason"] = user.reasons[used_name]
        comp.emit(
            usage_name(used_name, user.name),
            USAGE.new(None, **spec, replayDeletion=True),
            ready=True,
        )
    for fetched, user_name, reason, as_name in comp.notes.protected:
        protector = comp.desired.get(user_name) if user_name else None
        if user_name and protector is None:
            continue  # the user is held back: nothing to protect against yet
        of = _reference(fetched)
        name = usage_name(
            as_name or f"{str(fetched['kind']).lower()}-{fetched['metadata']['name']}",
            user_name or comp.name,
        )
        if comp.namespaced and not _namespaced_reference(comp, name, fetched, of, protector):
            continue
        spec = {"of": of, "reason": reason}
        if protector is not None:
            spec["by"] = _reference(protector.body)
            spec["replayDeletion"] = True
        body = USAGE.new(None, **spec)
        body["metadata"] = {"labels": {PROTECTS_LABEL: protects(fetched)}}
        comp.emit(name, body, ready=True)


def _reference(body: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "apiVersion": body["apiVersion"],
        "kind": body["kind"],
        "resourceRef": {"name": body["metadata"]["name"]},
    }


def _namespaced_reference(
    comp: Composition,
    name: str,
    fetched: Mapping[str, Any],
    of: dict[str, Any],
    protector: Emitted | None,
) -> bool:
    """Make ``of`` valid in the namespaced Usage ``name``; False (and named) when it can't be."""
    namespace = (fetched.get("metadata") or {}).get("namespace")
    subject = f"{fetched.get('kind')} {fetched['metadata']['name']}"
    if not namespace:
        comp.notes.unexpressed[name] = f"a namespaced Usage can't protect cluster-scoped {subject}"
        return False
    if namespace != comp.namespace:
        if protector is None:
            comp.notes.unexpressed[name] = (
                f"a namespaced Usage of {subject} in namespace {namespace} needs a user (by)"
            )
            return False
        of["resourceRef"]["namespace"] = namespace
    return True


__all__ = [
    "PROTECTS_LABEL",
    "Emitted",
    "add_usages",
    "hold_unmet",
    "needed_pairs",
    "protects",
    "usage_name",
    "waiting_summary",
]
