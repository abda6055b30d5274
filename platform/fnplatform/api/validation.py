"""Readable messages from pydantic errors: the field path, then the reason in plain words.

One place turns a validation failure into what a user reads in a fatal result. Messages never
quote the value (it may be a secret) and never use pydantic's phrasing ("Extra inputs are not
permitted", "Value error,", "instance of X") or print a raw regular expression: a pattern
error says what a valid value looks like (:func:`describe_pattern`), an unknown field names the
closest valid field (difflib). :func:`parse` also holds booleans to real booleans: YAML
``"yes"`` or ``"false"`` in quotes is a string, and pydantic would otherwise read it as a bool.
"""

from __future__ import annotations

import functools
import hashlib
import ipaddress
import marshal
import re
import types
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Annotated, Any, TypeVar, Union, get_args, get_origin

from pydantic import AfterValidator, BaseModel, ConfigDict, Field, ValidationError

from fnplatform.api.xrd import RuleViolationError
from fnplatform.errors import InputError, closest, suggest
from fnplatform.request.memo import BoundedMemo

M = TypeVar("M", bound=BaseModel)

#: Regular expression -> what a matching value looks like, for messages.
_PATTERN_WORDS: dict[str, str] = {}


def describe_pattern(pattern: str, words: str) -> str:
    """Register ``words`` (``"a DNS domain such as example.com"``) as the meaning of ``pattern``.

    Returns ``pattern`` so a model can write ``Field(pattern=describe_pattern(P, "..."))``.
    A pattern has one description: describing it again differently is an error at import
    (the messages of every field using it would otherwise change silently); use the shared
    constant (``DOMAIN``, ``DNS_LABEL``...) instead.
    """
    known = _PATTERN_WORDS.get(pattern)
    if known is not None and known != words:
        msg = f"pattern {pattern!r} is already described as {known!r}"
        raise ValueError(msg)
    _PATTERN_WORDS[pattern] = words
    return pattern


#: A DNS label (RFC 1123): Kubernetes names and label values, cloud resource names derive
#: from it. The one definition every module's API uses (max length is the field's own).
DNS_LABEL = describe_pattern(
    r"^[a-z0-9]([a-z0-9-]*[a-z0-9])?$",
    "a DNS label: lowercase letters, digits and '-', starting and ending with a letter or digit",
)
#: A DNS domain: dot-separated labels of at most 63 characters, ending in a top-level domain
#: of letters (fields using it cap the whole at 253).
DOMAIN = describe_pattern(
    r"^([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$",
    "a lowercase DNS domain such as shop.example.com",
)
#: A DNS record name: a :data:`DOMAIN`, optionally fully qualified with a trailing dot.
RECORD_NAME = describe_pattern(
    r"^([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}\.?$",
    "a lowercase DNS name such as sip.example.com, optionally ending in '.'",
)


#: A Kubernetes label key (optional DNS-subdomain prefix, then a name) and label value.
LABEL_KEY = describe_pattern(
    r"^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$",
    "a Kubernetes label key such as example.com/tier or tier",
)
LABEL_VALUE = describe_pattern(
    r"^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$",
    "a Kubernetes label value: at most 63 letters, digits, '-', '_' and '.', starting and "
    "ending with a letter or digit",
)


def check_labels(labels: dict[str, str]) -> dict[str, str]:
    """``labels`` if every key and value is a valid Kubernetes label key and value."""
    for key, value in labels.items():
        if not re.match(LABEL_KEY, key) or len(key.rsplit("/", 1)[-1]) > 63:
            msg = f"label key {key!r} is not a valid Kubernetes label key"
            raise ValueError(msg)
        if not re.match(LABEL_VALUE, value) or len(value) > 63:
            msg = f"label {key!r}: value is not a valid Kubernetes label value"
            raise ValueError(msg)
    return labels


#: Kubernetes labels (a plain map in the XRD: Kubernetes schemas have no patternProperties).
KubernetesLabels = Annotated[dict[str, str], AfterValidator(check_labels)]


def repeated(values: Iterable[str]) -> list[str]:
    """The values ``values`` holds more than once, sorted: what a list of unique names repeats."""
    seen: set[str] = set()
    again: set[str] = set()
    for value in values:
        (again if value in seen else seen).add(value)
    return sorted(again)


