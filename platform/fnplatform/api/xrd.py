"""API definitions: one pydantic model per module is the single source of its XRD.

Each module describes its composite API with an :class:`ApiDefinition` in
``fnplatform/composers/<module>/api.py``; ``tools/generate_apis.py`` turns it into
``apis/<module>/definition.yaml``. Deriving the OpenAPI schema from the same models the composer
validates with means the API server and the function can never disagree about what a valid
composite is (``tests/test_apis.py`` proves the generated files are current).

Kubernetes demands *structural* schemas (every node typed, no ``$ref``, no type-carrying
``anyOf``), so the pydantic JSON Schema is rewritten here: references are inlined, ``X | None``
becomes plain ``X`` (absence is how Kubernetes says "none"), ``const`` becomes a one-value
``enum``, and ``Any`` becomes ``x-kubernetes-preserve-unknown-fields``.

Rules that need only the claim and span fields (a minimum not above its maximum, a second
region not the primary) are declared once as a :class:`ClaimRule` (:func:`claim_rule`,
:func:`ordered`, :func:`differs`): the declaration is the model's validator, which the function
runs (``crossplane composition render`` has no API server), and the CEL rule of the model's
schema node (``x-kubernetes-validations``), which the API server runs at admission.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pydantic import BaseModel, model_validator
from pydantic.json_schema import GenerateJsonSchema, JsonSchemaValue

XRD_API_VERSION = "apiextensions.crossplane.io/v1"
#: Crossplane v2 XRDs: ``scope: Namespaced`` composites, no claims (the XR is what users create).
NAMESPACED_XRD_API_VERSION = "apiextensions.crossplane.io/v2"
# Keywords of pydantic's JSON Schema that OpenAPI v3 / Kubernetes has no use for.
_DROPPED_KEYWORDS = frozenset({"title", "$defs", "definitions", "examples", "discriminator"})
_SCALAR_DEFAULT_TYPES = (str, int, float, bool)


@dataclass(frozen=True)
class ClaimRule:
    """A rule that needs only the claim, declared once for the function and the API server.

    ``cel`` is the CEL expression (``self`` is the object of the model the rule is attached
    to), or a function of the model class giving it (to read the fields' defaults); ``check``
    is the same rule in Python, true when the model instance passes. ``field`` is the path,
    relative to the model, of the field the rule blames: the CEL rule's ``fieldPath`` and the
    end of the location of the function's message. ``reason`` says what is wrong in words
    that name the other fields involved; the API server's message is ``<field> <reason>``.
    """

    field: str
    reason: str
    cel: str | Callable[[type[BaseModel]], str]
    check: Callable[[Any], bool]

    @property
    def message(self) -> str:
        """The API server's message: the field, then the reason."""
        return f"{self.field} {self.reason}"

    def expression(self, model: type[BaseModel]) -> str:
        """The CEL expression of this rule on ``model``'s schema node."""
        return self.cel if isinstance(self.cel, str) else self.cel(model)

    def validation(self, model: type[BaseModel]) -> dict[str, Any]:
        """The ``x-kubernetes-validations`` entry of this rule on ``model``'s schema node."""
        return {
            "rule": self.expression(model),
            "message": self.message,
            "fieldPath": "." + self.field,
        }


class RuleViolationError(ValueError):
    """A :class:`ClaimRule` the model instance breaks (``fnplatform.api.validation`` puts its
    ``field`` at the end of the error's location)."""

    def __init__(self, rule: ClaimRule) -> None:
        super().__init__(rule.reason)
        self.rule = rule


#: The attribute of a model validator's function that holds its :class:`ClaimRule`.
_RULE_ATTRIBUTE = "__claim_rule__"


def claim_rule(rule: ClaimRule) -> Any:
    """A model validator running ``rule``; assign it in the model's body
    (``_ordered = claim_rule(...)``) and the model's XRD node carries its CEL rule."""

    def check(model: Any) -> Any:
        if not rule.check(model):
            raise RuleViolationError(rule)
        return model

    setattr(check, _RULE_ATTRIBUTE, rule)
    return model_validator(mode="after")(check)


def claim_rules(model: type[BaseModel]) -> list[ClaimRule]:
    """The :class:`ClaimRule` s declared on ``model`` (and its bases), in declaration order."""
    rules = []
    for decorator in model.__pydantic_decorators__.model_validators.values():
        rule = getattr(decorator.func, _RULE_ATTRIBUTE, None)
        if isinstance(rule, ClaimRule):
            rules.append(rule)
    return rules


def _schema_name(model: type[BaseModel], name: str) -> str:
    """The name a user writes for field ``name`` of ``model`` (its alias, if any)."""
    info = model.model_fields.get(name)
    return (info.alias or name) if info is not None else name


def _value_or_default(model: type[BaseModel], name: str) -> str | None:
    """CEL for field ``name`` of an object of ``model``: its value, or its scalar default when
    unset (the API server fills defaults in first; ``crossplane resource validate`` may
    not); None when it has no default (unset: the rule does not apply)."""
    key = _schema_name(model, name)
    info = model.model_fields.get(name)
    default = info.default if info is not None else None
    if isinstance(default, bool) or not isinstance(default, int | float | str):
        return None
    literal = f"'{default}'" if isinstance(default, str) else str(default)
    return f"(has(self.{key}) ? self.{key} : {literal})"


def _guarded(model: type[BaseModel], names: tuple[str, ...], expression: str) -> str:
    """``expression`` applied only when each of ``names`` without a default is set."""
    guards = [
        f"!has(self.{_schema_name(model, n)})" for n in names if _value_or_default(model, n) is None
    ]
    return " || ".join([*guards, expression])


def _operand(model: type[BaseModel], name: str) -> str:
    return _value_or_default(model, name) or f"self.{_schema_name(model, name)}"


def ordered(low: str, high: str, *, blame_high: bool = False) -> Any:
    """A :func:`claim_rule`: field ``low`` must not exceed field ``high`` (min/max bounds).

    The message is on ``low`` ("must not exceed ``high``"), or with ``blame_high`` on ``high``
    ("must not be lower than ``low``": a maximum added to a required count)."""

    def cel(model: type[BaseModel]) -> str:
        return _guarded(model, (low, high), f"{_operand(model, low)} <= {_operand(model, high)}")

    def check(model: Any) -> bool:
        first, second = getattr(model, low), getattr(model, high)
        return first is None or second is None or first <= second

    if blame_high:
        return claim_rule(ClaimRule(high, f"must not be lower than {low}", cel, check))
    return claim_rule(ClaimRule(low, f"must not exceed {high}", cel, check))


def differs(path: str, other: str) -> Any:
    """A :func:`claim_rule`: ``path`` (``a.b``: field ``b`` of the optional object ``a``)
    must differ from field ``other`` of the same model, when both are set."""
    parts = path.split(".")

    def cel(model: type[BaseModel]) -> str:
        guards = ["!has(self." + ".".join(parts[: i + 1]) + ")" for i in range(len(parts))]
        return " || ".join([*guards, f"!has(self.{other})", f"self.{path} != self.{other}"])

    def check(model: Any) -> bool:
        value: Any = model
        for part in parts:
            value = getattr(value, part, None)
            if value is None:
                return True
        return bool(value != getattr(model, other))

    return claim_rule(ClaimRule(path, f"must differ from {other}", cel, check))


class _RulesSchema(GenerateJsonSchema):
    """pydantic's JSON Schema, with each model's :class:`ClaimRule` s as CEL rules."""

    def model_schema(self, schema: Any) -> JsonSchemaValue:  # a pydantic_core ModelSchema
        json_schema = super().model_schema(schema)
        rules = claim_rules(schema["cls"])
        if rules:
            json_schema["x-kubernetes-validations"] = [r.validation(schema["cls"]) for r in rules]
        return json_schema


#: The field the Crossplane v1 style nests a composite's own fields in.
PARAMETERS = "parameters"


def nested_parameters_reason(kind: str, fields: list[str]) -> str:
    """What to change in a spec that nests ``fields`` of an API with its fields directly
    under spec (kind ``kind``) in ``spec.parameters``: the function's message (the fields it
    found there) and the API server's (every field of the API)."""
    return (
        f"{kind} takes its fields directly under spec, not under spec.{PARAMETERS}: move "
        f"{', '.join(fields)} up one level (spec.{fields[0]}...)"
    )


@dataclass(frozen=True)
class CompositionAlias:
    """A Composition name (and labels) a design document gives an API.

    Crossplane resolves a claim's ``compositionRef`` by name and its ``compositionSelector``
    by labels, and nothing redirects either: a claim written from the document reaches this
    function only if a Composition of that name, or with those labels, is installed.
    ``tools/generate_apis.py`` writes each alias as a copy of the module's own Composition
    (``apis/<id>/compositions/<name>.yaml`` and its namespaced twin): the same pipeline under
    the document's name and labels. A Composition cannot set the composite's spec, so a name
    that implies a cloud or region does not pin them; the composite's spec does.
    """

    name: str
    #: Where the document names it, as its readers know it: ``<title>, <section>``.
    source: str
    #: Labels the document's Composition carries (its claims may select by them).
    labels: dict[str, str] = field(default_factory=dict)


#: The version every module's API serves: its first (a new version is a new entry of the
#: XRD's ``versions``, served beside the old one, never a rename of it).
FIRST_VERSION = "v1alpha1"


def plural_of(kind: str) -> str:
    """Kubernetes' ``spec.names.plural`` of ``kind`` as these APIs spell it: the kind in
    lowercase plus "s" (``XAsyncActor`` -> ``xasyncactors``). A kind whose English plural
    differs names its plural in its :class:`ApiDefinition`."""
    return f"{kind.lower()}s"


def condition_status(condition: str) -> str:
    """The JSONPath of the status (``True``/``False``) of the composite's condition of type
    ``condition``: what a printer column shows of it."""
    return f".status.conditions[?(@.type=='{condition}')].status"


@dataclass(frozen=True)
class PrinterColumn:
    """One of the XRD version's ``additionalPrinterColumns``: a column ``kubectl get`` prints.

    Crossplane appends its own columns, among them SYNCED, READY (the Ready condition) and AGE,
    to every composite and claim CRD it generates (its xcrd package,
    ``CompositeResourcePrinterColumns``): an API that declares :data:`READY_COLUMN` or
    :data:`AGE_COLUMN` as well prints that value twice."""

    name: str
    json_path: str
    #: The OpenAPI type of the value: ``string``, ``integer``, ``date`` ...
    type: str = "string"
    #: 0: always printed; 1: only with ``-o wide``.
    priority: int = 0

    def to_dict(self) -> dict[str, Any]:
        """The column as the XRD writes it."""
        column: dict[str, Any] = {"name": self.name, "type": self.type, "jsonPath": self.json_path}
        if self.priority:
            column["priority"] = self.priority
        return column


#: The composite's Ready condition.
READY_COLUMN = PrinterColumn("Ready", condition_status("Ready"))
#: The composite's ``status.phase`` (:class:`fnplatform.api.phase.Phase`).
PHASE_COLUMN = PrinterColumn("Phase", ".status.phase")
#: How long ago the composite was created.
AGE_COLUMN = PrinterColumn("Age", ".metadata.creationTimestamp", "date")


@dataclass(frozen=True, kw_only=True)
class ApiDefinition:
    """A module's composite resource API: names plus the models of ``spec`` and ``status``.

    ``plural`` and ``claim_plural`` default to :func:`plural_of` their kinds."""

    group: str
    version: str = FIRST_VERSION
    kind: str
    plural: str = ""
    claim_kind: str
    claim_plural: str = ""
    spec_model: type[BaseModel]
    status_model: type[BaseModel] | None = None
    printer_columns: tuple[PrinterColumn, ...] = ()
    short_names: tuple[str, ...] = ()
    claim_short_names: tuple[str, ...] = ()
    #: The connection details the v1 composite publishes to its claim's Secret (Crossplane v2
    #: namespaced composites have no connection Secret: the module says where instead).
    connection_secret_keys: tuple[str, ...] = ()
    #: Compositions a design document names for this API, shipped beside the module's own.
    aliases: tuple[CompositionAlias, ...] = ()

    def __post_init__(self) -> None:
        # A frozen dataclass sets its derived fields through object.__setattr__.
        if not self.plural:
            object.__setattr__(self, "plural", plural_of(self.kind))
        if not self.claim_plural:
            object.__setattr__(self, "claim_plural", plural_of(self.claim_kind))

    @property
    def name(self) -> str:
        """The XRD's metadata.name, which Kubernetes requires to be ``<plural>.<group>``."""
        return f"{self.plural}.{self.group}"

    @property
    def api_version(self) -> str:
        """The composite's apiVersion, e.g. ``myplatform.io/v1alpha1``."""
        return f"{self.group}/{self.version}"

    def spec_schema(self) -> dict[str, Any]:
        """The OpenAPI v3 schema of ``spec``.

        An API whose fields sit directly under ``spec`` also accepts ``spec.parameters``,
        as an object of anything, only so that a CEL rule can refuse it with
        :func:`nested_parameters_reason`: a claim written in the Crossplane v1 style of many
        guides and design documents then hears what to change, not one bare "Required value"
        per field it does have, one level down (``function/composite.py`` says the same).
        """
        schema = openapi_schema(self.spec_model)
        if PARAMETERS in self.spec_model.model_fields:
            return schema
        schema["properties"][PARAMETERS] = {
            "description": "Not a field of this API: its fields go directly under spec.",
            "type": "object",
            "x-kubernetes-preserve-unknown-fields": True,
        }
        fields = [_schema_name(self.spec_model, name) for name in self.spec_model.model_fields]
        rule = {
            "rule": f"!has(self.{PARAMETERS})",
            "message": f"spec.{PARAMETERS}: {nested_parameters_reason(self.kind, fields)}",
            "fieldPath": f".{PARAMETERS}",
        }
        # The API server checks CEL rules only once the object passes its OpenAPI schema ("some
        # validation rules were not checked because the object was invalid"), so with spec's
        # fields `required` a claim in the v1 shape would hear only "Required value" per field:
        # found by tests/live/test_live_admission.py. Spec's own required fields are therefore
        # CEL rules too, which stand aside when spec.parameters is there to be refused.
        declared = list(schema.pop("required", []))
        required = [name for name in declared if name.isidentifier()]
        if rest := [name for name in declared if not name.isidentifier()]:
            schema["required"] = rest  # not a CEL identifier: stays an OpenAPI requirement
        presence = [
            {
                "rule": f"has(self.{PARAMETERS}) || has(self.{name})",
                "message": f"spec.{name}: Required value",
                "fieldPath": f".{name}",
            }
            for name in required
        ]
        schema["x-kubernetes-validations"] = [
            rule,
            *presence,
            *schema.get("x-kubernetes-validations", []),
        ]
        return schema

    def status_schema(self) -> dict[str, Any] | None:
        """The OpenAPI v3 schema of ``status``, when the module declares one."""
        return openapi_schema(self.status_model) if self.status_model else None

    def to_xrd(self, *, namespaced: bool = False) -> dict[str, Any]:
        """The ``CompositeResourceDefinition`` for this API.

        By default v1: a cluster-scoped composite with a namespaced claim. With ``namespaced``
        the Crossplane v2 alternative: the same group, kind and schema as a namespaced
        composite (``scope: Namespaced``, no claim). The two define the same kind, so a
        cluster installs one or the other; the function serves both
        (``fnplatform.composition.namespaced``).

        ``defaultCompositionRef`` names the module's own Composition (``apis/<id>/
        composition.yaml``, named like the XRD): Crossplane v2.4 gives it to a composite with
        neither ``compositionRef`` nor ``compositionSelector``; without it, such a composite gets
        any Composition of its type at random, and a cluster that also installs the
        :attr:`aliases` has several (docs/crossplane.md, "Which Composition a composite gets").
        """
        properties: dict[str, Any] = {"spec": self.spec_schema()}
        status = self.status_schema()
        if status is not None:
            properties["status"] = status
        version: dict[str, Any] = {
            "name": self.version,
            "served": True,
            "referenceable": True,
            "schema": {
                "openAPIV3Schema": {
                    "type": "object",
                    "properties": properties,
                    "required": ["spec"],
                }
            },
        }
        if self.printer_columns:
            version["additionalPrinterColumns"] = [c.to_dict() for c in self.printer_columns]
        spec: dict[str, Any] = {
            "group": self.group,
            "names": _names(self.kind, self.plural, self.short_names),
        }
        if namespaced:
            spec["scope"] = "Namespaced"
        else:
            spec["claimNames"] = _names(self.claim_kind, self.claim_plural, self.claim_short_names)
            if self.connection_secret_keys:
                spec["connectionSecretKeys"] = list(self.connection_secret_keys)
        # A composite naming no Composition gets the module's own (named like the XRD), never
        # one of the others of its type Crossplane would otherwise pick from at random.
        spec["defaultCompositionRef"] = {"name": self.name}
        spec["versions"] = [version]
        return {
            "apiVersion": NAMESPACED_XRD_API_VERSION if namespaced else XRD_API_VERSION,
            "kind": "CompositeResourceDefinition",
            "metadata": {"name": self.name},
            "spec": spec,
        }


def _names(kind: str, plural: str, short_names: tuple[str, ...]) -> dict[str, Any]:
    names: dict[str, Any] = {"kind": kind, "plural": plural}
    if short_names:
        names["shortNames"] = list(short_names)
    return names


def openapi_schema(model: type[BaseModel]) -> dict[str, Any]:
    """A structural OpenAPI v3 schema for ``model`` (aliases used, references inlined)."""
    raw = model.model_json_schema(by_alias=True, mode="validation", schema_generator=_RulesSchema)
    definitions = raw.get("$defs", {})
    return _structural(raw, definitions)


def _structural(node: dict[str, Any], definitions: dict[str, Any]) -> dict[str, Any]:
    """Rewrite one JSON Schema node (recursively) into its structural OpenAPI form."""
    node = _resolve(node, definitions)
    node = _without_null(node, definitions)
    if not node or ("type" not in node and "enum" not in node):
        # Any (or a union we cannot type): keep whatever the user writes.
        kept = {k: v for k, v in node.items() if k in ("description",)}
        return {**kept, "x-kubernetes-preserve-unknown-fields": True}
    out: dict[str, Any] = {}
    for key, value in node.items():
        if key not in _DROPPED_KEYWORDS:
            out.update(_keyword(key, value, definitions))
    if "enum" in out and "type" not in out:
        out["type"] = _enum_type(out["enum"])
    return out


def _keyword(key: str, value: Any, definitions: dict[str, Any]) -> dict[str, Any]:  # noqa: PLR0911
    """The structural form of one keyword of a schema node (empty when it has none)."""
    if key == "description":
        return {key: _clean_description(value)}
    if key == "properties":
        return {key: {name: _structural(sub, definitions) for name, sub in value.items()}}
    if key == "items":
        return {key: _structural(value, definitions)}
    if key == "additionalProperties":
        return _additional_properties(value, definitions)
    if key == "default":
        return {key: value} if _is_scalar_default(value) else {}
    if key == "const":
        return {"enum": [value]}
    if key in ("exclusiveMinimum", "exclusiveMaximum") and not isinstance(value, bool):
        bound = "minimum" if key == "exclusiveMinimum" else "maximum"
        return {bound: value, key: True}
    return {key: value}


def _resolve(node: dict[str, Any], definitions: dict[str, Any]) -> dict[str, Any]:
    """Inline a ``$ref`` (pydantic only refers to ``#/$defs/<name>``), keeping sibling keys."""
    if "$ref" not in node:
        return node
    target = definitions[node["$ref"].rsplit("/", 1)[-1]]
    siblings = {k: v for k, v in node.items() if k != "$ref"}
    return {**target, **siblings}


def _without_null(node: dict[str, Any], definitions: dict[str, Any]) -> dict[str, Any]:
    """Collapse ``anyOf: [X, null]`` into ``X``; leave real unions untyped."""
    alternatives = node.get("anyOf") or node.get("oneOf")
    if alternatives is None:
        return node
    typed = [alt for alt in alternatives if alt.get("type") != "null"]
    rest = {k: v for k, v in node.items() if k not in ("anyOf", "oneOf")}
    if len(typed) == 1:
        return {**_resolve(typed[0], definitions), **rest}
    return {k: v for k, v in rest.items() if k == "description"}


def _additional_properties(value: Any, definitions: dict[str, Any]) -> dict[str, Any]:
    """Maps keep their value schema; ``extra='forbid'`` (false) is Kubernetes' default pruning."""
    if value is False:
        return {}
    if value is True or value == {}:
        return {"x-kubernetes-preserve-unknown-fields": True}
    return {"additionalProperties": _structural(value, definitions)}


def _is_scalar_default(value: Any) -> bool:
    """Only scalar defaults go into the CRD: the API server then fills them in visibly."""
    return value is not None and isinstance(value, _SCALAR_DEFAULT_TYPES)


def _enum_type(values: list[Any]) -> str:
    if all(isinstance(v, bool) for v in values):
        return "boolean"
    if all(isinstance(v, int) and not isinstance(v, bool) for v in values):
        return "integer"
    if all(isinstance(v, int | float) and not isinstance(v, bool) for v in values):
        return "number"
    return "string"


def _clean_description(text: str) -> str:
    """Docstrings use reStructuredText literals; kubectl explain reads better with single quotes."""
    return " ".join(text.replace("``", "`").split())
