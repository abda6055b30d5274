"""RunFunction for one request: parse the step input, pick the composer, report every error.

No exception leaves :func:`run`: a problem with the input or the composite becomes a fatal
result that names the field and the reason; an unexpected bug becomes a fatal result naming
the module, while the traceback goes to the function's own log only.
"""

from __future__ import annotations

import functools
import time
import traceback
from dataclasses import dataclass, replace
from typing import Any

from crossplane.function import logging, response
from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from fnplatform.api.step_input import Input, PhaseTTL
from fnplatform.api.validation import describe_validation_error, non_booleans
from fnplatform.composers import Composer, composers
from fnplatform.engine.runner import COMPOSED_CONDITION, Call, compose
from fnplatform.errors import CompositionError, closest
from fnplatform.request.memo import BoundedMemo
from fnplatform.request.structs import struct_to_dict
from google.protobuf import struct_pb2
from pydantic import ValidationError

from function.answer import Answer, CallRecord, Outcome
from function.composite import check_composite_api, known_kinds
from function.wire import serialize


@functools.cache
def _composers() -> dict[str, Composer]:
    return composers()


class ParsedInputs:
    """Step inputs parsed before, by their deterministic wire bytes (the most recent ``limit``).

    Every call of a Composition's step carries the same input, and parsing it (the strict
    boolean walk, pydantic) was a twentieth of composing a small composite from scratch
    (bench/results.md). An :class:`Input` is only read once parsed (composers see its
    settings through a deep merge), so one instance serves every call with those bytes. An
    input that fails to parse is not remembered: it raises on every call.
    """

    def __init__(self, limit: int = 64) -> None:
        self._memo: BoundedMemo[Input] = BoundedMemo(limit)

    def parse(self, request: fnv1.RunFunctionRequest) -> Input:
        """:func:`parse_input` of ``request``, remembered."""
        if not request.HasField("input"):
            return _parse_input({})
        return self._memo.get(
            request.input.SerializeToString(deterministic=True),
            lambda: _parse_input(struct_to_dict(request.input)),
        )


INPUTS = ParsedInputs()


def parse_input(request: fnv1.RunFunctionRequest) -> Input:
    """The step input, or a CompositionError naming each invalid field (see
    :class:`ParsedInputs`)."""
    return INPUTS.parse(request)


def _parse_input(raw: dict[str, Any]) -> Input:
    module = raw.get("module")
    if isinstance(module, str):
        require_module(module)
    loose = non_booleans(Input, raw, "input")
    if loose:
        raise CompositionError("input", "; ".join(f"{p}: must be true or false" for p in loose))
    try:
        return Input.model_validate(raw)
    except ValidationError as err:
        raise CompositionError("input", describe_validation_error(err, "input", Input)) from None


def require_module(module: str) -> Composer:
    """The composer of ``module``, or a CompositionError listing the modules this release
    composes."""
    found = _composers().get(module)
    if found is not None:
        return found
    available = sorted(_composers())
    guess = closest(module, available)
    hint = f"did you mean {guess}? " if guess else ""
    raise CompositionError(
        "input.module",
        f"{_shown(module)} is not a module of this release; {hint}available: "
        f"{', '.join(available)}",
    )


_MAP_FIELDS = ("metadata", "spec", "status")
_STRING_MAPS = ("labels", "annotations")


def check_composite_shape(request: fnv1.RunFunctionRequest) -> None:
    """Refuse a composite whose top-level sections have the wrong JSON type, naming the field.

    Composers read ``metadata``, ``labels``, ``spec`` and ``status`` as maps; Kubernetes
    guarantees that for real objects, but a malformed request must still get a readable
    answer rather than an internal error. Checked on the Struct itself: no conversion cost.
    """
    composite = request.observed.composite.resource
    for name in _MAP_FIELDS:
        if name in composite.fields:
            _require_kind(composite.fields[name], "struct_value", name, "must be an object")
    spec = composite.fields["spec"].struct_value if "spec" in composite.fields else None
    if spec is not None and "parameters" in spec.fields:
        _require_kind(
            spec.fields["parameters"], "struct_value", "spec.parameters", "must be an object"
        )
    if "metadata" not in composite.fields:
        return
    metadata = composite.fields["metadata"].struct_value
    for text in ("name", "namespace"):
        if text in metadata.fields:
            _require_kind(
                metadata.fields[text], "string_value", f"metadata.{text}", "must be a string"
            )
    for name in _STRING_MAPS:
        if name not in metadata.fields:
            continue
        _require_kind(
            metadata.fields[name], "struct_value", f"metadata.{name}", "must be an object"
        )
        for key, value in sorted(metadata.fields[name].struct_value.fields.items()):
            _require_kind(value, "string_value", f"metadata.{name}.{key[:80]}", "must be a string")


