#!/usr/bin/env python3
"""Derive compact copies of the upstream CRDs for offline validation.

Reads the unmodified upstream CRDs under ``--source`` (default ``../shared/crds``, one folder
per upstream repository, see its ``INDEX.md``) and writes
``--out/<source-folder>/<file>.yaml`` (default ``schemas/crds``) holding the same
CustomResourceDefinition documents with every ``description`` removed from the OpenAPI
schemas. Everything else (all versions with their served/storage/deprecated flags, types,
enums, defaults, formats, patterns, ``x-kubernetes-*`` extensions including CEL
``x-kubernetes-validations``, names, scope, printer columns, annotations) is kept as is, so
the output still loads in ``crossplane resource validate`` and ``kubectl apply --dry-run``.

Selection:

* upjet providers (``provider-upjet-*``): the cluster-scoped ``<svc>.<cloud>.upbound.io``
  files, their namespaced ``<svc>.<cloud>.m.upbound.io`` twins (what a Crossplane v2
  namespaced composite emits, see ``fnplatform.composition.namespaced``), and the ProviderConfig
  files;
* cert-manager: skipped (large, not emitted by the function) unless ``--with-cert-manager``;
* everything else (crossplane, keda, provider-kubernetes, provider-helm, rook, fluxcd, c5c3):
  all files; ``crossplane`` also gets the activation API's CRDs of a newer Crossplane from its
  Go module (``GO_MODULE_ADDITIONS``);
* ``gardener`` holds no CRD (Shoot is served by an aggregated API server): its Shoot schema is
  derived from the generated ``.proto`` and the API reference by
  ``tools/gardener_shoot_schema.py`` into ``gardener/core.gardener.cloud_shoots.yaml``.

Output is deterministic: files are processed in sorted order, keys keep their upstream order
and the YAML emitter settings are fixed. Stale ``*.yaml`` files in a regenerated folder are
removed.

Usage::

    python tools/derive_schemas.py [--source ../shared/crds] [--out schemas/crds]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))
import gardener_shoot_schema

REPO = Path(__file__).resolve().parent.parent

try:  # libyaml is ~10x faster; fall back to the pure-Python classes.
    _Loader: Any = yaml.CSafeLoader
    _Dumper: Any = yaml.CSafeDumper
except AttributeError:  # pragma: no cover
    _Loader = yaml.SafeLoader
    _Dumper = yaml.SafeDumper

# Keywords whose value is a map of name -> sub-schema.
_SCHEMA_MAPS = ("properties", "patternProperties", "definitions", "dependencies")
# Keywords whose value is one sub-schema (or a list of them, for items).
_SCHEMA_ONE = ("additionalProperties", "items", "additionalItems", "not")
# Keywords whose value is a list of sub-schemas.
_SCHEMA_LISTS = ("allOf", "anyOf", "oneOf")


def strip_descriptions(schema: Any) -> Any:
    """Return a copy of an OpenAPI v3 schema without ``description`` keywords.

    Schema-aware: a *property* called ``description`` (e.g. GCP ``forProvider.description``)
    is kept, only the documentation keyword is dropped. Values of ``default``, ``enum``,
    ``example`` and the ``x-kubernetes-*`` extensions are copied untouched.
    """
    if not isinstance(schema, dict):
        return schema
    out: dict[str, Any] = {}
    for key, value in schema.items():
        if key == "description":
            continue
        if key in _SCHEMA_MAPS and isinstance(value, dict):
            out[key] = {
                name: strip_descriptions(sub) if isinstance(sub, dict) else sub
                for name, sub in value.items()
            }
        elif key in _SCHEMA_ONE and isinstance(value, (dict, list)):
            if isinstance(value, list):
                out[key] = [strip_descriptions(sub) for sub in value]
            else:
                out[key] = strip_descriptions(value)
        elif key in _SCHEMA_LISTS and isinstance(value, list):
            out[key] = [strip_descriptions(sub) for sub in value]
        else:
            out[key] = value
    return out


def compact_crd(doc: dict[str, Any]) -> dict[str, Any]:
    """Strip schema descriptions from every version of one CRD document (returns a copy)."""
    spec = dict(doc["spec"])
    versions = []
    for upstream in spec.get("versions") or []:
        version = dict(upstream)
        schema = version.get("schema")
        if isinstance(schema, dict) and "openAPIV3Schema" in schema:
            schema = dict(schema)
            schema["openAPIV3Schema"] = strip_descriptions(schema["openAPIV3Schema"])
            version["schema"] = schema
        versions.append(version)
    spec["versions"] = versions
    # apiextensions.k8s.io/v1beta1 style top-level validation (none upstream today).
    validation = spec.get("validation")
    if isinstance(validation, dict) and "openAPIV3Schema" in validation:
        spec["validation"] = {
            **validation,
            "openAPIV3Schema": strip_descriptions(validation["openAPIV3Schema"]),
        }
    return {**doc, "spec": spec}


def is_providerconfig_file(name: str) -> bool:
    return name.endswith(("_providerconfigs.yaml", "_clusterproviderconfigs.yaml"))


def selected(folder: str, name: str, with_cert_manager: bool) -> bool:
    """Whether ``<folder>/<name>`` goes into the compact catalog."""
    if not name.endswith((".yaml", ".yml")):
        return False
    if folder == "cert-manager":
        return with_cert_manager
    return True


def dump(docs: list[dict[str, Any]]) -> str:
    return yaml.dump_all(
        docs,
        Dumper=_Dumper,
        sort_keys=False,
        default_flow_style=False,
        allow_unicode=True,
        width=1_000_000,
        explicit_start=len(docs) > 1,
    )


def derive(source: Path, out: Path, with_cert_manager: bool = False) -> dict[str, Any]:
    """Write the compact catalog; return summary statistics."""
    stats: dict[str, Any] = {"folders": {}, "files": 0, "crds": 0, "before": 0, "after": 0}
    folders = sorted(p for p in source.iterdir() if p.is_dir())
    if not folders:
        raise SystemExit(f"no CRD folders under {source}")
    for folder in folders:
        if folder.name == "gardener":
            stats["folders"][folder.name] = derive_gardener(folder, out / folder.name)
            for key in ("files", "crds", "before", "after"):
                stats[key] += stats["folders"][folder.name][key]
            continue
        names = sorted(
            p.name
            for p in folder.iterdir()
            if p.is_file() and selected(folder.name, p.name, with_cert_manager)
        )
        target_dir = out / folder.name
        if not names:
            continue
        sources = [folder / name for name in names]
        if folder.name in GO_MODULE_ADDITIONS:
            sources += go_module_files(GO_MODULE_ADDITIONS[folder.name])
        fstats = write_compact(sources, target_dir)
        stats["folders"][folder.name] = fstats
        for key in ("files", "crds", "before", "after"):
            stats[key] += fstats[key]
    for folder_name, module in GO_MODULE_CRDS.items():
        stats["folders"][folder_name] = derive_from_go_module(module, out / folder_name)
        for key in ("files", "crds", "before", "after"):
            stats[key] += stats["folders"][folder_name][key]
    # Drop output folders whose source is gone or no longer selected (a ``-fetched`` folder
    # holds CRDs copied from a provider's release that neither ../shared nor the Go module
    # proxy carries: kept as committed, see schemas/README.md).
    if out.is_dir():
        for stale_dir in sorted(p for p in out.iterdir() if p.is_dir()):
            if stale_dir.name not in stats["folders"] and not stale_dir.name.endswith(FETCHED):
                for f in stale_dir.glob("*.yaml"):
                    f.unlink()
                if not any(stale_dir.iterdir()):
                    stale_dir.rmdir()
    return stats


#: Output folders ending so are left alone: CRDs from a provider release that neither
#: ``../shared/crds`` nor the Go module proxy holds (the provider's module is refused there).
FETCHED = "-fetched"

#: CRDs ``../shared/crds`` does not hold, taken from a pinned Go module (the module proxy
#: serves the upstream repository's tree): folder -> (module, version, files in it).
GO_MODULE_CRDS = {
    # The PodMonitor in examples/install/50-monitoring.yaml
    "prometheus-operator": (
        "github.com/prometheus-operator/prometheus-operator",
        "v0.85.0",
        ("example/prometheus-operator-crd/monitoring.coreos.com_podmonitors.yaml",),
    ),
}


#: CRDs added to a folder ``../shared/crds`` does hold, from a pinned Go module: folder ->
#: (module, version, files in it). ``../shared/crds/crossplane`` is Crossplane v2.3.4 without
#: the activation API; the ManagedResourceActivationPolicy of
#: ``examples/install/15-activation-policy.yaml`` is validated against v2.4.0's.
GO_MODULE_ADDITIONS = {
    "crossplane": (
        "github.com/crossplane/crossplane/v2",
        "v2.4.0",
        (
            "cluster/crds/apiextensions.crossplane.io_managedresourceactivationpolicies.yaml",
            "cluster/crds/apiextensions.crossplane.io_managedresourcedefinitions.yaml",
        ),
    ),
}


def go_module_files(module: tuple[str, str, tuple[str, ...]]) -> list[Path]:
    """The named files of a Go module, downloaded with ``go mod download`` (or already in the
    module cache)."""
    import json
    import shutil
    import subprocess

    path, version, files = module
    go = shutil.which("go") or "/usr/local/go/bin/go"
    listed = subprocess.run(
        [go, "mod", "download", "-json", f"{path}@{version}"],
        capture_output=True,
        text=True,
        check=True,
        cwd=Path(__file__).parent,
    )
    root = Path(json.loads(listed.stdout)["Dir"])
    return [root / name for name in files]


def derive_from_go_module(
    module: tuple[str, str, tuple[str, ...]], target_dir: Path
) -> dict[str, int]:
    """Compact the named CRD files of a Go module into their own folder."""
    return write_compact(go_module_files(module), target_dir)


def write_compact(sources: list[Path], target_dir: Path) -> dict[str, int]:
    """Compact the CRDs of each of ``sources`` into ``target_dir/<stem>.yaml`` (unchanged files
    are not rewritten; stale ``*.yaml`` there are removed); return the folder's statistics."""
    target_dir.mkdir(parents=True, exist_ok=True)
    stats = {"files": 0, "crds": 0, "before": 0, "after": 0}
    written = set()
    for source in sources:
        raw = source.read_bytes()
        docs = [
            d
            for d in yaml.load_all(raw, Loader=_Loader)
            if isinstance(d, dict) and d.get("kind") == "CustomResourceDefinition"
        ]
        if not docs:
            continue
        text = dump([compact_crd(d) for d in docs]).encode()
        target = target_dir / (source.stem + ".yaml")
        if not target.exists() or target.read_bytes() != text:
            target.write_bytes(text)
        written.add(target.name)
        stats["files"] += 1
        stats["crds"] += len(docs)
        stats["before"] += len(raw)
        stats["after"] += len(text)
    for stale in target_dir.glob("*.yaml"):
        if stale.name not in written:
            stale.unlink()
    return stats