def exactly_one(model: BaseModel, first: str, second: str) -> None:
    """Refuse ``model`` unless exactly one of its alternative fields ``first`` and ``second``
    is set (a model validator's check: the message names both)."""
    if (getattr(model, first) is None) == (getattr(model, second) is None):
        msg = f"set exactly one of {first} or {second}"
        raise ValueError(msg)


@functools.lru_cache(maxsize=4096)
def ip_network(value: str, strict: bool = True) -> ipaddress.IPv4Network | ipaddress.IPv6Network:
    """``ipaddress.ip_network(value, strict=strict)``, remembered: the same few ranges (a VPC's,
    every trusted source of every ingress rule) are parsed on every pass, and parsing them was
    a fifth of composing a contact-center endpoint from scratch (bench/results.md). Networks
    are immutable; a value that is no network raises ``ValueError`` on every call."""
    return ipaddress.ip_network(value, strict=strict)


@functools.lru_cache(maxsize=1024)  # the same few ranges are checked on every request
def check_cidr(value: str) -> str:
    """``value`` if it is an IPv4 or IPv6 network in CIDR notation (``10.0.0.0/20``)."""
    try:
        ip_network(value, strict=True)
    except ValueError:
        msg = "must be an IP range in CIDR notation with its host bits zero, such as 10.0.0.0/20"
        raise ValueError(msg) from None
    if "/" not in value:
        msg = "must give the prefix length, such as 10.0.0.0/20"
        raise ValueError(msg)
    return value


def matching(pattern: str) -> AfterValidator:
    """A validator: the value, as text, matches ``pattern`` (registered with
    :func:`describe_pattern`; the message says what a valid value looks like, never the value).

    For a value that may be a number or a string (a Kubernetes quantity: ``2`` or ``500m``),
    which ``Field(pattern=...)`` can't check; put it on the value's own type
    (``dict[str, Annotated[..., matching(P)]]``), so an error names the value's key.
    """
    words = _PATTERN_WORDS[pattern]

    def check(value: Any) -> Any:
        if not re.match(pattern, str(value)):
            msg = f"must be {words}"
            raise ValueError(msg)
        return value

    return AfterValidator(check)


#: A CIDR range, checked the same way wherever the platform reads one (every cloud).
Cidr = Annotated[str, AfterValidator(check_cidr)]


def field_path(prefix: str, loc: tuple[int | str, ...]) -> str:
    """``spec.parameters`` + ``("pools", "a", 0)`` -> ``spec.parameters.pools.a[0]``."""
    path = prefix
    for part in loc:
        if isinstance(part, int):
            path += f"[{part}]"
        else:
            path = f"{path}.{part}" if path else str(part)
    return path


def _unwrap(annotation: Any) -> Any:
    """``Annotated[X, ...]`` and ``X | None`` -> ``X`` (a real union stays as it is)."""
    while True:
        origin = get_origin(annotation)
        if origin is Annotated:
            annotation = get_args(annotation)[0]
        elif origin in (Union, types.UnionType):
            members = [a for a in get_args(annotation) if a is not type(None)]
            if len(members) != 1:
                return annotation
            annotation = members[0]
        else:
            return annotation


def _is_model(annotation: Any) -> bool:
    return isinstance(annotation, type) and issubclass(annotation, BaseModel)


def _field_names(model: type[BaseModel]) -> list[str]:
    """The names a user writes: aliases where a field has one."""
    return [info.alias or name for name, info in model.model_fields.items()]


def _field_annotation(model: type[BaseModel], key: str) -> Any:
    for name, info in model.model_fields.items():
        if key in (name, info.alias):
            return info.annotation
    return None


def _annotation_at(model: type[BaseModel] | None, loc: Iterable[int | str]) -> Any:
    """The type expected at ``loc`` under ``model`` (None when it cannot be followed)."""
    annotation: Any = model
    for part in loc:
        annotation = _unwrap(annotation)
        origin = get_origin(annotation)
        if _is_model(annotation):
            annotation = _field_annotation(annotation, str(part))
        elif origin in (dict, Mapping) or (origin is not None and origin.__name__ == "Mapping"):
            annotation = get_args(annotation)[1] if get_args(annotation) else None
        elif origin in (list, tuple, set, frozenset):
            annotation = get_args(annotation)[0] if get_args(annotation) else None
        else:
            return None
        if annotation is None:
            return None
    return _unwrap(annotation)


