"""One composite rendered by one function through the real render engine.

``crossplane composition render`` with Crossplane core as its engine (``--crossplane-binary``)
runs the reconcile Crossplane runs: the composite, its Composition's pipeline, the observed
composed resources (``--observed-resources``), the resources the function requires answered
from ``--required-resources`` with Crossplane's selector rules, pass after pass while the
requirements change. The function is reached through the Development runtime
(``render.crossplane.io/runtime: Development`` and ``runtime-development-target``), as
``tools/render_own.py`` and crossplane-diff v0.10 render (crossplane-diff's
``cmd/diff/diffprocessor/render_engine.go``: the real engine, never a reimplementation).
"""

from __future__ import annotations

import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from fnplatform.upgrade.inputs import COMPOSITION_RESOURCE_NAME, Body, Composite

RENDER_TIMEOUT_S = 120
DEVELOPMENT_RUNTIME = "render.crossplane.io/runtime"
DEVELOPMENT_TARGET = "render.crossplane.io/runtime-development-target"
#: Fields the engine refuses or that mean nothing offline.
SERVER_FIELDS = ("managedFields", "resourceVersion", "generation", "creationTimestamp")


class RenderError(Exception):
    """The engine could not render the composite; the message is what it said."""


@dataclass(frozen=True)
class Rendered:
    """What a render says: the composite, the desired composed resources by
    composition-resource-name, and the function's results by severity."""

    composite: Body
    composed: dict[str, Body]
    warnings: tuple[str, ...]
    fatal: tuple[str, ...]


def _without_server_fields(body: Body) -> Body:
    metadata = {k: v for k, v in (body.get("metadata") or {}).items() if k not in SERVER_FIELDS}
    return {**body, "metadata": metadata}


def functions_file(composite: Composite, function_name: str, address: str) -> list[Body]:
    """One Development-runtime Function per function of the Composition's pipeline: the one
    previewed at ``address``; any other is refused (the preview serves only this one)."""
    steps = (composite.composition.get("spec") or {}).get("pipeline") or []
    names = sorted({str((s.get("functionRef") or {}).get("name")) for s in steps})
    others = [n for n in names if n != function_name]
    if others:
        raise RenderError(
            f"its Composition {composite.composition['metadata']['name']} also runs "
            f"{', '.join(others)}, which the preview does not serve"
        )
    return [
        {
            "apiVersion": "pkg.crossplane.io/v1",
            "kind": "Function",
            "metadata": {
                "name": function_name,
                "annotations": {DEVELOPMENT_RUNTIME: "Development", DEVELOPMENT_TARGET: address},
            },
            "spec": {"package": f"xpkg.crossplane.io/preview/{function_name}:preview"},
        }
    ]


def command(
    cli: Path,
    engine: Path,
    composite: Composite,
    *,
    function_name: str,
    address: str,
    workdir: Path,
) -> list[str]:
    """The ``crossplane composition render`` command line, its files written to ``workdir``."""
    workdir.mkdir(parents=True, exist_ok=True)

    def write(name: str, documents: list[Any]) -> Path:
        path = workdir / name
        path.write_text(yaml.safe_dump_all(documents, sort_keys=False))
        return path

    xr = write("xr.yaml", [_without_server_fields(composite.body)])
    composition = write("composition.yaml", [_without_server_fields(composite.composition)])
    functions = write("functions.yaml", functions_file(composite, function_name, address))
    line = [
        str(cli), "composition", "render", str(xr), str(composition), str(functions),
        f"--crossplane-binary={engine}",
        "--include-full-xr",
        "--include-function-results",
        f"--timeout={RENDER_TIMEOUT_S // 2}s",
    ]  # fmt: skip
    if composite.definition is not None:
        xrd = write("definition.yaml", [_without_server_fields(composite.definition)])
        line.append(f"--xrd={xrd}")
    if composite.observed:
        observed = write("observed.yaml", [_without_server_fields(b) for b in composite.observed])
        line.append(f"--observed-resources={observed}")
    if composite.required:
        required = write("required.yaml", [_without_server_fields(b) for b in composite.required])
        line.append(f"--required-resources={required}")
    return line


def render(
    cli: Path,
    engine: Path,
    composite: Composite,
    *,
    function_name: str,
    address: str,
    workdir: Path,
) -> Rendered:
    """``composite`` rendered by the function at ``address``."""
    line = command(
        cli, engine, composite, function_name=function_name, address=address, workdir=workdir
    )
    try:
        result = subprocess.run(
            line, capture_output=True, text=True, timeout=RENDER_TIMEOUT_S, check=False
        )
    except subprocess.TimeoutExpired:
        raise RenderError(f"no answer within {RENDER_TIMEOUT_S} s") from None
    if result.returncode != 0:
        fatal = _fatal_of(result.stderr)
        if fatal:
            return Rendered(composite={}, composed={}, warnings=(), fatal=fatal)
        said = [line for line in result.stderr.strip().splitlines() if line.strip()]
        raise RenderError(said[-1] if said else f"exited {result.returncode}")
    return read(result.stdout, str(composite.body["kind"]))


def _fatal_of(stderr: str) -> tuple[str, ...]:
    """The fatal result the engine stopped on, from its error (``pipeline step "..." returned
    a fatal result: <message>``), if that is why it failed."""
    marker = "returned a fatal result: "
    return tuple(line.split(marker, 1)[1].strip() for line in stderr.splitlines() if marker in line)


def read(stdout: str, composite_kind: str) -> Rendered:
    """The render's documents: the composite, the composed resources, the results."""
    documents = [d for d in yaml.safe_load_all(stdout) if isinstance(d, dict)]
    composite: Body = {}
    composed: dict[str, Body] = {}
    warnings: list[str] = []
    fatal: list[str] = []
    for document in documents:
        if document.get("kind") == "Result" and str(document.get("apiVersion", "")).startswith(
            "render.crossplane.io/"
        ):
            severity = str(document.get("severity", ""))
            if severity == "Warning":
                warnings.append(str(document.get("message", "")))
            elif severity == "Fatal":
                fatal.append(str(document.get("message", "")))
            continue
        annotations = (document.get("metadata") or {}).get("annotations") or {}
        name = annotations.get(COMPOSITION_RESOURCE_NAME)
        if name is not None:
            composed[str(name)] = document
        elif document.get("kind") == composite_kind and not composite:
            composite = document
    return Rendered(composite, composed, tuple(warnings), tuple(fatal))
