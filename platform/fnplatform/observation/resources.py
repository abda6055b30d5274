"""Reading observed state: existence, fields and the Ready condition of composed resources."""

from __future__ import annotations

import functools
from collections.abc import Iterator, Mapping
from typing import Any

from google.protobuf import struct_pb2

from fnplatform import fieldpath
from fnplatform.merge import get_path
from fnplatform.namespaced_kinds import TWINS
from fnplatform.request.memo import BoundedMemo
from fnplatform.request.structs import struct_to_dict, value_of


def condition(resource: Mapping[str, Any] | None, type_: str) -> Mapping[str, Any] | None:
    """The condition of ``type_`` in ``status.conditions``, if reported."""
    conditions = get_path(resource or {}, "status.conditions", None)
    if not isinstance(conditions, list):  # absent, or malformed observed state: not reported
        return None
    for cond in conditions:
        if isinstance(cond, Mapping) and cond.get("type") == type_:
            return cond
    return None


def condition_true(resource: Mapping[str, Any] | None, type_: str = "Ready") -> bool:
    """Whether the resource reports condition ``type_`` with status True."""
    cond = condition(resource, type_)
    return cond is not None and cond.get("status") == "True"


def condition_message(resource: Mapping[str, Any] | None, type_: str = "Ready") -> str:
    """Reason and message of a condition, for status that explains why something isn't ready."""
    cond = condition(resource, type_)
    if cond is None:
        return "not reported yet"
    parts = [str(cond.get("reason") or ""), str(cond.get("message") or "")]
    return ": ".join(p for p in parts if p) or str(cond.get("status", "Unknown"))


@functools.lru_cache(maxsize=1024)
def never_below_observed(preset: int, observed: Any) -> int:
    """``preset``, or the observed number where it is larger: for a size the cloud grows by
    itself and refuses to shrink (a database's storage with autogrow), so a preset never asks
    for a shrink. A bigger preset still grows it; nothing observed yet: the preset."""
    return max(preset, int(observed)) if isinstance(observed, (int, float)) else preset


def _field_names(path: str) -> tuple[str, ...] | None:
    """The segments of ``path`` when they are all field names (no index), else None.

    Remembered: every node pool reads the same few paths, and parsing them again per read
    was most of what reading a field cost.
    """
    segments = fieldpath.parse(path)
    if not segments or not all(isinstance(segment, str) for segment in segments):
        return None
    return tuple(str(segment) for segment in segments)


#: How a protobuf Value holding the string "False" is written: ``string_value`` (field 3,
#: length-delimited, tag 0x1A), length 5, the text. Every serializer writes it so.
FALSE_STRING = b"\x1a\x05False"


def none_false(request_bytes: bytes) -> bool:
    """Whether a serialized request holds no Value ``"False"`` anywhere, so that no observed
    condition can have status False: a C search of the bytes the request arrived as.

    A steady composite (everything Ready and Synced) has none, and then reporting unsynced
    resources need not read every observed resource's conditions from protobuf, which was a
    tenth of composing at any size (bench/results.md). A Value "False" of anything else (a
    message, a label) only means the conditions are read as before; a longer string that
    starts with it is written with another length and does not match.
    """
    return FALSE_STRING not in request_bytes


_ABSENT = object()  # a field not there (None may be a value)

#: ``(type, status, reason, message)`` of one observed condition ("" for a missing string).
Condition = tuple[str, str, str, str]


def _strings(fields: Any) -> Condition:
    """A condition's strings from its Struct fields ("" where absent or not a string)."""
    type_, status = fields.get("type"), fields.get("status")
    reason, message = fields.get("reason"), fields.get("message")
    return (
        type_.string_value if type_ is not None else "",
        status.string_value if status is not None else "",
        reason.string_value if reason is not None else "",
        message.string_value if message is not None else "",
    )


class ReadConditions:
    """Conditions read from protobuf, by the deterministic wire bytes of their ListValue (the
    most recent ``limit``): equal bytes are equal conditions, so the answer is exact.

    Every observed resource has its own (its transition times), so ``limit`` holds those of a
    few thousand composed resources: at most about 4 MiB of keys and strings.
    """

    def __init__(self, limit: int = 8192) -> None:
        self._memo: BoundedMemo[tuple[Condition, ...]] = BoundedMemo(limit)

    def of(self, conditions: struct_pb2.ListValue) -> tuple[Condition, ...]:
        """The conditions of ``conditions`` (``status.conditions`` of an observed resource)."""
        return self._memo.get(
            conditions.SerializeToString(deterministic=True),
            lambda: tuple(_strings(value.struct_value.fields) for value in conditions.values),
        )


CONDITIONS = ReadConditions()


