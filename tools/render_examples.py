"""Render every example with the real Crossplane CLI against this function, served locally.

    python tools/render_examples.py                 # all cases, to stdout
    python tools/render_examples.py --out build/render
    python tools/render_examples.py --case cluster/gcp   # `make render CASE=cluster/gcp`

Each ``tests/render-cases/<module>.yaml`` lists that module's render cases, paths relative to
the repository root::

    - {name: gcp, xr: examples/cluster/xr-gcp.yaml,
       environment: [examples/cluster/platform/environment-baseline.yaml], observed: null,
       required: []}

A module serving several APIs names the API each case renders with (``api: <plural>``: the
Composition and XRD in ``apis/<module>/<plural>/``); otherwise ``apis/<module>/`` is used.

A case may give the composite a ``reference``: Crossplane's composition fields as a v1
composite carries them (``{compositionRef: {name: ...}}`` or ``{compositionSelector:
{matchLabels: ...}}``, a design document's). They replace the XR's own, and the case renders
with the Composition Crossplane v2.4's rules select for it from every Composition of the form
under ``apis/`` (``tests/support/composition_selection.py``): exactly one, or the case fails
saying which.

The cases live outside ``examples/`` because ``crossplane xpkg build`` parses every YAML file under
the examples root as a Kubernetes object; ``examples/`` holds only what a user applies. Observed
states (render inputs only) are in ``tests/render-cases/<module>/``.

Every case also renders in the namespaced form (id ``<module>/namespaced/<case>``): the XR
turned into the Crossplane v2 namespaced XR its claim's user would create
(``tests/support/namespaced.py``), observed resources as their namespaced twins, against
``apis/<module>/namespaced/`` (v2 XRD and Composition), golden in
``tests/golden/<module>/namespaced/``. So every render case, of every module, proves both forms.

The function is started as ``python -m function --insecure`` on a free localhost port and the
CLI's Development runtime is pointed at it (``render.crossplane.io/runtime-development-target``),
so several renders (or engineers) never fight over 9443. ``tests/test_e2e_render.py`` uses the
same functions, so ``make render`` shows exactly what the golden files hold.

Rendering is ``crossplane composition render`` of the CLI (``.bin/crossplane``, v2.5) with
``--crossplane-binary=.bin/crossplane-core``: since Crossplane v2.3 the CLI hands the XR,
Composition, functions and observed/required resources as a ``RenderRequest`` to the hidden
``crossplane internal render`` of a core binary, which runs one real ``Reconcile()`` of the
production composite reconciler against an in-memory client (crossplane
``cmd/crossplane/render/``, ``design/one-pager-render-engine.md``). The engine is the same core
release the live control plane runs (``tools/live/crossplane/go.mod``); ``tools/install-cli.sh``
(``make cli``) puts both in ``.bin/``.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import difflib
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [p for p in (str(ROOT / "platform"), str(ROOT)) if p not in sys.path]
EXAMPLES = ROOT / "examples"
CASES_DIR = ROOT / "tests" / "render-cases"
FUNCTIONS = EXAMPLES / "functions.yaml"
#: The render engine's release, which the live control plane runs too: the Crossplane core
#: pinned in tools/live/crossplane/go.mod. Its built-in CRDs seed ``crossplane resource
#: validate``'s cache.
ENGINE_VERSION = next(
    line.split()[-1]
    for line in (ROOT / "tools" / "live" / "crossplane" / "go.mod").read_text().splitlines()
    if line.split()[:1] == ["github.com/crossplane/crossplane/v2"]
    or line.split()[:2] == ["require", "github.com/crossplane/crossplane/v2"]
)
CLUSTER_SCOPED = "cluster-scoped"
NAMESPACED = "namespaced"
RENDER_TIMEOUT_S = 120


@dataclass(frozen=True)
class Case:
    """One ``crossplane composition render`` of ``tests/render-cases/<module>.yaml``."""

    module: str
    name: str
    xr: Path
    environment: tuple[Path, ...] = ()
    observed: Path | None = None
    required: tuple[Path, ...] = field(default=())
    api: str | None = None  # ``<plural>`` of one of a multi-API module's APIs
    form: str = CLUSTER_SCOPED
    #: Crossplane's composition fields the composite carries instead of its own (v1 form).
    reference: dict[str, Any] | None = field(default=None, hash=False)
    #: The XR (and observed) files are already in this form, as a user wrote or exported them
    #: (``tools/render_own.py``): rendered as they are, never converted.
    as_written: bool = False

    @property
    def namespaced(self) -> bool:
        return self.form == NAMESPACED

    @property
    def _folder(self) -> Path:
        """Where the form's own goldens live under ``tests/golden/``."""
        return Path(self.module, NAMESPACED) if self.namespaced else Path(self.module)

    @property
    def api_folder(self) -> Path:
        """``apis/<module>/`` or, for a multi-API module, ``apis/<module>/<plural>/``; the
        namespaced form's files are in its ``namespaced/`` folder."""
        folder = ROOT / "apis" / self.module
        if self.api:
            folder = folder / self.api
        return folder / NAMESPACED if self.namespaced else folder

    @property
    def id(self) -> str:
        """``<module>/<case>`` (``<module>/namespaced/<case>``): pytest id and golden stem."""
        return f"{self._folder.as_posix()}/{self.name}"

    @property
    def composition(self) -> Path:
        """The API's own Composition, or the one Crossplane selects for the ``reference``."""
        if self.reference is None:
            return self.api_folder / "composition.yaml"
        from tests.support.composition_selection import (
            definition_of,
            select,
            shipped_compositions,
        )

        composite = self.composite()
        chosen = select(
            composite, shipped_compositions(namespaced=self.namespaced), definition_of(composite)
        )
        if len(chosen) != 1:
            names = ", ".join(str(c.path.relative_to(ROOT)) for c in chosen)
            msg = f"{self.id}: reference {self.reference} selects several Compositions: {names}"
            raise ValueError(msg)
        return chosen[0].path

    @property
    def definition(self) -> Path:
        return self.api_folder / "definition.yaml"

    @property
    def golden(self) -> Path:
        return ROOT / "tests" / "golden" / self._folder / f"{self.name}.yaml"

    def twin(self) -> Case:
        """This case in the namespaced form. Its observed state is the namespaced form's own
        (``<module>/namespaced/observed-<case>.yaml``, written by ``tools/make_observed.py
        <module>/namespaced/<case>``) where one exists: names a namespaced composite derives
        differently (global names carry its uid) then read as a namespaced composite's.
        Otherwise the cluster-scoped observed state, turned namespaced."""
        observed = self.observed
        if observed is not None and (observed.parent / NAMESPACED / observed.name).exists():
            observed = observed.parent / NAMESPACED / observed.name
        return dataclasses.replace(self, form=NAMESPACED, observed=observed)

    def composite(self) -> dict[str, Any]:
        """The XR of this form: as written, with the ``reference`` in place of its own
        composition fields, turned namespaced for the namespaced form (which moves them under
        ``spec.crossplane``)."""
        xr: dict[str, Any] = yaml.safe_load(self.xr.read_text())
        if self.as_written:
            return xr
        if self.reference is not None:
            from tests.support.composition_selection import with_reference

            xr = with_reference(xr, self.reference)
        if self.namespaced:
            from tests.support.namespaced import namespaced_composite

            xr = namespaced_composite(xr)
        return xr

    def inputs(self, workdir: Path) -> tuple[Path, Path | None]:
        """The XR and observed files the CLI reads: as written, or turned namespaced (the
        observed resources then controlled by the namespaced XR, as Crossplane would have
        them: the engine refuses an observed resource another uid controls)."""
        if self.as_written or (not self.namespaced and self.reference is None):
            return self.xr, self.observed
        from tests.support.namespaced import namespaced_observed

        target = workdir / f"{self.module}-{self.form}-{self.name}"
        target.mkdir(parents=True, exist_ok=True)
        xr = self.composite()
        xr_path = target / "xr.yaml"
        xr_path.write_text(yaml.safe_dump(xr, sort_keys=False))
        if self.observed is None or not self.namespaced:
            return xr_path, self.observed
        namespace = xr["metadata"]["namespace"]
        # idempotent: a namespaced form's own observed state passes through unchanged
        observed = [
            controlled_by(namespaced_observed(doc, namespace), xr)
            for doc in yaml.safe_load_all(self.observed.read_text())
            if doc
        ]
        observed_path = target / "observed.yaml"
        observed_path.write_text(yaml.safe_dump_all(observed, sort_keys=False))
        return xr_path, observed_path