def _require_kind(value: struct_pb2.Value, kind: str, field: str, reason: str) -> None:
    if value.WhichOneof("kind") not in (kind, "null_value"):
        raise CompositionError(field, reason)


@dataclass(frozen=True, slots=True)
class Parsed:
    """A request as received, parsed and checked before anything is composed: the call to
    compose (with what reuse learned of it, :meth:`fnplatform.engine.reuse.PassMemo.probe`),
    or why there is none; and the seconds that took."""

    request: fnv1.RunFunctionRequest | None  # None: not a RunFunctionRequest
    call: Call | None = None  # None: refused, see ``failure``
    module: str = "unknown"  # the module the step input names, once it parses
    failure: Exception | None = None  # a CompositionError (bad input), else a bug
    pruned: tuple[str, ...] = ()  # a warning for each unknown spec field left out
    seconds: float = 0.0

    @property
    def reused(self) -> bool:
        """Whether the call's pass is reused: what the server answers on its event loop
        (``function.server.INLINE_REUSE_MAX_BYTES``)."""
        return self.call is not None and self.call.probe.reused


def open_call(request: fnv1.RunFunctionRequest, raw: bytes | None = None) -> Parsed:
    """The :class:`~fnplatform.engine.runner.Call` for ``request`` (parsed from ``raw``, when
    there are bytes), built once: the step input, the composite's shape and API, the
    composer, what reuse learned of it; or the first of these that refuses it."""
    module = "unknown"
    try:
        step = parse_input(request)
        module = step.module
        check_composite_shape(request)
        composer = require_module(module)
        composite = struct_to_dict(request.observed.composite.resource)
        spec, pruned = check_composite_api(composite, module)
        if pruned:  # the spec as an API server serving the XRD would have kept it
            composite = {**composite, "spec": spec}
        call = Call.of(request, step, composer, raw=raw, composite=composite)
    except Exception as err:  # reported by _respond, a bug included
        return Parsed(request, module=module, failure=err)
    return Parsed(request, call, module, pruned=tuple(pruned))


def run(
    request: fnv1.RunFunctionRequest,
    ttl: PhaseTTL = PhaseTTL(),  # noqa: B008 - frozen, shared safely
) -> fnv1.RunFunctionResponse:
    """Compose ``request``; always returns a well-formed response."""
    return _respond(request, open_call(request), ttl)[0]


def _respond(
    request: fnv1.RunFunctionRequest,
    parsed: Parsed,
    ttl: PhaseTTL,
    wire: dict[str, bytes] | None = None,
) -> tuple[fnv1.RunFunctionResponse, Outcome, bool]:
    """The response to ``request`` (``parsed``: its call opened), how it went (see
    :class:`~function.answer.CallRecord`) and whether its pass was reused.

    With ``wire``, composed resources go there as wire bytes (:func:`function.wire.serialize`
    puts them into the response); it is emptied when the answer is an error.
    """
    call, failure = parsed.call, parsed.failure
    if call is not None:
        try:
            reply = compose(call, ttl, wire)
        except Exception as err:
            failure = err
    if failure is not None:
        if wire is not None:
            wire.clear()
        # A refusal the pass memo remembered is reused too (the probe found the pass).
        reused = call is not None and call.probe.reused
        return *_refused(request, parsed.module, failure), reused
    rsp = reply.response
    for warning in parsed.pruned:
        response.warning(rsp, warning)
    severities = {result.severity for result in rsp.results}
    if fnv1.SEVERITY_FATAL in severities:
        return rsp, "fatal", reply.reused
    return rsp, "warning" if fnv1.SEVERITY_WARNING in severities else "ok", reply.reused


