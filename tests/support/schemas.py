"""Offline validation of Kubernetes objects against the CRDs in ``schemas/crds``.

The compact CRDs are derived from the pinned upstream releases by ``tools/derive_schemas.py``
(see ``schemas/README.md``). This module mimics what the API server does with a custom
resource, closely enough to catch the mistakes a composition function makes:

1. Look up ``(apiVersion, kind)``; unknown kinds, unknown versions and versions that exist
   but are not served are errors.
2. Apply schema ``default``\\ s (structural defaulting, like the API server does before
   validation), on a copy of the object.
3. Validate with ``jsonschema`` (Draft 4, which matches OpenAPI v3's boolean
   ``exclusiveMinimum``/``exclusiveMaximum``), after translating the OpenAPI/Kubernetes
   specifics:

   * ``nullable: true`` allows ``null``;
   * ``x-kubernetes-int-or-string: true`` allows an integer or a string;
   * an object schema without ``additionalProperties`` and without
     ``x-kubernetes-preserve-unknown-fields`` **rejects** unknown fields (the API server
     would silently prune them, which for us is always a bug);
   * ``metadata`` (top level and in ``x-kubernetes-embedded-resource`` objects) is only
     checked for ``name``/``generateName``/``namespace`` being strings and ``labels``/
     ``annotations`` being string maps (label values must also be valid label values);
   * ``x-kubernetes-embedded-resource`` requires ``apiVersion`` and ``kind``;
   * ``x-kubernetes-list-type: set|map`` require unique items / unique map keys.

4. Evaluate the CEL rules of ``x-kubernetes-validations`` with ``celpy``, with ``self`` bound
   to the node where the rule is declared, only where that node is present (and not null).
   Transition rules (referencing ``oldSelf``) are skipped. A rule that fails *or errors*
   (e.g. it reads a missing field without ``has()``) is reported with its ``message``
   (``messageExpression`` is tried first). Property names are escaped the Kubernetes way
   (``namespace`` -> ``__namespace__``, ``-`` -> ``__dash__``...). Rules calling functions
   that celpy lacks and that are not emulated here are skipped and listed in
   ``Catalog.skipped_rules``.

Usage::

    from tests.support.schemas import assert_valid, load_catalog

    errors = load_catalog().validate(obj)   # list[str], empty when valid
    assert_valid(objs)                      # AssertionError listing every error
"""

from __future__ import annotations

import copy
import functools
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import celpy
import yaml
from celpy import celtypes
from jsonschema import Draft4Validator, ValidationError, validators

REPO = Path(__file__).resolve().parents[2]
DEFAULT_ROOT = REPO / "schemas" / "crds"

_Loader: Any = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

#: CEL rules met during validation but not evaluated (they call functions celpy lacks).
SKIPPED_RULES: set[str] = set()

# --------------------------------------------------------------------------------------
# Catalog
# --------------------------------------------------------------------------------------


@dataclass(frozen=True)
class CRDVersion:
    """One version of one CRD."""

    group: str
    version: str
    kind: str
    plural: str
    scope: str
    served: bool
    storage: bool
    deprecated: bool
    deprecation_warning: str | None
    schema: Mapping[str, Any] = field(repr=False)
    source: str = ""

    @property
    def api_version(self) -> str:
        return f"{self.group}/{self.version}"


