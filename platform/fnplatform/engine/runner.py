"""One pass of composition: environment, composer, dependencies, guards, response.

The response starts from the request's desired state and context (``response.to``), so what
earlier pipeline steps produced is never dropped.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from crossplane.function import response
from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from google.protobuf import duration_pb2

from fnplatform.api.step_input import Input, PhaseTTL
from fnplatform.composers import Composer
from fnplatform.composition import Composition
from fnplatform.composition.namespaced import CONDITION as NAMESPACED_FORM
from fnplatform.composition.namespaced import settle_secret_refs, unexpressed_summary
from fnplatform.engine.environment_configs import (
    CONTEXT_KEY,
    merge_environment,
    requirements_of,
    selections,
)
from fnplatform.engine.reuse import (
    DONE,
    NOT_YET,
    PASSES,
    PENDING,
    Probe,
    Settled,
    SettledResource,
)
from fnplatform.errors import CompositionError, InputError, NotYet, Pending
from fnplatform.holds import WAITING, waiting_summary
from fnplatform.importing import check_import_names
from fnplatform.merge import deep_merge
from fnplatform.observation.resources import ObservedResources
from fnplatform.request.requirements import declare, fetched
from fnplatform.request.structs import dict_to_struct, fill_struct, resource_entry, struct_to_dict
from fnplatform.rules.dependencies import add_usages, hold_unmet
from fnplatform.rules.guard import announce_removals
from fnplatform.rules.inside_imported import leave_imported_alone
from fnplatform.rules.readiness import exists_is_ready, ready_now

COMPOSED_CONDITION = "Composed"
CAPABILITY_GAPS = "CapabilitiesAvailable"


@dataclass(frozen=True, slots=True)
class Call:
    """One RunFunction call as the runner composes it, built once by its caller
    (``function.dispatch``) and read by nothing but :func:`compose`.

    ``composite`` is the composite as the composer reads it (``function.dispatch`` leaves out
    the spec fields its API does not define); ``probe`` is what
    :meth:`fnplatform.engine.reuse.PassMemo.probe` learned of the request: whether a pass is
    reused is known before composing, so the server can choose where to compose.
    """

    request: fnv1.RunFunctionRequest
    step: Input
    composer: Composer
    composite: dict[str, Any]
    probe: Probe

    @classmethod
    def of(
        cls,
        request: fnv1.RunFunctionRequest,
        step: Input,
        composer: Composer,
        *,
        raw: bytes | None = None,
        composite: dict[str, Any] | None = None,
    ) -> Call:
        """The call composing ``request`` with ``composer``, probed for a pass to reuse.

        ``raw``: the bytes ``request`` was parsed from, when there are any (cheap byte searches
        then stand in for protobuf walks, :func:`fnplatform.observation.resources.none_false`);
        ``composite`` defaults to the request's own.
        """
        if composite is None:
            composite = struct_to_dict(request.observed.composite.resource)
        return cls(request, step, composer, composite, PASSES.probe(composer, request, raw))


@dataclass(frozen=True, slots=True)
class Reply:
    """What :func:`compose` answers a :class:`Call`: the response, and whether its pass was
    reused rather than composed (every observed field it read was unchanged)."""

    response: fnv1.RunFunctionResponse
    reused: bool = False


def compose(
    call: Call,
    ttl: PhaseTTL = PhaseTTL(),  # noqa: B008 - frozen, shared safely
    wire: dict[str, bytes] | None = None,
) -> Reply:
    """Run ``call``'s composer for its request; CompositionErrors propagate for the caller to
    report.

    The response's TTL follows the phase (:func:`set_ttl`): short while anything waits.
    With ``wire``, the composed resources go there as wire bytes instead of into the
    response (see :func:`write`).
    """
    request, step = call.request, call.step
    rsp = response.to(request)
    set_ttl(rsp, step.ttl_for(False, ttl))
    composite = call.composite
    selected = selections(step, composite)
    environment_requirements = requirements_of(selected)
    declare(rsp, environment_requirements)
    context = struct_to_dict(request.context) if request.HasField("context") else {}
    env = merge_environment(
        selected,
        {r.key: fetched(request, r.key) for r in environment_requirements},
        context.get(CONTEXT_KEY) or {},
    )
    if env.pending:
        return Reply(rsp)
    if step.environment:
        # What ``rsp.context.update({CONTEXT_KEY: env.data})`` does (clear, then fill the
        # Struct), through the Struct encoder: ``Struct.update`` sets every field in Python.
        fill_struct(rsp.context.fields[CONTEXT_KEY].struct_value, env.data)
    composer, probe = call.composer, call.probe
    settled = PASSES.settle(
        composer,
        probe,
        lambda read: settle(Composition(request, step, env.data, composite, read), composer),
    )
    reply = Reply(rsp, probe.reused)
    if settled.error is not None:
        raise settled.error.with_traceback(None)
    declare(rsp, settled.requirements)
    if settled.outcome == PENDING:
        return reply
    every_ready = write(settled, probe.observed, rsp, wire)
    if settled.outcome == NOT_YET:
        # "Not yet" is not ready, even when nothing is composed (Crossplane would otherwise
        # derive Ready from an empty set of composed resources).
        rsp.desired.composite.ready = fnv1.READY_FALSE
        return reply
    held = settled.notes.held
    if held and every_ready:
        # Crossplane derives Ready from the resources it was given: every composed one Ready
        # would make the composite Ready while something it promises (an actor's Deployment
        # waiting for its runtime ConfigMap) was never created. Only then: otherwise
        # Crossplane's own "Unready resources: ..." message says more than an explicit False.
        rsp.desired.composite.ready = fnv1.READY_FALSE
    if not held and every_ready:  # settled: everything composed and Ready
        set_ttl(rsp, step.ttl_for(True, ttl))
    return reply


def settle(comp: Composition, composer: Composer) -> Settled:
    """Run ``composer`` and the library's rules after it: what the pass decided, before
    readiness (:class:`fnplatform.engine.reuse.Settled`; a bad input is its ``error``).

    Everything it reads comes from ``comp``, so a pass whose reads answer the same is reused
    (:mod:`fnplatform.engine.reuse`).
    """
    try:
        try:
            composer(comp)
        except Pending:
            return Settled(PENDING, comp.requirements)
        except NotYet as not_yet:
            stop_here(comp, not_yet)
            return Settled(NOT_YET, comp.requirements, settled_resources(comp), comp.notes)
        # Only a composer that ran to the end has named every resource an import may mean.
        check_import_names(comp.import_spec, [*comp.desired, *comp.notes.held])
        finish(comp)
    except CompositionError as err:
        return Settled(DONE, error=err)
    return Settled(DONE, comp.requirements, settled_resources(comp), comp.notes)


def settled_resources(comp: Composition) -> list[SettledResource]:
    """The desired resources of ``comp`` as the response writes them."""
    return [
        SettledResource(
            name,
            resource_entry(name, emitted.body, fnv1.READY_TRUE),
            emitted.ready,
            exists_is_ready(emitted.body),
            emitted.body,
        )
        for name, emitted in comp.desired.items()
    ]


def set_ttl(rsp: fnv1.RunFunctionResponse, seconds: float) -> None:
    """``rsp.meta.ttl`` = ``seconds`` (sub-second parts kept)."""
    whole = int(seconds)
    rsp.meta.ttl.CopyFrom(
        duration_pb2.Duration(seconds=whole, nanos=round((seconds - whole) * 1e9))
    )


def stop_here(comp: Composition, not_yet: NotYet) -> None:
    """The non-fatal "not yet": keep what was emitted and the status, say why.

    Dropping a resource that exists is never a "not yet": then the answer is a fatal result,
    on which Crossplane keeps the previous desired state whole.
    """
    dropped = [name for name in comp.observed if name not in comp.desired]
    if dropped:
        raise InputError("composite", f"{not_yet.message} (would remove {', '.join(dropped)})")
    status = comp.composite.get("status")
    if isinstance(status, dict):
        kept = {k: v for k, v in status.items() if k != "conditions"}
        comp.notes.status = deep_merge(kept, comp.notes.status)
    finish(comp, not_yet)


def finish(comp: Composition, not_yet: NotYet | None = None) -> None:
    """Apply the library's cross-cutting rules after the composer has emitted everything."""
    leave_imported_alone(comp)
    if comp.namespaced:
        settle_secret_refs(comp)
    hold_unmet(comp)
    add_usages(comp)
    announce_removals(comp)
    report_unsynced(comp)
    if not_yet is not None:
        comp.condition(not_yet.condition, False, not_yet.reason, not_yet.message)
        if not_yet.condition != COMPOSED_CONDITION:
            comp.condition(COMPOSED_CONDITION, False, not_yet.reason, not_yet.message)
    elif comp.notes.held:
        comp.condition(COMPOSED_CONDITION, False, WAITING, waiting_summary(comp.notes.held))
    else:
        comp.condition(COMPOSED_CONDITION, True, "AllResourcesComposed")
    if comp.notes.gaps:
        comp.condition(
            CAPABILITY_GAPS,
            False,
            "CloudLacksFeatures",
            "; ".join(f"{feature}: {why}" for feature, why in sorted(comp.notes.gaps.items())),
        )
    if comp.notes.unexpressed:
        comp.condition(
            NAMESPACED_FORM, False, "NotExpressible", unexpressed_summary(comp.notes.unexpressed)
        )