def _refused(
    request: fnv1.RunFunctionRequest, module: str, failure: Exception
) -> tuple[fnv1.RunFunctionResponse, Outcome]:
    """The fatal response to ``failure``: a CompositionError's message names the field; any
    other exception is a bug, logged without the values it touched."""
    if isinstance(failure, CompositionError):
        return fatal(request, str(failure)), "fatal"
    log_failure(failure, module, request.meta.tag)
    message = f"internal error in module {module}: {type(failure).__name__}; see function logs"
    return fatal(request, message, INTERNAL_ERROR), "error"


def kind_of(request: fnv1.RunFunctionRequest) -> str:
    """The composite's kind when a module of this release composes it, else ``other``."""
    composite = request.observed.composite.resource
    kind = composite.fields["kind"].string_value if "kind" in composite.fields else ""
    return kind if kind in known_kinds() else "other"


def log_failure(err: Exception, module: str, tag: str) -> None:
    """Log an unexpected error with its stack, but never the values it touched.

    ``log.exception`` would render the traceback through structlog's ``dict_tracebacks``,
    which includes every frame's local variables: the request, the environment, connection
    details, secrets. Only the exception type and the frames (file, line, function) are
    logged; the exception message, which may quote a value, only at debug level.
    """
    frames = [
        f"{frame.filename}:{frame.lineno} in {frame.name}"
        for frame in traceback.extract_tb(err.__traceback__)
    ]
    log = logging.get_logger()
    log.error("composition failed", module=module, tag=tag, error=type(err).__name__, frames=frames)
    log.debug("composition failed", module=module, tag=tag, message=str(err)[:500])


INVALID_INPUT = "InvalidInput"
INTERNAL_ERROR = "InternalError"


def fatal(
    request: fnv1.RunFunctionRequest, message: str, reason: str = INVALID_INPUT
) -> fnv1.RunFunctionResponse:
    """A response carrying a fatal result; Crossplane keeps the previous desired state.

    The claim's owner must see it too, and Crossplane (v2.2.1) records a fatal result as an
    event on the composite only: it stops at the fatal result and returns the events and
    conditions gathered before it (``composition_functions.go``), which the reconciler then
    emits, those targeted so on the claim too (``reconciler.go``,
    ``handleCommonCompositionResult``). So the same message goes first as a warning and as
    the ``Composed`` condition, both targeted at the composite and the claim.
    """
    rsp = response.to(request)
    both = fnv1.TARGET_COMPOSITE_AND_CLAIM
    rsp.results.add(severity=fnv1.SEVERITY_WARNING, message=message, reason=reason, target=both)
    rsp.conditions.add(
        type=COMPOSED_CONDITION,
        status=fnv1.STATUS_CONDITION_FALSE,
        reason=reason,
        message=message,
        target=both,
    )
    response.fatal(rsp, message)
    return rsp


SIZE_WARNING_RATIO = 0.8
#: The largest response Crossplane v2.4 accepts: its function client
#: (internal/xfn/function_runner.go) sets no MaxCallRecvMsgSize, so grpc-go's default client
#: receive limit, 4 MiB, applies; a larger answer fails there with an opaque ResourceExhausted.
CROSSPLANE_RECEIVE_LIMIT = 4 * 1024 * 1024
_RAISE_HINT = " or raise --max-send-message-size (up to 4 MiB, what Crossplane accepts)"


def run_bytes(
    request: bytes,
    max_send: int = 4 * 1024 * 1024,
    ttl: PhaseTTL = PhaseTTL(),  # noqa: B008 - frozen, shared safely
) -> bytes:
    """Serialized request in, deterministically serialized response out (for any executor).

    A response over ``max_send`` bytes would fail in gRPC with an opaque error, so it becomes a
    fatal result saying so; one above 80% of it carries a warning.
    """
    return compose_bytes(request, max_send, ttl).response


