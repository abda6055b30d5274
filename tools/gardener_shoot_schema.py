#!/usr/bin/env python3
"""Derive a structural schema for Gardener's ``core.gardener.cloud/v1beta1`` Shoot.

Shoot is served by the aggregated gardener-apiserver, so no CRD exists upstream (see
``shared/crds/INDEX.md``, "Gardener Shoot: no CRD exists"). The only machine-readable field
tree is the protobuf IDL ``pkg/apis/core/v1beta1/generated.proto``; the generated API reference
``docs/api-reference/core.md`` adds which fields are optional and which embedded structs are
inlined in JSON. This tool turns both into a CustomResourceDefinition *document* in the same
compact form as ``schemas/crds`` (no descriptions), so the unit-test validator
(``tests/support/schemas.py``) and ``crossplane resource validate`` check Shoots like any other
kind.

What it encodes (and what it cannot):

* field names and nesting from the proto (a field's proto name is its JSON name; checked
  upstream for all 405 tagged Shoot fields); ``repeated`` -> array, ``map<k, v>`` -> object
  with ``additionalProperties``, scalars -> string/integer/number/boolean;
* embedded structs marked ``json:",inline"`` (a named field in the proto): a message-typed
  proto field that the API reference table of its parent does not list, while it lists the
  embedded message's fields, is flattened into the parent;
* required: a field the API reference does not mark ``(Optional)``;
* the two defaults the gardener-apiserver applies that a minimal Shoot relies on
  (``_DEFAULTS``);
* imported Kubernetes types by their JSON forms: ``RawExtension`` any JSON value,
  ``Quantity`` and ``IntOrString`` int-or-string, ``Time``/``Duration`` strings,
  ``ObjectReference``, ``Taint``, ``LabelSelector`` and ``CrossVersionObjectReference`` by
  their core fields;
* unknown fields are rejected everywhere except inside ``RawExtension`` values.

Enums, patterns and defaults are not in either source (they live in Go validation code), so
the schema catches misspelt or misplaced fields and wrong shapes, not bad values.

``tools/derive_schemas.py`` calls :func:`shoot_crd` for the ``gardener`` folder; run that to
regenerate ``schemas/crds/gardener/core.gardener.cloud_shoots.yaml``.
"""

from __future__ import annotations

import argparse
import html
import re
from dataclasses import dataclass
from typing import Any

PROTO_FILE = "apis-core-v1beta1-generated.proto"
REFERENCE_FILE = "api-reference-core.md"
OUTPUT_FILE = "core.gardener.cloud_shoots.yaml"
SOURCE = "gardener/gardener v1.149.3 (24c1ca87d675) pkg/apis/core/v1beta1/generated.proto"

_SCALARS: dict[str, dict[str, Any]] = {
    "string": {"type": "string"},
    "bytes": {"type": "string", "format": "byte"},
    "bool": {"type": "boolean"},
    "int32": {"type": "integer", "format": "int32"},
    "int64": {"type": "integer", "format": "int64"},
    "double": {"type": "number", "format": "double"},
    "float": {"type": "number", "format": "float"},
}

_INT_OR_STRING = {"x-kubernetes-int-or-string": True}
_STRING_MAP = {"type": "object", "additionalProperties": {"type": "string"}}

