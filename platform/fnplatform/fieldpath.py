"""Crossplane field paths: the one syntax for every path the function reads.

Users port paths from Crossplane Compositions (``metadata.labels[cloud]``,
``metadata.labels[crossplane.io/claim-name]``, ``spec.items[0].name``), so a path must mean
here exactly what it means to Crossplane; a second dialect (pydash's, which read
``metadata.labels[cloud]`` as nothing) silently selects nothing. This module is a port of
crossplane-runtime v2.4.0 ``pkg/fieldpath``, the package Crossplane and its functions resolve
``fromFieldPath`` with:

- https://github.com/crossplane/crossplane-runtime/blob/v2.4.0/pkg/fieldpath/fieldpath.go:
  ``Parse`` and its lexer (``lexField``, ``lexPeriod``, ``lexLeftBracket``,
  ``lexFieldOrIndex``, ``lexRightBracket``) are :func:`parse`; ``Field`` and ``FieldOrIndex``
  are :func:`_field` and :func:`_field_or_index`; ``Segments.String`` is :func:`to_string`.
- https://github.com/crossplane/crossplane-runtime/blob/v2.4.0/pkg/fieldpath/paved.go:
  ``getValueFromInterface`` (behind ``Paved.GetValue``) is :func:`lookup`, with
  ``IsNotFound`` told apart as :class:`PathNotFound`.

The rules, as Go has them:

- A period separates field names; it may not start or end the path, follow another period,
  or come before a ``[`` (``.a``, ``a.``, ``a..b``, ``a.[0]`` are errors).
- ``[...]`` holds a field name or an index; periods and slashes have no special meaning
  inside (``data[.config.yml]``, ``metadata.labels[crossplane.io/claim-name]``). It must be
  closed, may not be empty and may not nest. A ``]`` outside brackets is an error.
- Between brackets, an unsigned decimal integer below 2^32 is an index (``[0]``); anything
  else is a field. Outside brackets everything is a field, digits too (``a.0`` is the key
  ``"0"``, never an index).
- Every field name has leading and trailing ``'`` and ``"`` trimmed (``Field`` does
  ``strings.Trim(s, "'\\"")``), so ``['a.b/c']`` is the key ``a.b/c``, and ``['0']`` is the
  key ``"0"``, not an index.
- Reading: a missing field, an index past the end or a null on the way is *not found*; an
  index into something not a list, or a field of something not an object, is a type error.
- Parse errors read like Go's: ``unexpected '.' at position 0``, positions in UTF-8 bytes.

A segment is a ``str`` (a field) or an ``int`` (an index).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from functools import lru_cache
from typing import Any

Segment = str | int
Segments = tuple[Segment, ...]

_PERIOD, _LEFT, _RIGHT = ".", "[", "]"
_WILDCARD = "*"
_UINT32_MAX = 2**32 - 1
_DIGITS = re.compile(r"[0-9]+")
#: Quoted in messages up to this length: a path is the user's, not a secret, but not unbounded.
_QUOTED_MAX = 256
_MISSING = object()


class FieldPathError(ValueError):
    """A path that cannot be parsed; the message is Go's (``unexpected ']' at position 9``)."""


class PathNotFound(LookupError):  # noqa: N818 - Go's notFoundError, a kind of lookup miss
    """Nothing at the path: a missing field, an index past the end, or a null on the way."""


class PathTypeError(TypeError):
    """The value on the way has the wrong type: an index into a non-list, a field of a
    non-object. The path cannot mean anything on this value."""


def _field(text: str) -> str:
    """``Field``: always an object field, quotes trimmed from both ends."""
    return text.strip("'\"")


def _field_or_index(text: str) -> Segment:
    """``FieldOrIndex``: an index when ``strconv.ParseUint(s, 10, 32)`` accepts it, else a
    field (quotes trimmed)."""
    if _DIGITS.fullmatch(text) and int(text) <= _UINT32_MAX:
        return int(text)
    return _field(text)


def _error(path: str, at: int, message: str) -> FieldPathError:
    """Go's ``"%s at position %d"``, the position in UTF-8 bytes as Go counts it."""
    position = len(path[:at].encode("utf-8", "surrogatepass"))
    return FieldPathError(f"{message} at position {position}")


