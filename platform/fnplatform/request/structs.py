"""Fast conversion between protobuf Structs and plain Python values.

Reading: :func:`struct_to_dict` walks the Struct directly, or rebuilds the dict of a Struct
read before from a remembered ``marshal``. Writing: :func:`fill_struct` encodes a dict's wire
bytes in one Python walk and parses them in C, and remembers the bytes of recent bodies by
their exact content, so a body composed again (every poll recomposes the same resources) costs
one ``marshal.dumps`` and one parse. ``Struct.update`` sets every field through Python, several
protobuf calls per leaf: it was half the time of a large composition (bench/results.md). Both
memos are bounded in bytes, least recently used first (``function.server.size_memos``).
"""

from __future__ import annotations

import hashlib
import marshal
import struct as binary
from typing import Any

from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from google.protobuf import struct_pb2

from fnplatform.request.memo import SizedMemo


def struct_to_dict(struct: struct_pb2.Struct) -> dict[str, Any]:
    """A Struct as a dict; whole numbers come back as int, as Kubernetes meant them.

    Walks the Struct directly rather than through ``json_format.MessageToDict``, which is
    about four times slower. A Struct read before (the composite and the observed bodies
    come back unchanged on every poll) is rebuilt from a remembered ``marshal`` of its dict,
    found by its deterministic wire bytes: five times faster than walking it again, and
    still a new dict the caller may change.
    """
    if DECODED.limit_bytes:
        data = struct.SerializeToString(deterministic=True)
        if len(data) >= DECODED.SMALLEST:
            return DECODED.dict_of(data, struct)
    return walk_struct(struct)


def walk_struct(struct: struct_pb2.Struct) -> dict[str, Any]:
    """A Struct as a dict, read field by field."""
    return {key: _value(value) for key, value in struct.fields.items()}


def value_of(value: struct_pb2.Value) -> Any:
    """A protobuf Value as Python (ints where the number is whole)."""
    return _value(value)


def _value(value: struct_pb2.Value) -> Any:
    kind = value.WhichOneof("kind")
    if kind == "struct_value":
        return {key: _value(item) for key, item in value.struct_value.fields.items()}
    if kind == "list_value":
        return [_value(item) for item in value.list_value.values]
    if kind == "string_value":
        return value.string_value
    if kind == "number_value":
        number = value.number_value
        return int(number) if number.is_integer() else number
    if kind == "bool_value":
        return value.bool_value
    return None


def dict_to_struct(value: dict[str, Any]) -> struct_pb2.Struct:
    """A dict as a Struct (see :func:`fill_struct`)."""
    struct = struct_pb2.Struct()
    fill_struct(struct, value)
    return struct


def fill_struct(target: struct_pb2.Struct, value: dict[str, Any]) -> None:
    """Replace ``target``'s content with ``value``, exactly as ``Clear`` + ``update`` would.

    Anything the encoder does not know (a Struct or ListValue message as a value, a non-string
    key, a number a double cannot hold) goes through ``Struct.update``, so behaviour and errors
    stay the same; tests/test_response_cache.py compares both on every composed body.
    """
    target.Clear()
    try:
        encoded = ENCODED.struct_bytes(value)
    except (TypeError, AttributeError, ValueError, OverflowError, UnicodeError):
        target.update(value)
        return
    target.MergeFromString(encoded)


class BoundedBytes(SizedMemo[bytes, bytes]):
    """A thread-safe LRU of byte strings by a byte-string key (a digest, or the content
    itself), bounded in bytes (keys, values and entry overhead counted), by the one eviction
    rule of :class:`fnplatform.request.memo.SizedMemo`."""

    ENTRY_OVERHEAD = 200  # dict slot, OrderedDict link, bytes headers: bytes per entry

    def _remember(self, key: bytes, encoded: bytes) -> None:
        self._keep(key, encoded, len(key) + len(encoded) + self.ENTRY_OVERHEAD)


