"""What the upgrade changes for one composite: the candidate's render against the running one's.

Both functions render the composite's real observed state, so what differs between the two
renders is what the upgrade does, and nothing else (a resource drifting from what the running
release desires is the running release's to fix, not the upgrade's). Per
composition-resource-name, with Crossplane v2.4's rules (docs/upgrading.md):

- **create**: the candidate desires it, the running release does not;
- **delete**: the running release desires it, the candidate does not: Crossplane's garbage
  collector deletes the observed resource (``DeletingComposedResourceGarbageCollector``);
- **replace**: desired by both, but another kind or API group, another external name
  (``crossplane.io/external-name``, or the one the running release set no longer set), or
  another value of a field the cloud cannot change in place (:mod:`.immutable`): the cloud
  resource is replaced, or the provider refuses the change;
- **change**: desired by both with other fields, updated in place.

A composite the candidate answers with a fatal result is **refused**: Crossplane applies
nothing of that pass and the composite stops composing. A delete or replace of an existing
stateful resource (:func:`fnplatform.kinds.is_stateful`: databases, buckets, keys, clusters,
queues) loses data.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any, Literal

from fnplatform.composers import composers
from fnplatform.kinds import is_stateful
from fnplatform.upgrade.immutable import changed_fields, group_of
from fnplatform.upgrade.inputs import COMPOSITION_RESOURCE_NAME, Body, Composite
from fnplatform.upgrade.render import Rendered

EXTERNAL_NAME = "crossplane.io/external-name"
Action = Literal["create", "change", "delete", "replace"]
#: What crossplane-diff leaves out of a diff (cmd/diff/renderer/diff_formatter.go,
#: cleanupForDiff): server-side metadata, the owner, and status.
SERVER_METADATA = (
    "resourceVersion",
    "uid",
    "generation",
    "creationTimestamp",
    "managedFields",
    "selfLink",
    "ownerReferences",
)


@dataclass(frozen=True)
class Change:
    """One composed resource the upgrade touches."""

    action: Action
    resource: str  # composition-resource-name
    kind: str
    name: str  # metadata.name, ``<resource>-(generated)`` for one not created yet
    exists: bool  # observed: it exists in the cluster
    stateful: bool
    reasons: tuple[str, ...]
    before: Body | None  # the running release's (or the observed) body, cleaned
    after: Body | None  # the candidate's body, cleaned

    @property
    def loses_data(self) -> bool:
        """A stateful resource that exists is deleted or replaced."""
        return self.stateful and self.exists and self.action in ("delete", "replace")


@dataclass(frozen=True)
class CompositePlan:
    """What the upgrade does to one composite."""

    composite: Composite
    changes: tuple[Change, ...] = ()
    #: The candidate's warnings, each with whether the running release gave it too.
    warnings: tuple[tuple[str, bool], ...] = ()
    refused: tuple[str, ...] = ()
    #: The running release refuses it already (a composite stuck before the upgrade).
    refused_before: tuple[str, ...] = ()
    error: str | None = None


def cleaned(body: Body) -> Body:
    """``body`` as crossplane-diff compares it: no server-side metadata, no status."""
    out = copy.deepcopy(body)
    out.pop("status", None)
    metadata = out.get("metadata") or {}
    for field in SERVER_METADATA:
        metadata.pop(field, None)
    return out


def _type(body: Body) -> str:
    return f"{body.get('kind')}.{group_of(str(body.get('apiVersion', '')))}"


def _external_name(body: Body) -> Any:
    return ((body.get("metadata") or {}).get("annotations") or {}).get(EXTERNAL_NAME)


def replacements(before: Body, after: Body, live: Body) -> list[str]:
    """Why ``after`` replaces the existing resource (``live``) that ``before`` describes, if it
    does. The external name is the running release's, else the one the provider set on
    ``live``: a candidate that sets another makes the provider look for another resource."""
    reasons: list[str] = []
    if _type(before) != _type(after):
        reasons.append(f"kind {_type(before)} becomes {_type(after)}")
        return reasons
    set_by_release, new = _external_name(before), _external_name(after)
    old = set_by_release if set_by_release is not None else _external_name(live)
    if new is not None and old is not None and new != old:
        reasons.append(f"external name {old!r} becomes {new!r}")
    elif new is None and set_by_release is not None:
        reasons.append(f"external name {set_by_release!r} is no longer set")
    for path, was, now, source in changed_fields(before, after):
        reasons.append(f"{path} {was!r} becomes {now!r} (immutable: {source})")
    return reasons


def compare(composite: Composite, running: Rendered, candidate: Rendered) -> CompositePlan:
    """The plan of one composite from its two renders."""
    composers()  # every cloud's kinds registered: is_stateful reads their traits
    seen = set(running.warnings)
    warnings = tuple((w, w in seen) for w in candidate.warnings)
    if candidate.fatal:
        return CompositePlan(
            composite, warnings=warnings, refused=candidate.fatal, refused_before=running.fatal
        )
    observed = {
        str(((b.get("metadata") or {}).get("annotations") or {})[COMPOSITION_RESOURCE_NAME]): b
        for b in composite.observed
    }
    changes = []
    for resource in sorted(set(running.composed) | set(candidate.composed)):
        was, now = running.composed.get(resource), candidate.composed.get(resource)
        live = observed.get(resource)
        if was is None and now is not None and live is not None:
            was = live  # the running release would delete it; the candidate keeps it
        some = now if now is not None else was
        assert some is not None
        name = str((live or some).get("metadata", {}).get("name") or f"{resource}-(generated)")
        stateful = is_stateful(live or some)
        exists = live is not None
        if was is None:
            action: Action = "create"
            reasons: list[str] = []
        elif now is None:
            action, reasons = "delete", []
            if not exists:
                reasons = ["not created yet: the candidate no longer creates it"]
        else:
            reasons = replacements(was, now, live) if live is not None else []
            if reasons:
                action = "replace"
            elif cleaned(was) != cleaned(now):
                action = "change"
            else:
                continue
        changes.append(
            Change(
                action=action,
                resource=resource,
                kind=str(some.get("kind")),
                name=name,
                exists=exists,
                stateful=stateful,
                reasons=tuple(reasons),
                before=cleaned(was) if was is not None else None,
                after=cleaned(now) if now is not None else None,
            )
        )
    return CompositePlan(
        composite, changes=tuple(changes), warnings=warnings, refused_before=running.fatal
    )