def _member_tag(member: Any) -> str:
    """The tag pydantic puts in an error's location for union member ``member``: a class's
    name (``str``, ``Pool``), else the type as written (``list[int]``)."""
    member = _unwrap(member)
    return member.__name__ if isinstance(member, type) else str(member)


def user_location(
    model: type[BaseModel] | None, loc: tuple[int | str, ...]
) -> tuple[tuple[int | str, ...], bool]:
    """``loc`` as the user wrote the path, and whether it went through a union.

    pydantic puts the member it tried into the location of an error inside a union
    (``("requests", "cpu", "str")`` for ``requests: dict[str, str | int]``): a type, not a
    field the user wrote, so it is left out, and the walk goes on in the member it names.
    Without ``model`` the location is kept as it is.
    """
    if model is None:
        return loc, False
    path: list[int | str] = []
    annotation: Any = model
    through_union = False
    parts = list(loc)
    while parts:
        part = parts.pop(0)
        annotation = _unwrap(annotation) if annotation is not None else None
        if get_origin(annotation) in (Union, types.UnionType):
            members = [m for m in get_args(annotation) if m is not type(None)]
            through_union = True
            annotation = next((m for m in members if _member_tag(m) == part), None)
            continue
        path.append(part)
        annotation = _annotation_at(annotation, (part,)) if annotation is not None else None
    return tuple(path), through_union


def _either(reasons: list[str]) -> str:
    """The reasons a value failed each member of a union, as one: ``must be a string or a
    whole number``."""
    if len(reasons) > 1 and all(r.startswith("must be ") for r in reasons):
        return " or ".join([reasons[0], *(r.removeprefix("must be ") for r in reasons[1:])])
    return "; ".join(reasons)


def unknown_field_reason(name: str, valid: Iterable[str]) -> str:
    """``unknown field; did you mean X?`` (or the valid fields when nothing is close)."""
    return f"unknown field; {suggest(name, valid)}"


_BOUNDS = {
    "greater_than_equal": ("ge", "must be at least {}"),
    "greater_than": ("gt", "must be more than {}"),
    "less_than_equal": ("le", "must be at most {}"),
    "less_than": ("lt", "must be less than {}"),
}
_TYPES = {
    "bool_type": "must be true or false",
    "bool_parsing": "must be true or false",
    "string_type": "must be a string",
    "int_type": "must be a whole number",
    "int_parsing": "must be a whole number",
    "int_from_float": "must be a whole number",
    "float_type": "must be a number",
    "float_parsing": "must be a number",
    "dict_type": "must be an object (a map of fields)",
    "model_type": "must be an object (a map of fields)",
    "model_attributes_type": "must be an object (a map of fields)",
    "list_type": "must be a list",
    "missing": "required, but not set",
    "none_required": "must not be set",
}


def _reason(  # noqa: PLR0911 - one return per kind of error
    item: Mapping[str, Any], model: type[BaseModel] | None, loc: tuple[Any, ...]
) -> str:
    """One pydantic error item in plain words."""
    kind, ctx = item["type"], item.get("ctx") or {}
    if kind == "extra_forbidden":
        parent = _annotation_at(model, loc[:-1])
        valid = _field_names(parent) if _is_model(parent) else []
        return unknown_field_reason(str(loc[-1]), valid)
    if kind in _TYPES:
        return _TYPES[kind]
    if kind in _BOUNDS:
        key, words = _BOUNDS[kind]
        return words.format(ctx.get(key))
    if kind == "string_too_short":
        minimum = ctx.get("min_length", 1)
        return "must not be empty" if minimum == 1 else f"must be at least {minimum} characters"
    if kind == "string_too_long":
        return f"must be at most {ctx.get('max_length')} characters"
    if kind == "string_pattern_mismatch":
        meaning = _PATTERN_WORDS.get(str(ctx.get("pattern")))
        return f"must be {meaning}" if meaning else "is not in the expected format"
    if kind == "literal_error":
        expected = str(ctx.get("expected", "")).replace("'", "")
        choices = re.split(r", | or ", expected)
        value = item.get("input")
        guess = closest(value, choices) if isinstance(value, str) else None
        hint = f"; did you mean {guess}?" if guess else ""
        return f"must be one of {', '.join(choices)}{hint}"
    message = str(item.get("msg", "is not valid"))
    for prefix in ("Value error, ", "Assertion failed, "):
        message = message.removeprefix(prefix)
    return message.replace("Input should be", "must be")


