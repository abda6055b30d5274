"""The preview as text, in crossplane-diff's format
(https://github.com/crossplane-contrib/crossplane-diff, cmd/diff/renderer: diff_renderer.go,
diff_formatter.go), so a reader of crossplane-diff reads it without learning another:

- a section per composite, ``=== Kind/name ===``, ending in ``Summary: ...`` or ``No changes.``;
- a block per composed resource, headed ``+++ Kind/name`` (created), ``~~~ Kind/name``
  (changed), ``--- Kind/name`` (deleted), its YAML with keys sorted and each line prefixed
  ``+ ``, ``- `` or ``  `` (context), a changed one compact with three lines of context and
  ``...`` between hunks (crossplane-diff's ``--compact``), each block closed by ``---``;
- a footer after a line of 80 ``=``: ``Total: ... across N composites (...)``.

What crossplane-diff has no marker for, an upgrade needs: a replaced resource is headed
``-/+ Kind/name``, the marker of Terraform's plan (which the CLI's ``simulate`` design,
https://github.com/crossplane/cli/pull/181, models its plan on), followed by why; a header
names the composition-resource-name in parentheses and calls out a stateful resource (``!
STATEFUL: <what happens to its data>``); a refused composite says ``REFUSED:`` with the fatal
result; the candidate's warnings follow the blocks (``warning:``, ``(new)`` when the running
release did not give it).
"""

from __future__ import annotations

import difflib
import json
from collections.abc import Sequence
from typing import Any

import yaml

from fnplatform.upgrade.inputs import Body
from fnplatform.upgrade.plan import Change, CompositePlan

MARKERS = {"create": "+++", "change": "~~~", "delete": "---", "replace": "-/+"}
CONTEXT_LINES = 3
CHUNK_SEPARATOR = "..."
RULE = "=" * 80


def _yaml_lines(body: Body | None) -> list[str]:
    if body is None:
        return []
    return yaml.safe_dump(body, sort_keys=True, default_flow_style=False, width=100).splitlines()


def diff_lines(before: Body | None, after: Body | None, *, compact: bool) -> list[str]:
    """``before`` to ``after`` as prefixed YAML lines; ``compact``: only the changed lines
    with :data:`CONTEXT_LINES` around them, hunks separated by ``...``."""
    old, new = _yaml_lines(before), _yaml_lines(after)
    if not compact:
        return [f"- {line}" for line in old] + [f"+ {line}" for line in new]
    lines: list[str] = []
    for index, group in enumerate(
        difflib.SequenceMatcher(a=old, b=new, autojunk=False).get_grouped_opcodes(CONTEXT_LINES)
    ):
        if index:
            lines.append(CHUNK_SEPARATOR)
        for tag, i1, i2, j1, j2 in group:
            if tag == "equal":
                lines += [f"  {line}" for line in old[i1:i2]]
                continue
            lines += [f"- {line}" for line in old[i1:i2]]
            lines += [f"+ {line}" for line in new[j1:j2]]
    return lines


def _stateful_note(change: Change) -> str:
    if not change.stateful:
        return ""
    if change.loses_data:
        what = (
            "deleted with its data" if change.action == "delete" else "replaced: its data is lost"
        )
        return f" ! STATEFUL: {what}"
    return " (stateful)"


def change_block(change: Change) -> list[str]:
    """One composed resource's block."""
    header = (
        f"{MARKERS[change.action]} {change.kind}/{change.name} ({change.resource})"
        f"{_stateful_note(change)}"
    )
    lines = [header]
    lines += [f"# {reason}" for reason in change.reasons]
    if change.action == "create":
        lines += diff_lines(None, change.after, compact=False)
    elif change.action == "delete":
        lines += diff_lines(change.before, None, compact=False)
    else:
        lines += diff_lines(change.before, change.after, compact=True)
    lines.append("---")
    return lines


def counts(changes: Sequence[Change]) -> str:
    """``1 added, 2 modified, 1 removed, 1 replaced``, zero categories left out (as
    crossplane-diff's summaryLine); empty when nothing changes."""
    words = (
        ("create", "added"),
        ("change", "modified"),
        ("delete", "removed"),
        ("replace", "replaced"),
    )
    parts = []
    for action, word in words:
        count = sum(1 for c in changes if c.action == action)
        if count:
            parts.append(f"{count} {word}")
    return ", ".join(parts)


