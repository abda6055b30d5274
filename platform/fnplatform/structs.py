"""Fast conversion between protobuf Structs and plain Python values."""

from __future__ import annotations

from typing import Any

from google.protobuf import json_format, struct_pb2


def struct_to_dict(struct: struct_pb2.Struct) -> dict[str, Any]:
    """A Struct as a dict; whole numbers come back as int, as Kubernetes meant them."""
    return _ints(json_format.MessageToDict(struct))


def _ints(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _ints(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_ints(v) for v in value]
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


def dict_to_struct(value: dict[str, Any]) -> struct_pb2.Struct:
    """A dict as a Struct."""
    struct = struct_pb2.Struct()
    struct.update(value)
    return struct