def validation_problems(
    err: ValidationError, model: type[BaseModel] | None = None
) -> list[tuple[tuple[int | str, ...], str]]:
    """``(location, reason in plain words)`` of each problem of ``err``, in order, once each.

    ``model`` (the model that was validated) lets an unknown field suggest a valid one.
    """
    problems: dict[tuple[tuple[int | str, ...], str], None] = {}
    #: Location -> why the value fits none of a union's members, one reason per member.
    alternatives: dict[tuple[int | str, ...], list[str]] = {}
    for item in err.errors(include_url=False, include_input=True):
        loc = tuple(p for p in item["loc"] if not str(p).startswith("function-"))
        loc, through_union = user_location(model, loc)
        broken = (item.get("ctx") or {}).get("error")
        if isinstance(broken, RuleViolationError):
            # A claim rule names its field relative to the model the error is located at.
            loc = (*loc, *broken.rule.field.split("."))
        reason = _reason(item, model, loc)
        if through_union:
            known = alternatives.setdefault(loc, [])
            if reason not in known:
                known.append(reason)
            problems[(loc, "")] = None  # the place of the combined reason, in order
        else:
            problems[(loc, reason)] = None
    return [(loc, reason or _either(alternatives[loc])) for loc, reason in problems]


def describe_validation_error(
    err: ValidationError, prefix: str = "", model: type[BaseModel] | None = None
) -> str:
    """All problems of ``err`` as ``field: reason`` joined with ``; ``."""
    return "; ".join(
        f"{field_path(prefix, loc)}: {reason}" for loc, reason in validation_problems(err, model)
    )


@dataclass(frozen=True)
class _Shape:
    """What one type annotation expects, worked out once (walks run on every request)."""

    boolean: bool = False
    fields: Mapping[str, Any] | None = None  # a model: written name (and alias) -> annotation
    names: tuple[str, ...] = ()  # a model: the names a user writes
    open: bool = False  # a model that keeps extra fields
    items: Any = None  # a map's values or a list's items
    is_list: bool = False
    holds_bool: bool = False  # a bool anywhere below: the boolean walk must go in


_SHAPES: dict[int, tuple[Any, _Shape]] = {}


def _shape(annotation: Any) -> _Shape:
    """The compiled :class:`_Shape` of ``annotation`` (cached by identity)."""
    cached = _SHAPES.get(id(annotation))
    if cached is not None and cached[0] is annotation:
        return cached[1]
    _SHAPES[id(annotation)] = (annotation, _Shape())  # a placeholder breaks recursive models
    shape = _compile(_unwrap(annotation))
    _SHAPES[id(annotation)] = (annotation, shape)
    return shape


def _compile(annotation: Any) -> _Shape:
    if annotation is bool:
        return _Shape(boolean=True, holds_bool=True)
    origin, args = get_origin(annotation), get_args(annotation)
    if _is_model(annotation):
        fields: dict[str, Any] = {}
        for name, info in annotation.model_fields.items():
            fields[name] = info.annotation
            if info.alias:
                fields[info.alias] = info.annotation
        return _Shape(
            fields=fields,
            names=tuple(_field_names(annotation)),
            open=annotation.model_config.get("extra") == "allow",
            holds_bool=any(_shape(a).holds_bool for a in fields.values()),
        )
    if origin in (dict, Mapping) and args:
        return _Shape(items=args[1], holds_bool=_shape(args[1]).holds_bool)
    if origin in (list, tuple) and args:
        return _Shape(items=args[0], is_list=True, holds_bool=_shape(args[0]).holds_bool)
    return _Shape()