class Catalog:
    """All CRD versions under a root folder, indexed by ``(apiVersion, kind)``."""

    def __init__(self, versions: Iterable[CRDVersion]) -> None:
        self.entries: dict[tuple[str, str], CRDVersion] = {}
        self._by_group_kind: dict[tuple[str, str], list[CRDVersion]] = {}
        self._validators: dict[tuple[str, str], Any] = {}
        for v in versions:
            key = (v.api_version, v.kind)
            if key in self.entries:
                raise ValueError(
                    f"{v.api_version} {v.kind} defined twice: {self.entries[key].source}, "
                    f"{v.source}"
                )
            self.entries[key] = v
            self._by_group_kind.setdefault((v.group, v.kind), []).append(v)

    @property
    def skipped_rules(self) -> set[str]:
        """CEL rules met so far but not evaluated (they call functions celpy lacks)."""
        return SKIPPED_RULES

    def __len__(self) -> int:
        return len(self.entries)

    def __contains__(self, key: object) -> bool:
        return key in self.entries

    def lookup(self, api_version: str, kind: str) -> CRDVersion | None:
        return self.entries.get((api_version, kind))

    def versions_of(self, group: str, kind: str) -> list[CRDVersion]:
        return list(self._by_group_kind.get((group, kind), []))

    def storage_version(self, group: str, kind: str) -> CRDVersion | None:
        return next((v for v in self.versions_of(group, kind) if v.storage), None)

    # ---------------------------------------------------------------- validation

    def validate(self, obj: Mapping[str, Any]) -> list[str]:
        """Validate one object; return human-readable errors (empty list when valid)."""
        if not isinstance(obj, Mapping):
            return [f"? ? ?: (root): expected an object, got {type(obj).__name__}"]
        api_version = obj.get("apiVersion")
        kind = obj.get("kind")
        meta = obj.get("metadata")
        name = meta.get("name") if isinstance(meta, Mapping) else None
        if name is None and isinstance(meta, Mapping) and meta.get("generateName"):
            name = f"{meta['generateName']}*"
        prefix = f"{api_version} {kind} {name if name is not None else '<no name>'}"

        problem = self._lookup_problem(api_version, kind)
        if problem:
            return [f"{prefix}: (root): {problem}"]
        entry = self.entries[(api_version, kind)]  # type: ignore[index]
        validator = self._validator(entry)
        instance = copy.deepcopy(dict(obj))
        apply_defaults(instance, entry.schema)
        found = list(validator.iter_errors(instance))
        if any(e.validator == "type" for e in found):
            # Like the API server: CEL rules are not run when there are type errors.
            found = [e for e in found if e.validator != "x-kubernetes-validations"]
        return [f"{prefix}: {msg}" for err in found for msg in _render_error(err)]

    def warnings(self, obj: Mapping[str, Any]) -> list[str]:
        """Non-fatal findings: use of a deprecated (but still served) version."""
        entry = self.lookup(str(obj.get("apiVersion")), str(obj.get("kind")))
        if entry is None or not entry.deprecated:
            return []
        newer = [
            v.version
            for v in self.versions_of(entry.group, entry.kind)
            if v.served and not v.deprecated
        ]
        msg = entry.deprecation_warning or f"{entry.api_version} {entry.kind} is deprecated"
        return [f"{entry.api_version} {entry.kind}: {msg} (served, not deprecated: {newer})"]

    def _lookup_problem(self, api_version: Any, kind: Any) -> str | None:
        if not isinstance(api_version, str) or not api_version:
            return "missing apiVersion"
        if not isinstance(kind, str) or not kind:
            return "missing kind"
        entry = self.entries.get((api_version, kind))
        if entry is not None:
            if not entry.served:
                served = [v.version for v in self.versions_of(entry.group, kind) if v.served]
                return (
                    f"version {entry.version} of {kind}.{entry.group} exists but is not "
                    f"served (served versions: {', '.join(served) or 'none'})"
                )
            return None
        group = api_version.rpartition("/")[0]
        known = self.versions_of(group, kind)
        if known:
            served = [v.version for v in known if v.served]
            return (
                f"unknown version {api_version!r} for {kind}.{group} "
                f"(served versions: {', '.join(served) or 'none'})"
            )
        kinds = sorted({k for (g, k) in self._by_group_kind if g == group})
        if kinds:
            return f"unknown kind {kind!r} in group {group!r} (known kinds: {', '.join(kinds)})"
        return f"unknown apiVersion/kind: no CRD for {kind} in group {group!r}"

    def _validator(self, entry: CRDVersion) -> Any:
        key = (entry.api_version, entry.kind)
        v = self._validators.get(key)
        if v is None:
            schema = translate_schema(entry.schema, root=True)
            v = _K8sValidator(schema)
            self._validators[key] = v
        return v


def _iter_crd_versions(path: Path, root: Path) -> Iterator[CRDVersion]:
    for doc in yaml.load_all(path.read_text(encoding="utf-8"), Loader=_Loader):
        if not isinstance(doc, dict) or doc.get("kind") != "CustomResourceDefinition":
            continue
        spec = doc["spec"]
        for ver in spec.get("versions") or []:
            schema = (ver.get("schema") or {}).get("openAPIV3Schema")
            if schema is None:
                schema = (spec.get("validation") or {}).get("openAPIV3Schema") or {}
            yield CRDVersion(
                group=spec["group"],
                version=ver["name"],
                kind=spec["names"]["kind"],
                plural=spec["names"]["plural"],
                scope=spec.get("scope", "Namespaced"),
                served=bool(ver.get("served", False)),
                storage=bool(ver.get("storage", False)),
                deprecated=bool(ver.get("deprecated", False)),
                deprecation_warning=ver.get("deprecationWarning"),
                schema=schema,
                source=str(path.relative_to(root)),
            )