# Imported Kubernetes types, by their JSON (not proto) form.
_EXTERNAL: dict[str, dict[str, Any]] = {
    # RawExtension.UnmarshalJSON keeps any JSON value; the provider extension decodes it later.
    ".k8s.io.apimachinery.pkg.runtime.RawExtension": {
        "x-kubernetes-preserve-unknown-fields": True,
    },
    ".k8s.io.apimachinery.pkg.api.resource.Quantity": _INT_OR_STRING,
    ".k8s.io.apimachinery.pkg.util.intstr.IntOrString": _INT_OR_STRING,
    ".k8s.io.apimachinery.pkg.apis.meta.v1.Time": {"type": "string", "format": "date-time"},
    ".k8s.io.apimachinery.pkg.apis.meta.v1.Duration": {"type": "string"},
    ".k8s.io.apimachinery.pkg.apis.meta.v1.ObjectMeta": {"type": "object"},
    ".k8s.io.api.core.v1.ObjectReference": {
        "type": "object",
        "properties": {
            k: {"type": "string"}
            for k in (
                "apiVersion",
                "fieldPath",
                "kind",
                "name",
                "namespace",
                "resourceVersion",
                "uid",
            )
        },
    },
    ".k8s.io.api.core.v1.Taint": {
        "type": "object",
        "required": ["effect", "key"],
        "properties": {
            "effect": {"type": "string"},
            "key": {"type": "string"},
            "timeAdded": {"type": "string", "format": "date-time"},
            "value": {"type": "string"},
        },
    },
    ".k8s.io.api.autoscaling.v1.CrossVersionObjectReference": {
        "type": "object",
        "required": ["kind", "name"],
        "properties": {k: {"type": "string"} for k in ("apiVersion", "kind", "name")},
    },
    ".k8s.io.apimachinery.pkg.apis.meta.v1.LabelSelector": {
        "type": "object",
        "properties": {
            "matchExpressions": {
                "type": "array",
                "items": {
                    "type": "object",
                    "required": ["key", "operator"],
                    "properties": {
                        "key": {"type": "string"},
                        "operator": {"type": "string"},
                        "values": {"type": "array", "items": {"type": "string"}},
                    },
                },
            },
            "matchLabels": _STRING_MAP,
        },
    },
}

# Values the gardener-apiserver fills before validating (structural ``default``\\ s, applied by
# the validators like the API server's defaulting): an empty ``cloudProfile.kind`` becomes
# ``CloudProfile`` (pkg/utils/gardener/shoot.go, "default empty cloudprofile kind"), and
# ``spec.kubernetes`` is a struct value in Go (``Kubernetes Kubernetes``), so JSON null
# decodes to its zero value.
_DEFAULTS: dict[tuple[str, str], Any] = {
    ("CloudProfileReference", "kind"): "CloudProfile",
    ("ShootSpec", "kubernetes"): {},
}


@dataclass(frozen=True)
class ProtoField:
    """One field of a proto message: its JSON name, element type and shape."""

    name: str
    type: str
    repeated: bool = False
    map_key: str | None = None


_MESSAGE = re.compile(r"^message (\w+) \{\n(.*?)^\}", re.S | re.M)
_FIELD = re.compile(
    r"^  (?:(?P<label>optional|repeated) (?P<type>\S+)|map<(?P<key>\S+), (?P<value>\S+)>) "
    r"(?P<name>\w+) = \d+;",
    re.M,
)


def parse_proto(text: str) -> dict[str, list[ProtoField]]:
    """Messages of a go-to-protobuf IDL file, each with its fields in declaration order."""
    messages: dict[str, list[ProtoField]] = {}
    for message in _MESSAGE.finditer(text):
        fields = []
        for f in _FIELD.finditer(message.group(2)):
            if f.group("key"):
                fields.append(ProtoField(f.group("name"), f.group("value"), map_key=f.group("key")))
            else:
                fields.append(
                    ProtoField(
                        f.group("name"), f.group("type"), repeated=f.group("label") == "repeated"
                    )
                )
        messages[message.group(1)] = fields
    return messages


@dataclass(frozen=True)
class ReferenceType:
    """A type's table in the API reference: its JSON field names and the optional ones."""

    fields: tuple[str, ...]
    optional: frozenset[str]


_TYPE_SECTION = re.compile(r'<h3 id="([^"]+)">(\w+)\s*</h3>(.*?)(?=<h3 id=|\Z)', re.S)
_ROW = re.compile(r"<tr>\s*<td>\s*<code>([^<]+)</code>.*?</td>\s*<td>(.*?)</td>\s*</tr>", re.S)


def parse_reference(text: str) -> dict[str, ReferenceType]:
    """Type name -> its field table, from gen-crd-api-reference-docs Markdown."""
    types: dict[str, ReferenceType] = {}
    for section in _TYPE_SECTION.finditer(text):
        name, body = section.group(2), section.group(3)
        fields, optional = [], set()
        for row in _ROW.finditer(body):
            field = html.unescape(row.group(1)).strip()
            fields.append(field)
            if "(Optional)" in row.group(2):
                optional.add(field)
        types[name] = ReferenceType(tuple(fields), frozenset(optional))
    return types