@lru_cache(maxsize=4096)
def parse(path: str) -> Segments:
    """The segments of ``path`` (``Parse``); :class:`FieldPathError` when it is malformed.

    The lexer's states, in Go's order; ``start`` and ``pos`` are its ``l.start`` and
    ``l.pos``, and a value is only kept when not empty (``lexer.emit``). Cached: the library
    reads the same paths on every request.
    """
    segments: list[Segment] = []
    end = len(path)
    pos = 0
    while True:
        # lexField: a field name runs to a period, a left bracket or the end.
        start = pos
        while pos < end and path[pos] not in "[].":
            pos += 1
        if pos < end and path[pos] == _RIGHT:
            raise _error(path, pos, "unexpected ']'")
        if pos > start:
            segments.append(_field(path[start:pos]))
        if pos == end:
            return tuple(segments)
        if path[pos] == _PERIOD:
            # lexPeriod: not first, not last, and followed by a field name.
            if pos in (0, end - 1):
                raise _error(path, pos, "unexpected '.'")
            pos += 1
            if path[pos] == _PERIOD:
                raise _error(path, pos, "unexpected '.'")
            if path[pos] == _LEFT:
                raise _error(path, pos, "unexpected '['")
            continue
        # lexLeftBracket: a right bracket must follow somewhere.
        if _RIGHT not in path[pos:]:
            raise _error(path, pos, "unterminated '['")
        pos += 1
        # lexFieldOrIndex: up to the next right bracket, periods included.
        right = path.index(_RIGHT, pos)
        if right == pos:
            raise _error(path, pos, "unexpected ']'")
        left = path.find(_LEFT, pos, right)
        if left > -1:
            raise _error(path, left, "unexpected '['")
        segments.append(_field_or_index(path[pos:right]))
        # lexRightBracket
        pos = right + 1


def to_string(segments: Segments) -> str:
    """``Segments.String``: fields joined by periods, a field with a period (or the wildcard)
    and every index in brackets; what Go's messages name a path by."""
    text = ""
    for segment in segments:
        if isinstance(segment, int) or segment == _WILDCARD or _PERIOD in segment:
            text += f"[{segment}]"
        else:
            text += f".{segment}"
    return text.removeprefix(".")


def lookup(obj: Any, segments: Segments) -> Any:
    """The value at ``segments`` of ``obj`` (``getValueFromInterface``).

    :class:`PathNotFound` (Go's ``notFoundError``) for a missing field, an index past the end
    or a null on the way; :class:`PathTypeError` for an index into a non-list or a field of a
    non-object. A field present with a null value is found: the value is None.
    """
    found = obj
    for at, segment in enumerate(segments):
        if isinstance(segment, int):
            if not isinstance(found, list | tuple):
                raise PathTypeError(f"{to_string(segments[:at])}: not an array")
            if segment >= len(found):
                raise PathNotFound(f"{to_string(segments[: at + 1])}: no such element")
            found = found[segment]
        elif isinstance(found, Mapping):
            if segment not in found:
                raise PathNotFound(f"{to_string(segments[: at + 1])}: no such field")
            found = found[segment]
        elif found is None:
            raise PathNotFound(f"{to_string(segments[:at])}: expected map, got nil")
        else:
            raise PathTypeError(f"{to_string(segments[:at])}: not an object")
    return found if segments else None  # Go returns nil for no segments


def get(obj: Any, path: str, default: Any = None) -> Any:
    """The value at ``path`` of ``obj``, or ``default`` when there is none.

    For the library's own paths (``status.atProvider.endpoint``, ``identity[0].oidc[0]``):
    not found and a type on the way that the path can't go through both mean "no value", so
    this is :func:`lookup` without its exceptions (every emitted resource reads a path or
    more, and raising costs more than the walk). A malformed path is a bug in the caller and
    raises :class:`FieldPathError`.
    """
    segments = parse(path)
    if not segments:
        return None  # as lookup
    found = obj
    for segment in segments:
        if isinstance(segment, str):
            if found.__class__ is not dict and not isinstance(found, Mapping):
                return default
            found = found.get(segment, _MISSING)
            if found is _MISSING:
                return default
        elif isinstance(found, list | tuple) and segment < len(found):
            found = found[segment]
        else:
            return default
    return found


def quoted(path: str) -> str:
    """``path`` in double quotes for a message (Go's ``%q``), cut at a sane length."""
    text = json.dumps(path[:_QUOTED_MAX], ensure_ascii=False)
    return text if len(path) <= _QUOTED_MAX else f'{text[:-1]}..."'


def user_path(path: str) -> str:
    """``path`` when it is a field path a user may write; a ValueError saying why not.

    For pydantic validators of fields holding paths (``fromFieldPath``, import ``manage``):
    the error lands on the field that holds the path. An empty path parses (to nothing) in
    Go, but names no field, so it is refused here.
    """
    try:
        segments = parse(path)
    except FieldPathError as err:
        msg = f"cannot parse {quoted(path)}: {err}"
        raise ValueError(msg) from None
    if not segments:
        msg = "must name a field, such as metadata.labels[cloud]"
        raise ValueError(msg)
    return path
