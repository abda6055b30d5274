"""Conditions that vouch for a control: True only while what implements it is Synced and Ready.

A condition such as contact-center's ``Compliant`` or the environment's ``PartsReady`` tells an
auditor or an operator that something holds: recordings encrypted at rest, never public, every
part of an environment serving. What makes it hold is a set of composed resources (the KMS key
and the bucket's encryption configuration; the public access block). Composing them is only
intent: the provider may not have created one yet (not Ready), or may be unable to apply it
(``Synced=False``: the cloud refused it, and the resource keeps whatever it had before, if
anything). So a module declares its controls as data, :class:`Control` (the words the condition
lists, and the composition names of the resources implementing it), and :func:`assess` decides
each one from observed state by one rule:

- a resource whose ``Synced`` condition is False fails the control (``ControlFailing``);
- a resource not created yet (held back, or not observed) or not Ready (the kind's readiness
  rule, :func:`fnplatform.rules.readiness.ready_now`, as the composite's own readiness reads
  it)
  leaves the control not verified (``ControlNotVerified``);
- only when every implementing resource is Synced and Ready is the control met.

Every read goes through ``comp.observed``, so a reused pass (:mod:`fnplatform.engine.reuse`) is one
whose resources report the same conditions.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from fnplatform.kinds import Readiness, kind_of
from fnplatform.rules.readiness import ready_now

if TYPE_CHECKING:
    from fnplatform.composition import Composition

#: The condition's reason when a resource implementing a control reports ``Synced=False``.
FAILING = "ControlFailing"
#: The condition's reason when a resource implementing a control is not created or not Ready.
NOT_VERIFIED = "ControlNotVerified"
#: A name in :attr:`Control.resources` ending in this matches every composed name starting
#: with what precedes it (``sip-ingress-*``: the rules named after their content).
ANY = "*"
#: How much of a provider's message a shortfall quotes (a condition message stays readable).
QUOTED = 240


@dataclass(frozen=True)
class Control:
    """A control a condition vouches for: the words it lists (``name``) and the composition
    names of the resources implementing it (``resources``; ``<prefix>*`` matches by prefix).

    Every resource named must be composed, Synced and Ready, and so must every composed
    resource a prefix matches; a control must stand for at least one resource. A module lists
    only what it composes on the placed cloud and configuration (a cloud that cannot provide a
    control says so in a gap condition, and the control is not listed).
    """

    name: str
    resources: tuple[str, ...]


@dataclass(frozen=True)
class Shortfall:
    """Why ``control`` is not met: composed resource ``resource`` is ``failing``
    (``Synced=False``) or not verified yet, ``why`` in words."""

    control: str
    resource: str
    failing: bool
    why: str


@dataclass(frozen=True)
class Verdict:
    """What :func:`assess` found: the controls met, in the order declared, and every
    shortfall of the others."""

    met: tuple[str, ...]
    shortfalls: tuple[Shortfall, ...]

    @property
    def ok(self) -> bool:
        """Whether every control is met."""
        return not self.shortfalls

    @property
    def failing(self) -> bool:
        """Whether a resource implementing a control reports ``Synced=False``."""
        return any(s.failing for s in self.shortfalls)

    @property
    def reason(self) -> str:
        """The condition's reason when not every control is met."""
        return FAILING if self.failing else NOT_VERIFIED

    @property
    def unmet(self) -> tuple[str, ...]:
        """The controls not met, in the order declared."""
        return tuple(dict.fromkeys(s.control for s in self.shortfalls))

    def summary(self) -> str:
        """``failing: <control> [<resource>: <why>]; not verified: ...`` and what is in force.

        Each control names its first failing (else first unverified) resource and how many
        more there are: the resource to look at, in a message that stays short.
        """
        parts = []
        for failing, label in ((True, "failing"), (False, "not verified")):
            listed = []
            for control in self.unmet:
                own = [s for s in self.shortfalls if s.control == control]
                if any(s.failing for s in own) is not failing:
                    continue
                first = next(s for s in own if s.failing is failing)
                more = f"; and {len(own) - 1} more" if len(own) > 1 else ""
                listed.append(f"{control} [{first.resource}: {first.why}{more}]")
            if listed:
                parts.append(f"{label}: {'; '.join(listed)}")
        message = ". ".join(parts)
        if self.met:
            message += f". In force: {'; '.join(self.met)}"
        return message