class _Builder:
    def __init__(
        self, messages: dict[str, list[ProtoField]], reference: dict[str, ReferenceType]
    ) -> None:
        self.messages = messages
        self.reference = reference
        self.inlined: list[str] = []

    def type_schema(self, type_name: str, trail: tuple[str, ...]) -> dict[str, Any]:
        if type_name in _SCALARS:
            return dict(_SCALARS[type_name])
        if type_name in _EXTERNAL:
            return dict(_EXTERNAL[type_name])
        if type_name.startswith("."):
            raise SystemExit(f"unmapped imported type {type_name} (add it to _EXTERNAL)")
        if type_name in trail:
            raise SystemExit(f"recursive message {type_name} via {' > '.join(trail)}")
        return self.message_schema(type_name, (*trail, type_name))

    def field_schema(self, field: ProtoField, trail: tuple[str, ...]) -> dict[str, Any]:
        element = self.type_schema(field.type, trail)
        if field.map_key is not None:
            return {"type": "object", "additionalProperties": element}
        if field.repeated:
            return {"type": "array", "items": element}
        return element

    def is_inline(self, parent: str, field: ProtoField) -> bool:
        ref = self.reference.get(parent)
        embedded = self.messages.get(field.type)
        if ref is None or embedded is None or field.repeated or field.map_key:
            return False
        return field.name not in ref.fields and all(
            f.name in ref.fields or self.is_inline(field.type, f) for f in embedded
        )

    def properties(
        self,
        name: str,
        trail: tuple[str, ...],
        table: str | None = None,
    ) -> tuple[dict[str, Any], list[str]]:
        """Fields of ``name`` as JSON properties; ``table`` is the type whose reference table
        lists them (the parent, for an inlined struct)."""
        ref = self.reference.get(table or name)
        props: dict[str, Any] = {}
        required: list[str] = []
        for field in self.messages[name]:
            if self.is_inline(name, field):
                self.inlined.append(f"{name}.{field.name}")
                inner, inner_required = self.properties(
                    field.type, (*trail, field.type), table=table or name
                )
                props.update(inner)
                required.extend(inner_required)
                continue
            props[field.name] = self.field_schema(field, trail)
            if (name, field.name) in _DEFAULTS:
                props[field.name]["default"] = _DEFAULTS[(name, field.name)]
            if ref is not None and field.name in ref.fields and field.name not in ref.optional:
                required.append(field.name)
        return props, required

    def message_schema(self, name: str, trail: tuple[str, ...]) -> dict[str, Any]:
        props, required = self.properties(name, trail)
        schema: dict[str, Any] = {"type": "object"}
        if required:
            schema["required"] = sorted(set(required))
        schema["properties"] = dict(sorted(props.items()))
        return schema


def shoot_crd(proto_text: str, reference_text: str) -> dict[str, Any]:
    """The Shoot schema as a CustomResourceDefinition document (compact, no descriptions)."""
    builder = _Builder(parse_proto(proto_text), parse_reference(reference_text))
    spec = builder.type_schema("ShootSpec", ("Shoot",))
    status = builder.type_schema("ShootStatus", ("Shoot",))
    root = {
        "type": "object",
        "properties": {
            "apiVersion": {"type": "string"},
            "kind": {"type": "string"},
            "metadata": {"type": "object"},
            "spec": spec,
            "status": status,
        },
    }
    return {
        "apiVersion": "apiextensions.k8s.io/v1",
        "kind": "CustomResourceDefinition",
        "metadata": {
            "name": "shoots.core.gardener.cloud",
            "annotations": {
                "fnplatform.io/derived-from": SOURCE,
                "fnplatform.io/note": (
                    "not an upstream CRD: Shoot is served by the aggregated gardener-apiserver; "
                    "derived by tools/gardener_shoot_schema.py for offline validation only"
                ),
                "fnplatform.io/inlined": ", ".join(sorted(set(builder.inlined))),
            },
        },
        "spec": {
            "group": "core.gardener.cloud",
            "names": {
                "kind": "Shoot",
                "listKind": "ShootList",
                "plural": "shoots",
                "singular": "shoot",
            },
            "scope": "Namespaced",
            "versions": [
                {
                    "name": "v1beta1",
                    "served": True,
                    "storage": True,
                    "schema": {"openAPIV3Schema": root},
                    "subresources": {"status": {}},
                }
            ],
        },
    }


if __name__ == "__main__":
    # A library of tools/derive_schemas.py (which writes the schema): run alone, it only explains.
    argparse.ArgumentParser(
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="Writes nothing by itself: tools/derive_schemas.py calls it.",
    ).parse_args()