def load_catalog(root: Path | str = DEFAULT_ROOT) -> Catalog:
    """Load (once per root folder, cached) every CRD version below ``root``."""
    return _load_catalog(Path(root).resolve())


@functools.lru_cache(maxsize=8)
def _load_catalog(root: Path) -> Catalog:
    files = sorted(p for p in root.rglob("*") if p.suffix in (".yaml", ".yml") and p.is_file())
    if not files:
        raise FileNotFoundError(f"no CRD files under {root} (run tools/derive_schemas.py)")
    return Catalog(v for p in files for v in _iter_crd_versions(p, root))


def assert_valid(objs: Iterable[Mapping[str, Any]], catalog: Catalog | None = None) -> None:
    """Raise ``AssertionError`` listing every error of every object."""
    cat = catalog if catalog is not None else load_catalog()
    errors = [e for obj in objs for e in cat.validate(obj)]
    if errors:
        raise AssertionError(
            f"{len(errors)} schema error(s):\n" + "\n".join(f"  - {e}" for e in errors)
        )


# --------------------------------------------------------------------------------------
# Defaulting (structural, like k8s.io/apiextensions-apiserver structuraldefaulting.Default)
# --------------------------------------------------------------------------------------


def apply_defaults(x: Any, schema: Mapping[str, Any]) -> None:
    """Apply ``default`` values of ``schema`` to ``x`` in place (recursively)."""
    if not isinstance(schema, Mapping):
        return
    if isinstance(x, dict):
        props = schema.get("properties") or {}
        for name, prop in props.items():
            if not isinstance(prop, Mapping) or "default" not in prop:
                continue
            if name not in x or (x[name] is None and not prop.get("nullable")):
                x[name] = copy.deepcopy(prop["default"])
        addl = schema.get("additionalProperties")
        for name, value in x.items():
            if name in props:
                apply_defaults(value, props[name])
            elif isinstance(addl, Mapping):
                apply_defaults(value, addl)
    elif isinstance(x, list):
        items = schema.get("items")
        if isinstance(items, Mapping):
            for item in x:
                apply_defaults(item, items)


# --------------------------------------------------------------------------------------
# Schema translation: OpenAPI v3 + Kubernetes extensions -> JSON Schema Draft 4
# --------------------------------------------------------------------------------------

_LABEL_VALUE = r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$"
_STRING_MAP = {"type": "object", "additionalProperties": {"type": "string"}}
_METADATA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "name": {"type": "string"},
        "generateName": {"type": "string"},
        "namespace": {"type": "string"},
        "labels": {
            "type": "object",
            "additionalProperties": {"type": "string", "maxLength": 63, "pattern": _LABEL_VALUE},
        },
        "annotations": _STRING_MAP,
    },
    # Everything else in ObjectMeta (ownerReferences, finalizers, ...) is not checked.
}

_SUB_MAPS = ("properties", "patternProperties")
_SUB_LISTS = ("allOf", "anyOf", "oneOf")


def _metadata_schema(crd_meta: Any) -> dict[str, Any]:
    """ObjectMeta check, plus any extra constraints a CRD puts on metadata.name."""
    schema = copy.deepcopy(_METADATA)
    if isinstance(crd_meta, Mapping):
        for name, prop in (crd_meta.get("properties") or {}).items():
            if name in ("name", "generateName") and isinstance(prop, Mapping):
                schema["properties"][name] = {**translate_schema(prop), "type": "string"}
    return schema