def engine_uid(xr: dict[str, Any]) -> str:
    """The uid the render engine gives ``xr``: its own, else the deterministic one core v2.4
    derives from its kind, namespace and name (``uuid.NewSHA1(uuid.Nil, "<group>/<version>,
    Kind=<kind>\\x00<namespace>\\x00<name>")``, internal/render/composite/render.go), so
    renders of a manifest never applied are stable."""
    metadata = xr.get("metadata") or {}
    if metadata.get("uid"):
        return str(metadata["uid"])
    seed = (
        f"{xr['apiVersion']}, Kind={xr['kind']}\x00{metadata.get('namespace') or ''}"
        f"\x00{metadata['name']}"
    )
    return str(uuid.uuid5(uuid.UUID(int=0), seed))


def controlled_by(resource: dict[str, Any], xr: dict[str, Any]) -> dict[str, Any]:
    """``resource`` with its controller reference pointing at ``xr`` (its uid as the engine
    gives it), as Crossplane sets it on every composed resource."""
    for ref in (resource.get("metadata") or {}).get("ownerReferences") or []:
        if ref.get("controller") and ref.get("kind") == xr["kind"]:
            ref.update(apiVersion=xr["apiVersion"], name=xr["metadata"]["name"], uid=engine_uid(xr))
    return resource