def compose_bytes(request: bytes, max_send: int, ttl: PhaseTTL) -> Answer:
    """:func:`run_bytes` with the call's description and its composing time, for the metrics.

    Runs in the executor (a thread or a worker process): what it returns is small and
    picklable, so the server process records the metrics whatever the executor.
    """
    return compose_parsed(parse_request(request), max_send, ttl)


def parse_request(raw: bytes) -> Parsed:
    """``raw`` parsed, and the call opened (:func:`open_call`): whether its pass is reused is
    what the server answers on its event loop (``function.server.INLINE_REUSE_MAX_BYTES``)."""
    started = time.perf_counter()
    request = fnv1.RunFunctionRequest()
    try:
        request.ParseFromString(raw)
    except Exception:
        return Parsed(None, seconds=time.perf_counter() - started)
    parsed = open_call(request, raw)
    return replace(parsed, seconds=time.perf_counter() - started)


def compose_parsed(parsed: Parsed, max_send: int, ttl: PhaseTTL) -> Answer:
    """:func:`compose_bytes` of a request already parsed (:func:`parse_request`)."""
    started = time.perf_counter() - parsed.seconds
    request = parsed.request
    if request is None:
        rsp = fnv1.RunFunctionResponse()
        response.fatal(rsp, "request: not a valid RunFunctionRequest")
        out = rsp.SerializeToString(deterministic=True)
        return Answer(
            out, CallRecord("unknown", "other", "fatal", 0, len(out)), time.perf_counter() - started
        )
    wire: dict[str, bytes] = {}
    rsp, outcome, reused = _respond(request, parsed, ttl, wire)
    resources = len(rsp.desired.resources) + len(wire)
    out = serialize(rsp, wire)
    if len(out) > max_send * SIZE_WARNING_RATIO:  # ByteSize would serialize a second time
        rsp = limit_size(request, fnv1.RunFunctionResponse.FromString(out), max_send, len(out))
        out = rsp.SerializeToString(deterministic=True)
        resources = len(rsp.desired.resources)
        over = any(result.severity == fnv1.SEVERITY_FATAL for result in rsp.results)
        outcome = "fatal" if over else ("warning" if outcome == "ok" else outcome)
    record = CallRecord(parsed.module, kind_of(request), outcome, resources, len(out), reused)
    return Answer(out, record, time.perf_counter() - started)


def limit_size(
    request: fnv1.RunFunctionRequest,
    rsp: fnv1.RunFunctionResponse,
    max_send: int,
    size: int | None = None,
) -> fnv1.RunFunctionResponse:
    """``rsp`` if it fits ``max_send`` (with a warning past 80%), else a small fatal response.

    The warning itself adds bytes: when adding it would push a response that fits over the
    limit, the response goes out without the warning rather than fail. The over-limit
    response carries only the fatal result (no desired state copied from the request, which
    may be what is too big); on a fatal result Crossplane keeps the previous desired state.
    """
    size = rsp.ByteSize() if size is None else size
    if size <= max_send:
        if size > max_send * SIZE_WARNING_RATIO:
            warned = fnv1.RunFunctionResponse()
            warned.CopyFrom(rsp)
            response.warning(
                warned, f"response: {size} bytes is over 80% of the send limit of {max_send} bytes"
            )
            if warned.ByteSize() <= max_send:
                return warned
        return rsp
    oversized = fnv1.RunFunctionResponse()
    oversized.meta.tag = request.meta.tag
    response.fatal(
        oversized,
        f"response: {size} bytes exceeds the send limit of {max_send} bytes; split the "
        f"composite{_RAISE_HINT if max_send < CROSSPLANE_RECEIVE_LIMIT else ''}",
    )
    return oversized


def _shown(value: str, limit: int = 64) -> str:
    """``value`` quoted for a message, cut when longer than ``limit`` (never echo huge input)."""
    return repr(value) if len(value) <= limit else f"{value[:limit]!r}... ({len(value)} characters)"