def translate_schema(node: Mapping[str, Any], root: bool = False) -> dict[str, Any]:
    """Translate one OpenAPI v3 (structural) schema node to JSON Schema Draft 4."""
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key in _SUB_MAPS and isinstance(value, Mapping):
            out[key] = {k: translate_schema(v) for k, v in value.items()}
        elif key in ("items", "additionalProperties", "not") and isinstance(value, Mapping):
            out[key] = translate_schema(value)
        elif (key == "items" or key in _SUB_LISTS) and isinstance(value, list):
            out[key] = [translate_schema(v) for v in value]
        elif key in ("description", "example", "default", "nullable"):
            continue
        else:
            out[key] = value

    preserve = bool(node.get("x-kubernetes-preserve-unknown-fields"))
    embedded = bool(node.get("x-kubernetes-embedded-resource"))

    if node.get("x-kubernetes-int-or-string"):
        out["type"] = ["integer", "string"]
        # The anyOf [{type: integer}, {type: string}] controller-gen emits is now redundant
        # and would only produce an opaque error message.
        if out.get("anyOf") == [{"type": "integer"}, {"type": "string"}]:
            del out["anyOf"]

    is_object = out.get("type") == "object" or (
        "type" not in out and ("properties" in out or embedded)
    )
    if is_object:
        props = out.setdefault("properties", {}) if (root or embedded) else out.get("properties")
        if root or embedded:
            props.setdefault("apiVersion", {"type": "string"})
            props.setdefault("kind", {"type": "string"})
            props["metadata"] = _metadata_schema(node.get("properties", {}).get("metadata"))
        if embedded:
            out["required"] = sorted({*out.get("required", []), "apiVersion", "kind"})
            out["x-embedded-nonempty"] = ["apiVersion", "kind"]
        if "additionalProperties" not in out and not preserve:
            out["additionalProperties"] = False

    if node.get("nullable"):
        if any(k in out for k in (*_SUB_LISTS, "not")):
            out = {"anyOf": [{"type": "null"}, out]}
        else:
            if "type" in out:
                types = out["type"] if isinstance(out["type"], list) else [out["type"]]
                out["type"] = [*types, "null"]
            if "enum" in out and None not in out["enum"]:
                out["enum"] = [*out["enum"], None]
    return out


# --------------------------------------------------------------------------------------
# Custom keywords
# --------------------------------------------------------------------------------------


def _kw_list_type(validator: Any, list_type: Any, instance: Any, schema: Mapping[str, Any]):
    if not isinstance(instance, list):
        return
    if list_type == "set":
        seen: list[Any] = []
        for i, item in enumerate(instance):
            if item in seen:
                yield ValidationError(f"duplicate entry {item!r} in a list-type=set", path=[i])
            seen.append(item)
    elif list_type == "map":
        keys = schema.get("x-kubernetes-list-map-keys") or []
        seen_keys: set[str] = set()
        for i, item in enumerate(instance):
            if not isinstance(item, Mapping):
                continue
            ident = repr(tuple(item.get(k) for k in keys))
            if ident in seen_keys:
                key_values = {k: item.get(k) for k in keys}
                yield ValidationError(
                    f"duplicate entry with key(s) {key_values} in a list-type=map", path=[i]
                )
            seen_keys.add(ident)


def _kw_embedded_nonempty(validator: Any, names: Any, instance: Any, schema: Any):
    if not isinstance(instance, Mapping):
        return
    for name in names:
        if name in instance and instance[name] in ("", None):
            yield ValidationError(f"{name} must not be empty", path=[name])


def _kw_cel(validator: Any, rules: Any, instance: Any, schema: Mapping[str, Any]):
    if instance is None or not _matches_type(instance, schema.get("type")):
        return  # absent/null nodes are not evaluated; type errors are reported elsewhere
    activation: dict[str, Any] | None = None
    for rule in rules or []:
        text = rule.get("rule", "")
        if not text or _references_old_self(text):
            continue
        program = _cel_program(text)
        if program is None:
            SKIPPED_RULES.add(text)
            continue
        if activation is None:
            activation = {"self": to_cel(instance, schema)}
        problem: str | None = None
        try:
            result = program.evaluate(activation)
            if isinstance(result, celpy.CELEvalError):
                problem = f"rule evaluation error: {_short_error(result)}"
            elif not (isinstance(result, (bool, celtypes.BoolType)) and bool(result)):
                problem = ""
        except celpy.CELEvalError as exc:
            problem = f"rule evaluation error: {_short_error(exc)}"
        except Exception as exc:
            problem = f"rule evaluation error: {type(exc).__name__}: {exc}"
        if problem is None:
            continue
        message = _cel_message(rule, activation) or f"failed rule: {text}"
        if problem:
            message = f"{message} ({problem})"
        path = _field_path(rule.get("fieldPath"))
        yield ValidationError(message, path=path, validator_value=text)


def _matches_type(instance: Any, types: Any) -> bool:
    if types is None:
        return True
    checks = {
        "object": lambda v: isinstance(v, Mapping),
        "array": lambda v: isinstance(v, list),
        "string": lambda v: isinstance(v, str),
        "integer": lambda v: isinstance(v, int) and not isinstance(v, bool),
        "number": lambda v: isinstance(v, (int, float)) and not isinstance(v, bool),
        "boolean": lambda v: isinstance(v, bool),
        "null": lambda v: v is None,
    }
    types = types if isinstance(types, list) else [types]
    return any(checks.get(t, lambda v: True)(instance) for t in types)