class WalkResults:
    """What a walk of a user's value found (:func:`unknown_fields`, :func:`non_booleans`), by
    the annotation and a digest of the value's exact content; the most recent ``limit``.

    A composite's spec is the same on most passes (what changes between them is observed
    state), and walking it again is the same answer: at 200 node pools the two walks were a
    twentieth of composing. Keyed by ``marshal.dumps`` of the value (exact about types, as
    :class:`fnplatform.request.structs.EncodedBodies` is); a value marshal refuses is walked. Only
    the
    found paths are kept, never the value: a few hundred bytes an entry.
    """

    def __init__(self, limit: int = 512) -> None:
        self._memo: BoundedMemo[tuple[Any, ...]] = BoundedMemo(limit)

    def __len__(self) -> int:
        return len(self._memo)

    def get(self, walk: str, annotation: Any, value: Any, path: Any, compute: Any) -> list[Any]:
        """``compute()``, or what it returned for the same walk, annotation, value and path."""
        try:
            content = marshal.dumps(value, 4)
        except ValueError:
            return list(compute())
        key = (walk, annotation, path, hashlib.blake2b(content, digest_size=20).digest())
        return list(self._memo.get(key, lambda: tuple(compute())))


WALKS = WalkResults()


def unknown_fields_of(annotation: Any, value: Any) -> list[tuple[tuple[str, ...], str]]:
    """:func:`unknown_fields` of a whole value, remembered by content (:class:`WalkResults`)."""
    return WALKS.get("unknown", annotation, value, (), lambda: unknown_fields(annotation, value))


def unknown_fields(
    annotation: Any, value: Any, path: tuple[str, ...] = ()
) -> list[tuple[tuple[str, ...], str]]:
    """``(path, suggestion)`` of every key of ``value`` that ``annotation`` has no field for.

    Follows nested models, maps and lists the way an API server walks a structural schema
    generated from the same models (``fnplatform.api.xrd``): a model that allows extra fields, an
    ``Any`` or a real union keeps whatever is below it.
    """
    shape = _shape(annotation)
    found: list[tuple[tuple[str, ...], str]] = []
    if shape.fields is not None and isinstance(value, Mapping):
        for key, item in value.items():
            inner = shape.fields.get(str(key))
            if inner is not None:
                found += unknown_fields(inner, item, (*path, str(key)))
            elif not shape.open:
                found.append(((*path, str(key)), suggest(str(key), shape.names)))
    elif shape.items is not None and not shape.is_list and isinstance(value, Mapping):
        for key, item in value.items():
            found += unknown_fields(shape.items, item, (*path, str(key)))
    elif shape.is_list and isinstance(value, list):
        for index, item in enumerate(value):
            found += unknown_fields(shape.items, item, (*path, str(index)))
    return found


def non_booleans(annotation: Any, value: Any, path: str) -> list[str]:
    """Paths under ``path`` where ``annotation`` wants a bool and ``value`` holds something else.

    pydantic's lax mode reads ``"yes"``, ``"off"`` and ``1`` as booleans; a typo there would
    silently flip a setting (a private cluster made public), so only ``true``/``false`` pass.
    """
    shape = _shape(annotation)
    if not shape.holds_bool:
        return []
    if shape.boolean:
        return [] if isinstance(value, bool) or value is None else [path]
    found: list[str] = []
    if shape.fields is not None and isinstance(value, Mapping):
        for key, item in value.items():
            inner = shape.fields.get(str(key))
            if inner is not None:
                found += non_booleans(inner, item, f"{path}.{key}" if path else str(key))
    elif shape.items is not None and not shape.is_list and isinstance(value, Mapping):
        for key, item in value.items():
            found += non_booleans(shape.items, item, f"{path}.{key}")
    elif shape.is_list and isinstance(value, list):
        for index, item in enumerate(value):
            found += non_booleans(shape.items, item, f"{path}[{index}]")
    return found


def parse(model: type[M], data: object, prefix: str) -> M:
    """``data`` as ``model``; an InputError names every bad field under ``prefix``, in words.

    The one entry point for user-supplied data: strict booleans first, then pydantic.
    """
    data = data if data is not None else {}
    loose = WALKS.get("booleans", model, data, prefix, lambda: non_booleans(model, data, prefix))
    if loose:
        raise InputError(prefix, "; ".join(f"{path}: must be true or false" for path in loose))
    try:
        return model.model_validate(data)
    except ValidationError as err:
        raise InputError(prefix, describe_validation_error(err, prefix, model)) from None


class SecretKeyRef(BaseModel):
    """A key of a Secret in the Crossplane namespace (a credential an environment names)."""

    model_config = ConfigDict(extra="forbid")

    name: str = Field(min_length=1)
    namespace: str = Field("crossplane-system", min_length=1)
    key: str = Field("credentials", min_length=1)
