"""The protobuf wire bytes the server writes by hand, where parsing into a message and
serializing it again would cost more: the response with its composed resources spliced in as
bytes (:func:`serialize`), and the response cache's answers with the asking request's tag
(``function.cache``).

What is written here is what ``SerializeToString(deterministic=True)`` writes, byte for byte:
fields in number order, map entries sorted by key (:func:`map_order`).
"""

from __future__ import annotations

from crossplane.function.proto.v1 import run_function_pb2 as fnv1


def varint(number: int) -> bytes:
    """``number`` (not negative) as a protobuf varint."""
    out = bytearray()
    while number >= 0x80:
        out.append((number & 0x7F) | 0x80)
        number >>= 7
    out.append(number)
    return bytes(out)


def length_delimited(number: int, data: bytes) -> bytes:
    """Field ``number`` holding ``data``, length-delimited (a message, bytes or a string)."""
    return varint(number << 3 | 2) + varint(len(data)) + data


def map_order(key: str) -> bytes:
    """Sort key of a map entry in protobuf's (upb's) deterministic serialization.

    upb compares the keys' UTF-8 bytes over their common length, and when one key is a prefix
    of the other puts the longer one first (``namespace`` before ``name``). A byte 0xFF, which
    UTF-8 never contains, after each key gives that order.
    """
    return key.encode() + b"\xff"


_DESIRED = 2  # RunFunctionResponse.desired


def serialize(rsp: fnv1.RunFunctionResponse, wire: dict[str, bytes]) -> bytes:
    """``rsp`` with the resources in ``wire`` (:func:`fnplatform.engine.runner.write`) added, as
    ``SerializeToString(deterministic=True)`` would write the whole response: byte for byte.

    Deterministic serialization writes fields in number order and map entries sorted by key.
    So ``rsp`` is serialized without resources, and ``desired`` (field 2; only ``meta``,
    field 1, comes before it) is rewritten as its composite followed by every resource entry,
    those already in the message (an earlier step's) and those in ``wire``, in the order
    deterministic serialization sorts map keys (:func:`map_order`).
    Every top-level field of a response is length-delimited.
    """
    if not wire:
        return rsp.SerializeToString(deterministic=True)
    entries = dict(wire)
    kept = rsp.desired.resources
    for name in kept:
        single = fnv1.State()
        single.resources[name].CopyFrom(kept[name])
        entries[name] = single.SerializeToString(deterministic=True)
    rsp.desired.ClearField("resources")
    body = rsp.SerializeToString(deterministic=True)
    cut = end = len(body)
    state = b""
    at = 0
    while at < len(body):
        tag, start = _varint_at(body, at)
        size, start = _varint_at(body, start)
        if tag >> 3 >= _DESIRED:
            cut = end = at
            if tag >> 3 == _DESIRED:
                state = body[start : start + size]
                end = start + size
            break
        at = start + size
    state += b"".join(entries[name] for name in sorted(entries, key=map_order))
    return b"".join(
        (body[:cut], bytes((_DESIRED << 3 | 2,)), varint(len(state)), state, body[end:])
    )


def _varint_at(data: bytes, at: int) -> tuple[int, int]:
    """The varint starting at ``data[at]`` and the position after it."""
    value = shift = 0
    while True:
        byte = data[at]
        at += 1
        value |= (byte & 0x7F) << shift
        if byte < 0x80:
            return value, at
        shift += 7