def composite_section(plan: CompositePlan) -> list[str]:
    """One composite's section."""
    composite = plan.composite
    form = "namespaced" if composite.namespaced else "cluster-scoped"
    claim = f", claim {composite.claim}" if composite.claim else ""
    lines = [
        f"=== {composite.label} ===",
        f"# {form}{claim}, Composition {composite.composition['metadata']['name']}, "
        f"{len(composite.observed)} composed resources observed",
        "",
    ]
    lines += [
        f"# warning: resourceRef {m} is not in the cluster or export" for m in composite.missing
    ]
    if plan.error is not None:
        return [*lines, f"Error: {plan.error}", ""]
    if plan.refused:
        lines += [f"REFUSED: {message}" for message in plan.refused]
        lines.append(
            "# a fatal result: Crossplane applies nothing of this pass and the composite stops "
            "composing (Synced=False) until the setting is changed"
            + (" (the running release refuses it too)" if plan.refused_before else "")
        )
    for change in plan.changes:
        lines += change_block(change)
    for message, before in plan.warnings:
        lines.append(f"warning: {message}{'' if before else ' (new)'}")
    if plan.refused:
        lines += ["", "Summary: refused", ""]
    elif plan.changes:
        lines += ["", f"Summary: {counts(plan.changes)}{_losses(plan.changes)}", ""]
    else:
        lines += ["No changes.", ""]
    return lines


def _losses(changes: Sequence[Change]) -> str:
    lost = [c.resource for c in changes if c.loses_data]
    return f"; STATEFUL deleted or replaced: {', '.join(lost)}" if lost else ""


def footer(plans: Sequence[CompositePlan]) -> list[str]:
    """The closing line: totals across composites, as crossplane-diff's aggregate footer."""
    changes = [c for p in plans for c in p.changes if p.error is None and not p.refused]
    unchanged = sum(1 for p in plans if p.error is None and not p.refused and not p.changes)
    refused = sum(1 for p in plans if p.refused)
    errors = sum(1 for p in plans if p.error is not None)
    lost = sum(1 for c in changes if c.loses_data)
    qualifiers = [f"{unchanged} unchanged"] if unchanged else []
    qualifiers += [f"{refused} refused"] if refused else []
    qualifiers += [f"{errors} error"] if errors else []
    qualifiers += [f"{lost} stateful deleted or replaced"] if lost else []
    suffix = f" ({', '.join(qualifiers)})" if qualifiers else ""
    noun = "composite" if len(plans) == 1 else "composites"
    return [RULE, f"Total: {counts(changes) or 'no changes'} across {len(plans)} {noun}{suffix}"]


def report(plans: Sequence[CompositePlan]) -> str:
    lines: list[str] = []
    for plan in plans:
        lines += composite_section(plan)
    lines += footer(plans)
    return "\n".join(lines) + "\n"


def as_json(plans: Sequence[CompositePlan]) -> str:
    """The same plan for a program (``--output json``; crossplane-diff's ``-o json`` keeps
    its human output's grouping the same way): per composite its changes, refusal, warnings
    and error, the bodies before and after each change included."""
    composites: list[dict[str, Any]] = []
    for plan in plans:
        composite = plan.composite
        composites.append(
            {
                "apiVersion": composite.body.get("apiVersion"),
                "kind": composite.body.get("kind"),
                "name": composite.metadata.get("name"),
                "namespace": composite.metadata.get("namespace"),
                "uid": composite.metadata.get("uid"),
                "status": (
                    "error"
                    if plan.error is not None
                    else "refused"
                    if plan.refused
                    else "changed"
                    if plan.changes
                    else "unchanged"
                ),
                "error": plan.error,
                "refused": list(plan.refused),
                "refusedBefore": list(plan.refused_before),
                "warnings": [{"message": m, "new": not before} for m, before in plan.warnings],
                "changes": [
                    {
                        "action": c.action,
                        "resource": c.resource,
                        "kind": c.kind,
                        "name": c.name,
                        "exists": c.exists,
                        "stateful": c.stateful,
                        "losesData": c.loses_data,
                        "reasons": list(c.reasons),
                        "before": c.before,
                        "after": c.after,
                    }
                    for c in plan.changes
                ],
            }
        )
    return json.dumps({"composites": composites, "total": footer(plans)[-1]}, indent=2) + "\n"