class EncodedBodies(BoundedBytes):
    """Wire bytes of recently written bodies, by their exact content (LRU, bytes).

    The key is ``marshal.dumps`` of the content itself: C speed, and exact about types
    (``True`` is not ``1``, ``1`` is not ``1.0``, a str subclass is refused), so equal keys
    mean equal Structs. The key is not digested: the dictionary hashes it once (bytes keep
    their hash) and compares it on a hit, which costs less than a BLAKE2 of it, a twentieth of
    writing a large response (bench/results.md); the bound counts its bytes.
    """

    def struct_bytes(self, value: dict[str, Any]) -> bytes:
        """The wire bytes of a Struct holding ``value``."""
        if not self.limit_bytes:
            return encode_struct(value)
        key = marshal.dumps(value, 4)
        found = self._get(key)
        if found is not None:
            return found
        encoded = encode_struct(value)
        self._remember(key, encoded)
        return encoded

    def entry_bytes(self, name: str, body: dict[str, Any], ready: int) -> bytes:
        """The ``State.resources`` entry of ``name`` (:func:`resource_entry`)."""
        if not self.limit_bytes:
            return encode_entry(name, body, ready)
        try:
            key = marshal.dumps((name, ready, body), 4)
        except ValueError:  # a type marshal refuses: Struct.update decides (encode_entry)
            return encode_entry(name, body, ready)
        found = self._get(key)
        if found is not None:
            return found
        encoded = encode_entry(name, body, ready)
        self._remember(key, encoded)
        return encoded


ENCODED = EncodedBodies(8 * 1024 * 1024)  # sized by function.server.size_memos


class DecodedStructs(BoundedBytes):
    """``marshal`` of recently read Structs' dicts, by a digest of their wire bytes (LRU)."""

    SMALLEST = 256  # below this, walking is as cheap as serializing and looking up

    def dict_of(self, data: bytes, struct: struct_pb2.Struct) -> dict[str, Any]:
        """The dict of ``struct``, whose deterministic wire bytes are ``data``."""
        key = hashlib.blake2b(data, digest_size=20).digest()
        found = self._get(key)
        if found is not None:
            remembered: dict[str, Any] = marshal.loads(found)
            return remembered
        value = walk_struct(struct)
        self._remember(key, marshal.dumps(value, 4))
        return value


DECODED = DecodedStructs(8 * 1024 * 1024)  # sized by function.server.size_memos


# -- wire encoding of google.protobuf.Struct ------------------------------------------------
#
# Struct    { map<string, Value> fields = 1; }  an entry: string key = 1; Value value = 2;
# Value     { null_value = 1 (varint); number_value = 2 (double); string_value = 3;
#             bool_value = 4 (varint); struct_value = 5; list_value = 6; }
# ListValue { repeated Value values = 1; }
#
# A length-delimited field is its tag byte, the length as a varint, the bytes; lengths under
# 128 are one byte, so the tag+length prefixes are precomputed for those.


def _prefixes(tag: int) -> list[bytes]:
    return [bytes((tag, n)) for n in range(128)]


_ENTRY = _prefixes(0x0A)  # Struct.fields entry, entry key, ListValue.values: field 1
_VALUE = _prefixes(0x12)  # entry value: field 2
_STRING = _prefixes(0x1A)  # Value.string_value: field 3
_OBJECT = _prefixes(0x2A)  # Value.struct_value: field 5
_LIST = _prefixes(0x32)  # Value.list_value: field 6
_NULL = b"\x08\x00"
_TRUE = b"\x20\x01"
_FALSE = b"\x20\x00"
_DOUBLE = b"\x11"
_pack_double = binary.Struct("<d").pack
_KEYS: dict[str, bytes] = {}  # field name -> encoded entry key; names repeat in every body
_STRINGS: dict[str, bytes] = {}  # short string values (kinds, API versions) -> encoded Value
_MEMO_MAX = 8192
_SHORT = 64


def _prefix(table: list[bytes], length: int) -> bytes:
    if length < 128:
        return table[length]
    out = bytearray((table[0][0],))
    while length >= 128:
        out.append((length & 0x7F) | 0x80)
        length >>= 7
    out.append(length)
    return bytes(out)