def _references_old_self(text: str) -> bool:
    return re.search(r"\boldSelf\b", text) is not None


def _short_error(exc: Any) -> str:
    args = getattr(exc, "args", ())
    msg = str(args[0]) if args else str(exc)
    if "no such member in mapping" in msg or "no such key" in msg:
        return msg.split(" (in activation")[0]
    if "no matching overload for _||_" in msg or "no matching overload for _&&_" in msg:
        return "a field read without has() is missing"
    return msg.split(" (in activation")[0][:200]


def _cel_message(rule: Mapping[str, Any], activation: Mapping[str, Any]) -> str | None:
    expr = rule.get("messageExpression")
    if expr:
        program = _cel_program(expr)
        if program is not None:
            try:
                value = program.evaluate(activation)
                if isinstance(value, str) and value:
                    return str(value)
            except Exception:
                pass
    return rule.get("message") or (f"failed rule: {expr}" if expr else None)


def _field_path(fp: Any) -> list[Any]:
    """Turn a rule's ``fieldPath`` (``.spec.a['b'][0]``) into path components."""
    if not isinstance(fp, str) or not fp:
        return []
    parts: list[Any] = []
    for m in re.finditer(r"\.([A-Za-z0-9_\-]+)|\['([^']*)'\]|\[(\d+)\]", fp):
        name, quoted, index = m.groups()
        parts.append(int(index) if index is not None else (name or quoted))
    return parts


_K8sValidator = validators.extend(
    Draft4Validator,
    {
        "x-kubernetes-validations": _kw_cel,
        "x-kubernetes-list-type": _kw_list_type,
        "x-embedded-nonempty": _kw_embedded_nonempty,
    },
)


# --------------------------------------------------------------------------------------
# CEL
# --------------------------------------------------------------------------------------

_CEL_ENV = celpy.Environment()


def _s(fn: Any) -> Any:
    @functools.wraps(fn)
    def wrapper(*args: Any) -> Any:
        result = fn(*args)
        if isinstance(result, str):
            return celtypes.StringType(result)
        if isinstance(result, bool):
            return celtypes.BoolType(result)
        if isinstance(result, int):
            return celtypes.IntType(result)
        if isinstance(result, list):
            return celtypes.ListType([celtypes.StringType(r) for r in result])
        return result

    return wrapper


def _heterogeneous_eq(a: Any, b: Any) -> Any:
    """CEL heterogeneous equality (values of different types are simply not equal)."""
    if isinstance(a, celpy.CELEvalError):
        return a
    if isinstance(b, celpy.CELEvalError):
        return b
    try:
        return celtypes.BoolType(bool(a == b))
    except TypeError:
        return celtypes.BoolType(False)


def _heterogeneous_ne(a: Any, b: Any) -> Any:
    result = _heterogeneous_eq(a, b)
    return result if isinstance(result, celpy.CELEvalError) else celtypes.BoolType(not result)


# Heterogeneous ==/!= (as in Kubernetes' cel-go) and a subset of the Kubernetes CEL
# string/list libraries that celpy does not have.
_K8S_FUNCTIONS: dict[str, Any] = {
    "_==_": _heterogeneous_eq,
    "_!=_": _heterogeneous_ne,
    "lowerAscii": _s(lambda s: str(s).lower()),
    "upperAscii": _s(lambda s: str(s).upper()),
    "trim": _s(lambda s: str(s).strip()),
    "replace": _s(lambda s, a, b, n=-1: str(s).replace(str(a), str(b), int(n))),
    "split": _s(lambda s, sep, n=-1: [] if n == 0 else str(s).split(str(sep), max(n - 1, -1))),
    "join": _s(lambda xs, sep="": str(sep).join(str(x) for x in xs)),
    "indexOf": _s(lambda s, sub: str(s).find(str(sub))),
    "lastIndexOf": _s(lambda s, sub: str(s).rfind(str(sub))),
    "isSorted": _s(lambda xs: list(xs) == sorted(xs)),
}
_CEL_MACROS = {"has", "all", "exists", "exists_one", "map", "filter", "size", "in"}
_SUPPORTED_CALLS = (
    set(getattr(celpy.evaluation, "base_functions", {})) | set(_K8S_FUNCTIONS) | _CEL_MACROS
)