def derive_gardener(folder: Path, target_dir: Path) -> dict[str, int]:
    """Write the Shoot schema derived from Gardener's proto and API reference."""
    proto = folder / gardener_shoot_schema.PROTO_FILE
    reference = folder / gardener_shoot_schema.REFERENCE_FILE
    raw = proto.read_bytes() + reference.read_bytes()
    crd = gardener_shoot_schema.shoot_crd(
        proto.read_text(encoding="utf-8"), reference.read_text(encoding="utf-8")
    )
    text = dump([crd]).encode()
    target_dir.mkdir(parents=True, exist_ok=True)
    target = target_dir / gardener_shoot_schema.OUTPUT_FILE
    if not target.exists() or target.read_bytes() != text:
        target.write_bytes(text)
    for stale in target_dir.glob("*.yaml"):
        if stale.name != target.name:
            stale.unlink()
    return {"files": 1, "crds": 1, "before": len(raw), "after": len(text)}


def _fmt(n: int) -> str:
    return f"{n:>12,}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--source",
        type=Path,
        default=REPO.parent / "shared" / "crds",
        help="folder of upstream CRD folders (default: ../shared/crds)",
    )
    parser.add_argument(
        "--out",
        type=Path,
        default=REPO / "schemas" / "crds",
        help="output folder (default: schemas/crds)",
    )
    parser.add_argument(
        "--with-cert-manager",
        action="store_true",
        help="also derive the cert-manager CRDs (skipped by default)",
    )
    args = parser.parse_args(argv)
    source: Path = args.source
    if not source.is_dir():
        print(f"error: source folder {source} not found", file=sys.stderr)
        return 2
    stats = derive(source, args.out, with_cert_manager=args.with_cert_manager)
    print(f"{'folder':<24}{'files':>6}{'CRDs':>6}{'bytes before':>14}{'bytes after':>14}")
    for name, f in stats["folders"].items():
        print(f"{name:<24}{f['files']:>6}{f['crds']:>6}  {_fmt(f['before'])}  {_fmt(f['after'])}")
    ratio = stats["after"] / stats["before"] if stats["before"] else 0
    print(
        f"{'total':<24}{stats['files']:>6}{stats['crds']:>6}  {_fmt(stats['before'])}  "
        f"{_fmt(stats['after'])}  ({ratio:.0%})"
    )
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
