"""RunFunction for one request: parse the step input, pick the composer, report every error.

No exception leaves :func:`run`: a problem with the input or the composite becomes a fatal
result that names the field and the reason; an unexpected bug becomes a fatal result naming
the module, while the traceback goes to the function's own log only.
"""

from __future__ import annotations

import functools
import traceback
from typing import Any

from crossplane.function import logging, response
from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from fnplatform.composers import composers
from fnplatform.errors import CompositionError
from fnplatform.input import Input
from fnplatform.runner import Composer, compose
from fnplatform.structs import struct_to_dict
from fnplatform.validation import closest, describe_validation_error, non_booleans
from google.protobuf import struct_pb2
from pydantic import ValidationError

from function.composite import check_composite_api


@functools.cache
def _composers() -> dict[str, Composer]:
    return composers()


def parse_input(request: fnv1.RunFunctionRequest) -> Input:
    """The step input, or a CompositionError naming each invalid field."""
    raw: dict[str, Any] = struct_to_dict(request.input) if request.HasField("input") else {}
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


def require_module(module: str) -> None:
    """A CompositionError unless this release composes ``module``; it lists the ones it does."""
    available = sorted(_composers())
    if module in available:
        return
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
        _require_kind(spec.fields["parameters"], "struct_value", "spec.parameters",
                      "must be an object")
    if "metadata" not in composite.fields:
        return
    metadata = composite.fields["metadata"].struct_value
    for text in ("name", "namespace"):
        if text in metadata.fields:
            _require_kind(metadata.fields[text], "string_value", f"metadata.{text}",
                          "must be a string")
    for name in _STRING_MAPS:
        if name not in metadata.fields:
            continue
        _require_kind(metadata.fields[name], "struct_value", f"metadata.{name}",
                      "must be an object")
        for key, value in sorted(metadata.fields[name].struct_value.fields.items()):
            _require_kind(value, "string_value", f"metadata.{name}.{key[:80]}",
                          "must be a string")


def _require_kind(value: struct_pb2.Value, kind: str, field: str, reason: str) -> None:
    if value.WhichOneof("kind") not in (kind, "null_value"):
        raise CompositionError(field, reason)


def run(request: fnv1.RunFunctionRequest) -> fnv1.RunFunctionResponse:
    """Compose ``request``; always returns a well-formed response."""
    module = "unknown"
    try:
        step = parse_input(request)
        module = step.module
        check_composite_shape(request)
        require_module(module)
        pruned = check_composite_api(request, module)
        rsp = compose(request, step, _composers()[module])
        for warning in pruned:
            response.warning(rsp, warning)
        return rsp
    except CompositionError as err:
        return fatal(request, str(err))
    except Exception as err:
        log_failure(err, module, request.meta.tag)
        return fatal(
            request, f"internal error in module {module}: {type(err).__name__}; see function logs"
        )


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
    log.error("composition failed", module=module, tag=tag, error=type(err).__name__,
              frames=frames)
    log.debug("composition failed", module=module, tag=tag, message=str(err)[:500])


def fatal(request: fnv1.RunFunctionRequest, message: str) -> fnv1.RunFunctionResponse:
    """A response carrying one fatal result; Crossplane keeps the previous desired state."""
    rsp = response.to(request)
    response.fatal(rsp, message)
    return rsp


SIZE_WARNING_RATIO = 0.8


def run_bytes(request: bytes, max_send: int = 4 * 1024 * 1024) -> bytes:
    """Serialized request in, deterministically serialized response out (for any executor).

    A response over ``max_send`` bytes would fail in gRPC with an opaque error, so it becomes a
    fatal result saying so; one above 80% of it carries a warning.
    """
    parsed = fnv1.RunFunctionRequest()
    try:
        parsed.ParseFromString(request)
    except Exception:
        rsp = fnv1.RunFunctionResponse()
        response.fatal(rsp, "request: not a valid RunFunctionRequest")
        return rsp.SerializeToString(deterministic=True)
    rsp = run(parsed)
    out = rsp.SerializeToString(deterministic=True)
    if len(out) <= max_send * SIZE_WARNING_RATIO:  # ByteSize would serialize a second time
        return out
    return limit_size(parsed, rsp, max_send, len(out)).SerializeToString(deterministic=True)


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
        f"response: {size} bytes exceeds the send limit of {max_send} bytes; "
        "raise --max-send-message-size or split the composite",
    )
    return oversized


def _shown(value: str, limit: int = 64) -> str:
    """``value`` quoted for a message, cut when longer than ``limit`` (never echo huge input)."""
    return repr(value) if len(value) <= limit else f"{value[:limit]!r}... ({len(value)} characters)"