class ObservedResources(Mapping[str, dict[str, Any]]):
    """Observed composed resources by name, converted from protobuf on first read.

    A steady-state request carries every composed resource, but a pass reads the bodies of a
    few (status sources, references); names and kinds are all most checks need, so bodies are
    converted lazily and cached.
    """

    def __init__(self, resources: Any, *, sharing: ObservedResources | None = None) -> None:
        """``resources``: the request's ``map<string, Resource>``. ``sharing``: another view
        of the same request (``resources`` is then None) whose converted bodies and read
        conditions this one shares."""
        self._resources: Any = resources if sharing is None else sharing._resources
        self._bodies: dict[str, dict[str, Any]] = {} if sharing is None else sharing._bodies
        self._conditions: dict[str, tuple[Condition, ...]] = (
            {} if sharing is None else sharing._conditions
        )
        #: Set when the request's bytes hold no string "False" (:func:`none_false`): then no
        #: condition is False, and there is nothing unsynced to look for.
        self.none_false: bool = False if sharing is None else sharing.none_false

    def __getitem__(self, name: str) -> dict[str, Any]:
        body = self._bodies.get(name)
        if body is None:
            if name not in self._resources:  # indexing a protobuf map would insert the key
                raise KeyError(name)
            body = struct_to_dict(self._resources[name].resource)
            self._bodies[name] = body
        return body

    def __contains__(self, name: object) -> bool:
        return name in self._resources

    def __iter__(self) -> Iterator[str]:
        return iter(sorted(self._resources))

    def __len__(self) -> int:
        return len(self._resources)

    def conditions_of(self, name: str) -> tuple[Condition, ...]:
        """``(type, status, reason, message)`` of each condition observed ``name`` reports,
        read from the request without converting its body ("" where a condition has no such
        string), remembered for the pass.

        Read once per resource: reporting unsynced resources reads every observed resource's
        conditions, and readiness the Ready conditions of most of them again; walking the
        protobuf is most of what either costs (bench/results.md). The walk itself is
        remembered by the conditions' wire bytes (:data:`CONDITIONS`): a provider rewrites
        them only when one changes, so the next pass finds them by a serialization in C.
        """
        found = self._conditions.get(name)
        if found is not None:
            return found
        status = self._resources[name].resource.fields.get("status")
        conditions = status.struct_value.fields.get("conditions") if status is not None else None
        found = () if conditions is None else CONDITIONS.of(conditions.list_value)
        self._conditions[name] = found
        return found

    def unsynced(self) -> list[tuple[str, str, str, str, str]]:
        """(name, kind, metadata.name, reason, message) of each resource whose ``Synced``
        condition is False with a message, read from the request without converting bodies."""
        if self.none_false:
            return []
        out = []
        for name in sorted(self._resources):
            for type_, status, reason, message in self.conditions_of(name):
                if type_ == "Synced" and status == "False" and message:
                    fields = self._resources[name].resource.fields
                    meta = fields["metadata"].struct_value.fields if "metadata" in fields else {}
                    out.append(
                        (
                            name,
                            fields["kind"].string_value if "kind" in fields else "",
                            meta["name"].string_value if "name" in meta else "",
                            reason,
                            message,
                        )
                    )
        return out

    def field(self, name: str, path: str, default: Any = None) -> Any:
        """The field at ``path`` of observed resource ``name`` (``default`` if absent), as
        :func:`fnplatform.merge.get_path` reads it from the converted body.

        A path of field names only is read from the protobuf without converting the body: one
        field of every node pool of a thousand-pool cluster must not convert a thousand bodies
        nothing else reads. A path with an index reads the converted body.
        """
        names = _field_names(path)
        if names is not None and name not in self._bodies:
            resource = self._resources.get(name)  # get: indexing would insert the key
            if resource is not None:
                fields = resource.resource.fields
                *parents, last = names
                for part in parents:
                    value = fields.get(part)
                    if value is None or value.WhichOneof("kind") != "struct_value":
                        return default  # not found, or not an object: no value, as get_path
                    fields = value.struct_value.fields
                value = fields.get(last)
                return default if value is None else value_of(value)
        return get_path(self.get(name), path, default)

    def part(self, name: str, path: str) -> dict[str, Any] | None:
        """Observed ``name`` holding only the field at ``path`` (field names only), None when
        not observed.

        For helpers that take a body (a condition's message, a wrapped object's status): the
        rest of the body, ``resourceVersion`` and all, is then no input of the pass
        (:mod:`fnplatform.engine.reuse`).
        """
        if name not in self:
            return None
        value = self.field(name, path, _ABSENT)
        body: dict[str, Any] = {}
        names = _field_names(path)
        if value is not _ABSENT and names is not None:
            target = body
            *parents, last = names
            for segment in parents:
                target = target.setdefault(segment, {})
            target[last] = value
        return body

    def type_of(self, name: str) -> tuple[str, str]:
        """``(apiVersion, kind)`` of observed resource ``name``, without converting its body."""
        fields = self._resources[name].resource.fields
        api_version = fields["apiVersion"].string_value if "apiVersion" in fields else ""
        kind = fields["kind"].string_value if "kind" in fields else ""
        return api_version, kind

    def names_of(self, api_version: str, kind: str) -> list[str]:
        """Names of the observed resources of one type, sorted.

        A registered (cluster-scoped) type also finds its namespaced twin, which is what a
        namespaced composite composed for it (see :mod:`fnplatform.composition.namespaced`).
        """
        wanted = {(api_version, kind)}
        twin = TWINS.get((api_version, kind))
        if twin is not None:
            wanted.add(twin)
        return [name for name in self if self.type_of(name) in wanted]

    def condition_true(self, name: str, type_: str = "Ready") -> bool:
        """Whether observed ``name`` reports ``type_`` True, read without converting its body."""
        if name not in self._conditions and name not in self._resources:
            return False
        for found, status, _, _ in self.conditions_of(name):
            if found == type_ and status == "True":
                return True
        return False

    def connection_details(self, name: str) -> dict[str, bytes]:
        """The connection details Crossplane observed for ``name`` (empty when none).

        Only for deciding whether they exist: secret values never go into desired state,
        status or logs.
        """
        if name not in self._resources:
            return {}
        return dict(self._resources[name].connection_details)