def assess(comp: Composition, controls: Iterable[Control]) -> Verdict:
    """Each control met or not, by the rule of this module, from what ``comp`` composed and
    observed. Call it once the composer has emitted (or held) everything."""
    met: list[str] = []
    shortfalls: list[Shortfall] = []
    for control in controls:
        found = [
            Shortfall(control.name, name, failing, why)
            for name, failing, why in _unmet(comp, control)
        ]
        if found:
            shortfalls.extend(found)
        else:
            met.append(control.name)
    return Verdict(tuple(met), tuple(shortfalls))


def vouch(
    comp: Composition,
    condition: str,
    controls: Sequence[Control],
    *,
    reason: str,
    message: str | None = None,
    not_verified: str = NOT_VERIFIED,
) -> Verdict:
    """Set ``condition``: True with ``reason`` and ``message`` (default: the controls, ``; ``
    between) when every control is met, else False naming each control not met and its
    resource (reason :data:`FAILING`, or ``not_verified``). Returns the verdict."""
    verdict = assess(comp, controls)
    if verdict.ok:
        comp.condition(
            condition, True, reason, "; ".join(verdict.met) if message is None else message
        )
    else:
        comp.condition(
            condition, False, FAILING if verdict.failing else not_verified, verdict.summary()
        )
    return verdict


def _unmet(comp: Composition, control: Control) -> list[tuple[str, bool, str]]:
    """``(resource, failing, why)`` of each resource implementing ``control`` that does not
    do its part now, failing ones first."""
    found: list[tuple[str, bool, str]] = []
    for name in _implementing(comp, control):
        shortfall = resource_shortfall(comp, name)
        if shortfall is not None:
            found.append((name, *shortfall))
    found.sort(key=lambda item: not item[1])  # stable: failing first, else as declared
    return found


def _implementing(comp: Composition, control: Control) -> list[str]:
    """The composition names ``control``'s resources stand for here, in the order declared.

    A name is checked whether or not it is composed (not composed: not created); a prefix
    stands for every composed or observed resource it starts (none is fine beside a name: a
    helper this configuration does without). A control
    whose prefixes match nothing and that names nothing else stands for its first prefix,
    unmet (a control declaring no resource at all stands for :data:`ANY`): nothing composed
    is no proof.
    """
    composed = set(comp.desired) | set(comp.notes.held)
    names: list[str] = []
    for resource in control.resources:
        if resource.endswith(ANY):
            prefix = resource[: -len(ANY)]
            names.extend(
                sorted(n for n in composed | _observed_names(comp, prefix) if n.startswith(prefix))
            )
        else:
            names.append(resource)
    if not names:
        names.append(control.resources[0] if control.resources else ANY)
    return list(dict.fromkeys(names))


def _observed_names(comp: Composition, prefix: str) -> set[str]:
    """Observed composed names starting with ``prefix`` (an implementing resource the
    composite no longer composes still implements until it is gone)."""
    return {name for name in comp.observed if name.startswith(prefix)}


def resource_shortfall(comp: Composition, name: str) -> tuple[bool, str] | None:
    """``(failing, why)`` when composed resource ``name`` does not do its part now: it reports
    ``Synced=False`` (failing), or is not created, or not Ready; None when Synced and Ready."""
    if name.endswith(ANY):
        return False, "nothing composed implements it yet"
    if name in comp.notes.held:
        return False, f"not created yet (waits for {comp.notes.held[name]})"
    if name not in comp.observed:
        return False, "not created yet" if name in comp.desired else "not composed"
    conditions = {
        type_: (status, reason, message)
        for type_, status, reason, message in comp.observed.conditions_of(name)
    }
    synced = conditions.get("Synced")
    if synced is not None and synced[0] == "False":
        return True, f"Synced=False: {_quoted(synced)}"
    emitted = comp.desired.get(name)
    explicit = emitted.ready if emitted is not None else None
    exists_ready = (
        kind_of(emitted.body).readiness is Readiness.EXISTS
        if emitted is not None
        else _exists_ready(comp, name)
    )
    if ready_now(comp.observed, name, explicit, exists_ready):
        return None
    ready = conditions.get("Ready")
    return False, "Ready not reported yet" if ready is None else f"not Ready: {_quoted(ready)}"


def _exists_ready(comp: Composition, name: str) -> bool:
    """Whether observed ``name`` (no longer desired) is of a kind Ready by existing."""
    api_version, kind = comp.observed.type_of(name)
    return kind_of({"apiVersion": api_version, "kind": kind}).readiness is Readiness.EXISTS


def _quoted(condition: tuple[str, str, str]) -> str:
    """``reason: message`` of an observed condition, cut to :data:`QUOTED` characters."""
    status, reason, message = condition
    text = ": ".join(part for part in (reason, message) if part) or status or "Unknown"
    return text if len(text) <= QUOTED else text[: QUOTED - 3] + "..."
