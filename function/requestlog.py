"""Logging: the output format, and one line per request under ``--debug``.

The request line says which composite and module a call was for, how long it took and what
came back (counts of desired resources and of results by severity). It never carries a
value from the request: no spec, no environment, no connection details, no result messages
(a message may quote a value). Requests and responses are parsed again only when the line
is wanted, so the flag costs nothing when off.
"""

from __future__ import annotations

import logging as stdlib_logging
import sys
import time
from collections.abc import Awaitable, Callable
from typing import Any

import grpc
import structlog
from crossplane.function.proto.v1 import run_function_pb2 as fnv1

LOG_FORMATS = ("auto", "json", "console")
RunFunction = Callable[[bytes, grpc.aio.ServicerContext], Awaitable[bytes]]


def _stderr_logger(*_args: Any) -> structlog.PrintLogger:
    """A logger writing to the current ``sys.stderr``."""
    return structlog.PrintLogger(sys.stderr)


def configure(debug: bool, log_format: str = "auto") -> None:
    """Logs as JSON lines (``json``, as function-sdk-go does) or for people (``console``).

    ``auto`` keeps the SDK's choice: console with ``--debug``, JSON otherwise.
    """
    chosen = log_format if log_format != "auto" else ("console" if debug else "json")
    processors: list[Any] = [
        structlog.stdlib.add_log_level,
        structlog.processors.CallsiteParameterAdder(
            {
                structlog.processors.CallsiteParameter.FILENAME,
                structlog.processors.CallsiteParameter.LINENO,
            }
        ),
    ]
    if chosen == "console":
        processors += [structlog.processors.TimeStamper(fmt="iso"), structlog.dev.ConsoleRenderer()]
    else:
        processors += [
            structlog.processors.dict_tracebacks,
            structlog.processors.TimeStamper(key="ts"),
            structlog.processors.EventRenamer(to="msg"),
            structlog.processors.JSONRenderer(sort_keys=True),
        ]
    level = stdlib_logging.DEBUG if debug else stdlib_logging.INFO
    structlog.configure(
        processors=processors,
        # stderr: stdout stays clean for what a caller reads (a render's YAML, --version).
        # Looked up when a logger is made, not now, so a replaced sys.stderr (a test's capture)
        # receives the lines.
        logger_factory=_stderr_logger,
        wrapper_class=structlog.make_filtering_bound_logger(level),
        cache_logger_on_first_use=False,
    )


def describe_call(request: bytes, response: bytes) -> dict[str, Any]:
    """Names and counts of one call: safe to log (no values from the request)."""
    req, rsp = fnv1.RunFunctionRequest(), fnv1.RunFunctionResponse()
    try:
        req.ParseFromString(request)
        rsp.ParseFromString(response)
    except Exception:  # a garbage request already got its fatal result
        return {"composite": "unparseable request"}
    composite = req.observed.composite.resource
    metadata = composite.fields["metadata"].struct_value if "metadata" in composite.fields else None
    name = metadata.fields["name"].string_value if metadata and "name" in metadata.fields else ""
    kind = composite.fields["kind"].string_value if "kind" in composite.fields else ""
    module = req.input.fields["module"].string_value if "module" in req.input.fields else ""
    severities = [
        fnv1.Severity.Name(r.severity).removeprefix("SEVERITY_").lower() for r in rsp.results
    ]
    return {
        "composite": f"{kind}/{name}" if kind else name,
        "module": module,
        "tag": req.meta.tag,
        "resources": len(rsp.desired.resources),
        "results": len(rsp.results),
        "fatal": severities.count("fatal"),
        "warnings": severities.count("warning"),
        "requirements": len(rsp.requirements.resources),
    }


def logged(run_function: RunFunction) -> RunFunction:
    """``run_function`` that logs one debug line per call (see the module docstring)."""

    async def run_and_log(request: bytes, context: grpc.aio.ServicerContext) -> bytes:
        started = time.perf_counter()
        response = await run_function(request, context)
        duration_ms = round((time.perf_counter() - started) * 1000, 1)
        structlog.stdlib.get_logger().debug(
            "request", duration_ms=duration_ms, **describe_call(request, response)
        )
        return response

    return run_and_log