@functools.lru_cache(maxsize=4096)
def _cel_program(text: str) -> Any:
    """Compile a CEL expression once; ``None`` if it calls unsupported functions."""
    calls = set(re.findall(r"\b([A-Za-z_][A-Za-z0-9_]*)\s*\(", _strip_strings(text)))
    if calls - _SUPPORTED_CALLS:
        return None
    try:
        ast = _CEL_ENV.compile(text)
    except Exception:
        return None
    return _CEL_ENV.program(ast, functions=_K8S_FUNCTIONS)


def _strip_strings(text: str) -> str:
    return re.sub(r"'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"", "''", text)


_CEL_RESERVED = {
    "true",
    "false",
    "null",
    "in",
    "as",
    "break",
    "const",
    "continue",
    "else",
    "for",
    "function",
    "if",
    "import",
    "let",
    "loop",
    "package",
    "namespace",
    "return",
    "var",
    "void",
    "while",
}
_ESCAPES = {"__": "__underscores__", ".": "__dot__", "-": "__dash__", "/": "__slash__"}


def escape_property(name: str) -> str | None:
    """Kubernetes CEL property-name escaping; ``None`` if the name is not accessible."""
    if not name or name[0].isdigit():
        return None
    if name in _CEL_RESERVED:
        return f"__{name}__"
    ok = True

    def repl(m: re.Match[str]) -> str:
        nonlocal ok
        s = m.group(0)
        if s in _ESCAPES:
            return _ESCAPES[s]
        ok = False
        return ""

    escaped = re.sub(r"__|[./\-]|[^A-Za-z0-9_]", repl, name)
    return escaped if ok else None


def to_cel(value: Any, schema: Mapping[str, Any] | None) -> Any:
    """Convert a JSON value to celpy types, guided by its (translated) schema."""
    schema = schema if isinstance(schema, Mapping) else {}
    if value is None:
        return None
    if isinstance(value, bool):
        return celtypes.BoolType(value)
    if isinstance(value, int):
        types = schema.get("type")
        types = types if isinstance(types, list) else [types]
        if "number" in types and "integer" not in types:
            return celtypes.DoubleType(value)
        return celtypes.IntType(value)
    if isinstance(value, float):
        return celtypes.DoubleType(value)
    if isinstance(value, str):
        return celtypes.StringType(value)
    if isinstance(value, list):
        items = schema.get("items")
        return celtypes.ListType([to_cel(v, items) for v in value])
    if isinstance(value, Mapping):
        props = schema.get("properties")
        addl = schema.get("additionalProperties")
        out: dict[Any, Any] = {}
        for k, v in value.items():
            if props and k in props:
                esc = escape_property(k)
                if esc is None:
                    continue
                out[celtypes.StringType(esc)] = to_cel(v, props[k])
            else:
                out[celtypes.StringType(k)] = to_cel(v, addl if isinstance(addl, Mapping) else None)
        return celtypes.MapType(out)
    return value


# --------------------------------------------------------------------------------------
# Error rendering
# --------------------------------------------------------------------------------------


def format_path(path: Iterable[Any]) -> str:
    out = ""
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
        elif re.fullmatch(r"[A-Za-z_][A-Za-z0-9_\-]*", str(part)):
            out += f".{part}" if out else str(part)
        else:
            out += f"[{part!r}]"
    return out or "(root)"


def _render_error(err: ValidationError) -> list[str]:
    path = list(err.absolute_path)
    if err.validator == "additionalProperties" and err.validator_value is False:
        known = set(err.schema.get("properties") or {})
        patterns = list(err.schema.get("patternProperties") or {})
        extras = [
            k for k in err.instance if k not in known and not any(re.search(p, k) for p in patterns)
        ]
        if extras:
            hint = sorted(known)
            hint_s = ", ".join(hint[:40]) + (", ..." if len(hint) > 40 else "")
            return [
                f"{format_path([*path, k])}: unknown field {k!r} (allowed here: {hint_s or 'none'})"
                for k in extras
            ]
    if err.validator == "required":
        return [f"{format_path(path)}: {err.message}"]
    if err.validator == "type":
        return [
            f"{format_path(path)}: {_short_repr(err.instance)} is not of type "
            f"{err.validator_value!r}"
        ]
    if err.validator == "enum":
        return [
            f"{format_path(path)}: {_short_repr(err.instance)} is not one of "
            f"{err.validator_value!r}"
        ]
    return [f"{format_path(path)}: {err.message}"]


def _short_repr(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 80 else text[:77] + "..."