def load_cases() -> list[Case]:
    """Every case of every ``tests/render-cases/*.yaml``, in module then file order, each
    followed by its namespaced twin."""
    cases: list[Case] = []
    for cases_file in sorted(CASES_DIR.glob("*.yaml")):
        for entry in yaml.safe_load(cases_file.read_text()) or []:
            cases.append(
                Case(
                    module=cases_file.stem,
                    name=entry["name"],
                    xr=ROOT / entry["xr"],
                    environment=tuple(ROOT / f for f in entry.get("environment") or ()),
                    observed=ROOT / entry["observed"] if entry.get("observed") else None,
                    required=tuple(ROOT / f for f in entry.get("required") or ()),
                    api=entry.get("api"),
                    reference=entry.get("reference"),
                )
            )
    return [form for case in cases for form in (case, case.twin())]


CLI = ROOT / ".bin" / "crossplane"
ENGINE = ROOT / ".bin" / "crossplane-core"


def find_cli() -> Path | None:
    """``.bin/crossplane``: the Crossplane CLI ``tools/install-cli.sh`` put there (``make cli``),
    when the render engine ``.bin/crossplane-core`` is there too.

    The script links a supported ``crossplane`` already on PATH, or builds the pinned one, and
    builds the pinned core engine; every tool and test goes through these two paths so they all
    render alike.
    """
    return CLI if CLI.exists() and ENGINE.exists() else None


def ensure_cli() -> Path:
    """``.bin/crossplane``, running ``tools/install-cli.sh`` first when it or the engine is
    missing."""
    found = find_cli()
    if found is None:
        subprocess.run([str(ROOT / "tools" / "install-cli.sh")], cwd=ROOT, check=True)
        found = find_cli()
    if found is None:
        msg = "tools/install-cli.sh did not install .bin/crossplane and .bin/crossplane-core"
        raise RuntimeError(msg)
    return found


def select_cases(cases: list[Case], wanted: list[str] | None) -> tuple[list[Case], list[str]]:
    """The cases named ``<module>/<case>`` (or a whole ``<module>``), and the unknown names."""
    if not wanted:
        return cases, []
    chosen = [c for c in cases if c.id in wanted or c.module in wanted]
    known = {c.id for c in cases} | {c.module for c in cases}
    return chosen, [name for name in wanted if name not in known]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_for_port(port: int, process: subprocess.Popen[bytes], timeout_s: float = 30.0) -> None:
    """Block until the function accepts connections; fail fast if it died."""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if process.poll() is not None:
            msg = f"function exited with {process.returncode} before listening on {port}"
            raise RuntimeError(msg)
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 0.5):
            return
        time.sleep(0.1)
    msg = f"function did not listen on localhost:{port} within {timeout_s}s"
    raise RuntimeError(msg)


