#!/usr/bin/env python3
"""Derive the table of namespaced twins: which kind a namespaced composite emits instead.

A Crossplane v2 namespaced composite can only compose namespaced resources in its own
namespace. Every upjet, provider-kubernetes and provider-helm kind has a namespaced twin in
the ``.m.`` group (``ec2.aws.upbound.io`` -> ``ec2.aws.m.upbound.io``,
``kubernetes.crossplane.io`` -> ``kubernetes.m.crossplane.io``), and Crossplane's cluster-scoped
``ClusterUsage`` has the namespaced ``Usage``. The twin's versions restart (``v1beta1`` of a
``.m.`` kind has the schema of the newest cluster-scoped version), so the version is picked by
*shape*: for each served cluster-scoped version, the served twin version whose ``spec``
(without deletionPolicy, providerConfigRef, managementPolicies and the connection-secret
fields, whose shapes differ by design) has the same field tree -- names, types, enums,
formats, required -- once the namespace-only differences are ignored. The same version name
wins when it matches, then the twin's storage version.

Writes ``platform/fnplatform/namespaced_kinds.py`` (no runtime dependency on the
upstream CRDs):

* ``TWINS``: (cluster apiVersion, kind) -> (namespaced apiVersion, kind);
* ``NO_TWIN``: (cluster apiVersion, kind) -> why no namespaced version can take its body;
* ``NAMESPACED``: every (apiVersion, kind) already namespaced (emitted as is);
* ``NAMESPACE_DROPPED``: namespaced (apiVersion, kind) -> spec paths (``[]`` marks a list)
  where the cluster-scoped schema has a ``namespace`` and the twin has none (the twin reads
  the Secret from its own namespace, or writes it there).

Usage::

    python tools/derive_namespaced_kinds.py [--source ../upstream-crds] [--check]
"""

from __future__ import annotations

import argparse
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

REPO = Path(__file__).resolve().parent.parent
TARGET = REPO / "platform" / "fnplatform" / "namespaced_kinds.py"
_Loader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

#: Twins that are not ``.m.`` groups: (group, cluster kind) -> namespaced kind, same group.
RENAMED_TWINS = {("protection.crossplane.io", "ClusterUsage"): "Usage"}
#: Top-level spec fields whose shape differs by design between the scopes (checked apart).
SCOPE_FIELDS = frozenset(
    {
        "deletionPolicy",
        "providerConfigRef",
        "writeConnectionSecretToRef",
        "publishConnectionDetailsTo",
        "managementPolicies",
    }
)
#: Dropped by every twin; the library handles it for every kind, so the table leaves it out.
CONNECTION_SECRET = "spec.writeConnectionSecretToRef"
#: Schema keywords that don't change what a body may hold.
_IGNORED = frozenset({"description", "default", "x-kubernetes-validations"})


@dataclass
class Crd:
    group: str
    kind: str
    scope: str
    versions: dict[str, dict[str, Any]]  # served version name -> openAPIV3Schema
    storage: str


def load(source: Path) -> dict[tuple[str, str], Crd]:
    """Every CRD under ``source`` by (group, kind)."""
    crds: dict[tuple[str, str], Crd] = {}
    for path in sorted(source.rglob("*.yaml")):
        for doc in yaml.load_all(path.read_bytes(), Loader=_Loader):
            if not isinstance(doc, dict) or doc.get("kind") != "CustomResourceDefinition":
                continue
            spec = doc["spec"]
            versions = {
                v["name"]: (v.get("schema") or {}).get("openAPIV3Schema") or {}
                for v in spec["versions"]
                if v.get("served")
            }
            storage = next((v["name"] for v in spec["versions"] if v.get("storage")), "")
            crds[(spec["group"], spec["names"]["kind"])] = Crd(
                spec["group"], spec["names"]["kind"], spec["scope"], versions, storage
            )
    return crds


def twin_group(group: str) -> str | None:
    """The ``.m.`` group of a cluster-scoped provider group, if the naming rule applies."""
    for suffix in (".upbound.io", ".crossplane.io"):
        if group.endswith(suffix) and ".m." not in f".{group}":
            return group[: -len(suffix)] + ".m" + suffix
    return None


def shape(schema: Any) -> Any:
    """The field tree of a schema without what the scopes may differ in (namespaces)."""
    if isinstance(schema, list):
        return [shape(s) for s in schema]
    if not isinstance(schema, dict):
        return schema
    out: dict[str, Any] = {}
    for key, value in sorted(schema.items()):
        if key in _IGNORED:
            continue
        if key == "properties":
            out[key] = {n: shape(s) for n, s in sorted(value.items()) if n != "namespace"}
        elif key == "required":
            out[key] = sorted(r for r in value if r != "namespace")
        else:
            out[key] = shape(value)
    return out


def body_shape(schema: dict[str, Any]) -> Any:
    """The shape of what a builder writes: ``spec`` without the fields the scopes differ in."""
    spec = (schema.get("properties") or {}).get("spec") or {}
    props = spec.get("properties") or {}
    return {k: shape(v) for k, v in sorted(props.items()) if k not in SCOPE_FIELDS}