UNSYNCED = "ComposedResourceUnsynced"


def report_unsynced(comp: Composition) -> None:
    """A warning on the composite and its claim for each composed resource whose provider
    reports ``Synced=False`` (the cloud refused it: its error, verbatim).

    Crossplane v2.4 derives the composite's ``Synced`` from applying the composed resources
    only, never from their own ``Synced`` (internal/controller/apiextensions/composite/
    reconciler.go), so a resource the cloud keeps refusing would otherwise show on the
    composite as nothing at all, or as "Unready resources" without the reason. An event, not a
    condition: Crossplane keeps a function's condition until the function sets it again, and
    the warning stops with the error.
    """
    for name, kind, object_name, reason, message in comp.observed.unsynced():
        comp.event(
            f"{name} ({kind} {object_name}) is not synced: {reason}: {message}"[:1024],
            warning=True,
            reason=UNSYNCED,
        )


def write(
    settled: Settled,
    observed: ObservedResources,
    rsp: fnv1.RunFunctionResponse,
    wire: dict[str, bytes] | None = None,
) -> bool:
    """Copy desired resources, status, conditions and results into the response; whether
    every resource composed in this pass is Ready (read from ``observed`` now: readiness is
    never part of a reused pass).

    With ``wire``, each composed resource goes there instead, by name, as the bytes of its
    ``State.resources`` entry, for the caller to put into the serialized response
    (``function.wire.serialize``): a resource parsed into the response message would
    only be walked again to serialize it, which was a fifth of a large composition's time
    (bench/results.md). A resource an earlier pipeline step already put into the response is
    updated there, keeping what else it carries.
    """
    every_ready = True
    earlier = rsp.desired.resources  # what earlier pipeline steps put there, usually nothing
    for resource in settled.resources:
        name = resource.name
        is_ready = ready_now(observed, name, resource.explicit, resource.exists_is_ready)
        ready = fnv1.READY_TRUE if is_ready else fnv1.READY_FALSE
        every_ready = every_ready and is_ready
        if earlier and name in earlier:
            target = earlier[name]
            fill_struct(target.resource, resource.body or {})
            target.ready = ready
        elif wire is not None:
            wire[name] = resource.entry_with(ready)
        else:
            rsp.desired.MergeFromString(resource.entry_with(ready))
    notes = settled.notes
    if notes.status:
        desired_xr: dict[str, Any] = struct_to_dict(rsp.desired.composite.resource)
        desired_xr = deep_merge(desired_xr, {"status": notes.status})
        rsp.desired.composite.resource.CopyFrom(dict_to_struct(desired_xr))
    for key, value in sorted(notes.connection.items()):
        rsp.desired.composite.connection_details[key] = value
    rsp.conditions.extend(notes.conditions)
    rsp.results.extend(notes.results)
    return every_ready