@contextlib.contextmanager
def serve_function(port: int, log_path: Path | None = None) -> Iterator[subprocess.Popen[bytes]]:
    """Run ``python -m function --insecure`` on ``localhost:port`` for the duration."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT / "platform"), str(ROOT)])}
    log = log_path.open("wb") if log_path else subprocess.DEVNULL
    command = [
        sys.executable,
        "-m",
        "function",
        "--insecure",
        "--address",
        f"localhost:{port}",
        "--metrics-address=",
    ]  # renders run side by side: no fixed metrics port
    process = subprocess.Popen(command, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
    try:
        wait_for_port(port, process)
        yield process
    finally:
        process.terminate()
        try:
            process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        if log_path and not isinstance(log, int):
            log.close()


def _concatenate(paths: tuple[Path, ...], target: Path) -> Path:
    """Join the case's files into one stream, one file for ``--required-resources``."""
    documents = [path.read_text().strip() for path in paths]
    target.write_text("\n---\n".join(documents) + "\n")
    return target


def _namespaced_required(path: Path) -> Path:
    """Fetched composites behind claims (a tenant's pools) as the namespaced composites the
    namespaced form fetches instead; EnvironmentConfigs and other resources as they are."""
    from tests.support.namespaced import CLAIM_NAME, namespaced_composite

    documents = [doc for doc in yaml.safe_load_all(path.read_text()) if doc]
    twins = [
        namespaced_composite(doc)
        if CLAIM_NAME in ((doc.get("metadata") or {}).get("labels") or {})
        else doc
        for doc in documents
    ]
    path.write_text(yaml.safe_dump_all(twins, sort_keys=False))
    return path


def render_command(cli: Path, case: Case, port: int, workdir: Path) -> list[str]:
    """The ``crossplane composition render`` command line for ``case``."""
    xr, observed = case.inputs(workdir)
    command = [
        str(cli), "composition", "render", str(xr), str(case.composition), str(FUNCTIONS),
        f"--crossplane-binary={ENGINE}",
        "--include-full-xr",
        "--include-function-results",
        f"--function-annotations=render.crossplane.io/runtime-development-target=localhost:{port}",
        f"--timeout={RENDER_TIMEOUT_S // 2}s",
    ]  # fmt: skip
    if case.definition.exists():
        command.append(f"--xrd={case.definition}")
    extra = case.environment + case.required
    if extra:
        stem = f"{case.module}-{case.form}-{case.name}"
        joined = _concatenate(extra, workdir / f"{stem}-required.yaml")
        if case.namespaced:
            joined = _namespaced_required(joined)
        command.append(f"--required-resources={joined}")
    if observed is not None:
        command.append(f"--observed-resources={observed}")
    return command


def render(cli: Path, case: Case, port: int, workdir: Path) -> subprocess.CompletedProcess[str]:
    """Render ``case``; the caller checks the return code and reads stdout (its engine events
    in a stable order: :func:`stable_events`)."""
    result = subprocess.run(
        render_command(cli, case, port, workdir),
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=RENDER_TIMEOUT_S,
        check=False,
    )
    result.stdout = stable_events(result.stdout)
    return result


DOCUMENT_SEPARATOR = "\n---\n"