def dropped_namespaces(cluster: Any, twin: Any, path: str = "spec") -> list[str]:
    """Paths under ``spec`` where ``cluster`` has a ``namespace`` property and ``twin`` has none."""
    if not isinstance(cluster, dict) or not isinstance(twin, dict):
        return []
    found: list[str] = []
    c_props, t_props = cluster.get("properties") or {}, twin.get("properties") or {}
    if "namespace" in c_props and "namespace" not in t_props and t_props:
        found.append(path)
    for name, sub in c_props.items():
        if name in t_props:
            found += dropped_namespaces(sub, t_props[name], f"{path}.{name}")
    if "items" in cluster and "items" in twin:
        found += dropped_namespaces(cluster["items"], twin["items"], f"{path}[]")
    return found


def spec_of(schema: dict[str, Any]) -> dict[str, Any]:
    return (schema.get("properties") or {}).get("spec") or {}


def derive(crds: dict[tuple[str, str], Crd]) -> dict[str, Any]:
    twins: dict[tuple[str, str], tuple[str, str]] = {}
    no_twin: dict[tuple[str, str], str] = {}
    namespaced: set[tuple[str, str]] = set()
    dropped: dict[tuple[str, str], tuple[str, ...]] = {}
    for (group, kind), crd in sorted(crds.items()):
        if crd.scope == "Namespaced":
            namespaced.update((f"{group}/{v}", kind) for v in crd.versions)
            continue
        renamed = RENAMED_TWINS.get((group, kind))
        tgroup = group if renamed else twin_group(group)
        twin = crds.get((tgroup, renamed or kind)) if tgroup else None
        if twin is None or twin.scope != "Namespaced":
            for version in sorted(crd.versions):
                no_twin[(f"{group}/{version}", kind)] = "cluster-scoped, without a namespaced twin"
            continue
        for version, schema in sorted(crd.versions.items()):
            wanted = body_shape(schema)
            order = sorted(twin.versions, key=lambda v: (v != version, v != twin.storage, v))
            match = next((v for v in order if body_shape(twin.versions[v]) == wanted), None)
            key = (f"{group}/{version}", kind)
            if match is None:
                no_twin[key] = (
                    f"its namespaced twin ({', '.join(sorted(twin.versions))}) "
                    "takes a different body"
                )
                continue
            target = (f"{tgroup}/{match}", twin.kind)
            twins[key] = target
            paths = [
                p
                for p in dropped_namespaces(spec_of(schema), spec_of(twin.versions[match]))
                if p != CONNECTION_SECRET
            ]
            if paths:
                dropped[target] = tuple(sorted(set(dropped.get(target, ())) | set(paths)))
    return {"twins": twins, "no_twin": no_twin, "namespaced": namespaced, "dropped": dropped}


def render(table: dict[str, Any]) -> str:
    lines = [
        '"""Namespaced twins of the kinds the library can emit.',
        "",
        "GENERATED by tools/derive_namespaced_kinds.py from the upstream CRDs (see its docstring",
        'for how a version is picked). Do not edit; rerun the tool."""',
        "",
        "from __future__ import annotations",
        "",
        "Key = tuple[str, str]",
        "",
        "#: (cluster-scoped apiVersion, kind) -> (namespaced apiVersion, kind) with the same body.",
        "TWINS: dict[Key, Key] = {",
    ]
    lines += [f"    {k!r}:\n        {v!r}," for k, v in sorted(table["twins"].items())]
    lines += [
        "}",
        "",
        "#: Cluster-scoped kinds whose namespaced twin can't take the same body.",
        "NO_TWIN: dict[Key, str] = {",
    ]
    lines += [f"    {k!r}:\n        {v!r}," for k, v in sorted(table["no_twin"].items())]
    lines += [
        "}",
        "",
        "#: (apiVersion, kind) already namespaced.",
        "NAMESPACED: frozenset[Key] = frozenset({",
    ]
    lines += [f"    {k!r}," for k in sorted(table["namespaced"])]
    lines += [
        "})",
        "",
        "#: Namespaced (apiVersion, kind) -> spec paths whose `namespace` the twin dropped.",
        "NAMESPACE_DROPPED: dict[Key, tuple[str, ...]] = {",
    ]
    for k, paths in sorted(table["dropped"].items()):
        lines.append(f"    {k!r}: (")
        lines += [f"        {p!r}," for p in paths]
        lines.append("    ),")
    lines += ["}", ""]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--source", type=Path, default=REPO.parent / "shared" / "crds")
    parser.add_argument("--check", action="store_true", help="exit 1 when the table is stale")
    args = parser.parse_args(argv)
    text = render(derive(load(args.source)))
    if args.check:
        stale = not TARGET.exists() or TARGET.read_text() != text
        print(f"out of date: {TARGET}" if stale else "up to date")
        return 1 if stale else 0
    TARGET.write_text(text)
    print(f"wrote {TARGET.relative_to(REPO)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