def _key(name: str) -> bytes:
    if type(name) is not str:
        msg = f"Struct keys must be strings, not {type(name).__name__}"
        raise TypeError(msg)
    data = name.encode()
    encoded = _prefix(_ENTRY, len(data)) + data
    if len(_KEYS) < _MEMO_MAX:
        _KEYS[name] = encoded
    return encoded


def _string(value: str) -> bytes:
    data = value.encode()
    encoded = _prefix(_STRING, len(data)) + data
    if len(data) < _SHORT and len(_STRINGS) < _MEMO_MAX:
        _STRINGS[value] = encoded
    return encoded


def encode_struct(value: dict[str, Any]) -> bytes:
    """The wire bytes of a Struct holding ``value``, its entries in the dict's order."""
    parts: list[bytes] = []
    append = parts.append
    for name, item in value.items():
        key = _KEYS.get(name) or _key(name)
        encoded = _encode_value(item)
        size = len(encoded)
        head = _VALUE[size] if size < 128 else _prefix(_VALUE, size)
        size += len(key) + len(head)
        append(_ENTRY[size] if size < 128 else _prefix(_ENTRY, size))
        append(key)
        append(head)
        append(encoded)
    return b"".join(parts)


def _encode_list(items: list[Any] | tuple[Any, ...]) -> bytes:
    parts: list[bytes] = []
    append = parts.append
    for item in items:
        encoded = _encode_value(item)
        size = len(encoded)
        append(_ENTRY[size] if size < 128 else _prefix(_ENTRY, size))
        append(encoded)
    return b"".join(parts)


def _encode_value(value: Any) -> bytes:  # noqa: PLR0911 - one return per Value kind
    kind = type(value)
    if kind is str:
        return _STRINGS.get(value) or _string(value)
    if kind is dict:
        data = encode_struct(value)
        return _prefix(_OBJECT, len(data)) + data
    if kind is bool:
        return _TRUE if value else _FALSE
    if kind is int or kind is float:
        return _DOUBLE + _pack_double(float(value))
    if kind is list:
        data = _encode_list(value)
        return _prefix(_LIST, len(data)) + data
    if value is None:
        return _NULL
    return _encode_subclass(value)


def _encode_subclass(value: Any) -> bytes:
    """Subclasses of the JSON types (and tuples), in ``Struct.update``'s order of checks."""
    if isinstance(value, bool):
        return _TRUE if value else _FALSE
    if isinstance(value, str):
        data = value.encode()
        return _prefix(_STRING, len(data)) + data
    if isinstance(value, (int, float)):
        return _DOUBLE + _pack_double(float(value))
    if isinstance(value, dict):
        data = encode_struct(value)
        return _prefix(_OBJECT, len(data)) + data
    if isinstance(value, (list, tuple)):
        data = _encode_list(value)
        return _prefix(_LIST, len(data)) + data
    msg = f"no Struct encoding for {type(value).__name__}"
    raise TypeError(msg)


# -- desired resources as wire bytes ----------------------------------------------------------


def resource_entry(name: str, body: dict[str, Any], ready: int) -> bytes:
    """One ``State.resources`` entry (tag included), as deterministic serialization writes it.

    Remembered whole by content (:class:`EncodedBodies`): a resource composed again (every
    pass composes nearly the same resources) costs one ``marshal.dumps`` and a lookup, where
    filling the response message parsed its bytes into the message and serializing the
    response walked and sorted them again.
    """
    return ENCODED.entry_bytes(name, body, ready)


def encode_entry(name: str, body: dict[str, Any], ready: int) -> bytes:
    """:func:`resource_entry` without the memo: the entry as the response message would hold
    it (:func:`fill_struct`), serialized by protobuf itself, which sorts every map."""
    state = fnv1.State()
    resource = state.resources[name]
    fill_struct(resource.resource, body)
    resource.ready = ready  # type: ignore[assignment]
    return state.SerializeToString(deterministic=True)