def stable_events(stdout: str) -> str:
    """``stdout`` with the render engine's events sorted among themselves.

    With ``--include-function-results`` the CLI prints the events one real reconcile records,
    each a ``kind: Result`` with a ``reason``: ``SelectComposition``, ``Composed resource
    "network" is not yet ready`` (``ComposeResources``), and the function's own results, which
    the engine records as events under the result's reason. It records the unready resources'
    events while ranging over a Go map (crossplane v2.4.0
    internal/controller/apiextensions/composite/reconciler.go, the loop over composed
    resources; composition_functions.go), so their order changes from run to run. Sorting
    them in place, each keeping its text, makes the output, and the goldens, deterministic.
    """
    documents = stdout.split(DOCUMENT_SEPARATOR)

    def is_event(document: str) -> bool:
        lines = document.splitlines()
        return "kind: Result" in lines and any(line.startswith("reason: ") for line in lines)

    places = [i for i, document in enumerate(documents) if is_event(document)]
    events = sorted(documents[i].strip("\n") for i in places)
    for place, event in zip(places, events, strict=True):
        # the last document carries the stream's final newline
        documents[place] = event + ("\n" if documents[place].endswith("\n") else "")
    return DOCUMENT_SEPARATOR.join(documents)


def seed_validate_cache(cache_dir: Path) -> str:
    """Offline ``crossplane resource validate``: pre-fill its cache with Crossplane's own CRDs.

    validate always wants the Crossplane image's built-in schemas and downloads them unless the
    cache folder for the image exists; ``schemas/crds/crossplane`` holds those CRDs already.
    Returns the ``--crossplane-image`` value matching the seeded folder.
    """
    image = f"xpkg.crossplane.io/crossplane/crossplane:{ENGINE_VERSION}"
    folder = cache_dir / image.replace(":", "@")
    folder.mkdir(parents=True, exist_ok=True)
    for crd in sorted((ROOT / "schemas" / "crds" / "crossplane").glob("*.yaml")):
        shutil.copy(crd, folder / crd.name)
    return image


def definitions(namespaced: bool) -> list[Path]:
    """Every XRD of one form: the v1 set, or the namespaced set (both define the same kinds)."""
    return sorted(
        p
        for p in ROOT.glob("apis/**/definition.yaml")
        if (p.parent.name == NAMESPACED) == namespaced
    )


def validate_command(
    cli: Path, rendered: Path, cache_dir: Path, *, namespaced: bool = False
) -> list[str]:
    """``crossplane resource validate`` of ``rendered`` against the provider CRDs and the XRDs
    (``beta validate`` until the CLI left core)."""
    image = seed_validate_cache(cache_dir)
    extensions = [ROOT / "schemas" / "crds", *definitions(namespaced)]
    return [
        str(cli), "resource", "validate",
        ",".join(str(e) for e in extensions), str(rendered),
        "--error-on-missing-schemas", "--skip-success-results",
        f"--cache-dir={cache_dir}", f"--crossplane-image={image}",
    ]  # fmt: skip


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", type=Path, help="write <module>/<case>.yaml here, not stdout")
    parser.add_argument(
        "--case", action="append", help="only this <module>/<case> (or every case of <module>)"
    )
    args = parser.parse_args(argv)
    all_cases = load_cases()
    cases, unknown = select_cases(all_cases, args.case)
    if unknown:
        valid = "\n  ".join(c.id for c in all_cases)
        known = sorted({c.id for c in all_cases} | {c.module for c in all_cases})
        hints = [
            f"{name}: did you mean {nearest[0]}?"
            for name in unknown
            if (nearest := difflib.get_close_matches(name, known, n=1))
        ]
        print(
            f"unknown case {', '.join(unknown)}; "
            + "".join(f"{hint} " for hint in hints)
            + f"valid cases:\n  {valid}",
            file=sys.stderr,
        )
        return 2
    cli = find_cli()
    if cli is None:
        print(
            "Crossplane CLI or engine not found at .bin/crossplane, .bin/crossplane-core: "
            "run `make cli`",
            file=sys.stderr,
        )
        return 2
    failed = 0
    port = free_port()
    with tempfile.TemporaryDirectory() as tmp, serve_function(port, Path(tmp) / "function.log"):
        for case in cases:
            result = render(cli, case, port, Path(tmp))
            if result.returncode != 0:
                failed += 1
                print(f"# {case.id}: FAILED\n{result.stderr}", file=sys.stderr)
                continue
            if args.out:
                target = args.out / f"{case.id}.yaml"
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_text(result.stdout)
                print(f"{case.id}: {target}", file=sys.stderr)
            else:
                print(f"# ===== {case.id} =====\n{result.stdout}", end="")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
