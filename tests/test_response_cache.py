"""The response cache (``--response-cache-mib``) never answers stale, and changes no byte.

Two production servers run side by side in threads: one with a cache whose counters the tests
read, one with the cache off. Requests go over gRPC as raw bytes, and responses are compared
as raw bytes: with the cache on, every module case (as first composed, once converged, and
each invalid variant) and every render case the goldens use (tests/render-cases) gets exactly
the cache-off server's answer, also when it comes from the cache for another tag. Any change
of composite, observed resource, connection details, desired state of earlier steps, required
or extra resource, context, input or function version misses. The key does not depend on the
order of map entries in the request bytes (Go's marshaler does not sort them).

The Struct encoder behind the faster response writing (``fnplatform.request.structs.fill_struct``)
is checked here too: for every body the suites compose, it gives the Struct that
``Struct.update`` gives, byte for byte; and the composed resources the server writes as wire
bytes (``fnplatform.request.structs.resource_entry``) are what deterministic serialization writes.
"""

from __future__ import annotations

import copy
import importlib.util
import itertools
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from types import ModuleType
from typing import Any

import grpc
import pytest
from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from fnplatform.request.structs import fill_struct, resource_entry, struct_to_dict
from google.protobuf import struct_pb2
from google.protobuf.message import Message

from function.cache import ResponseCache, budget
from function.server import MIB, ServerConfig, build_server, response_cache
from tests.support.cases import ModuleCase, cluster_case, converge, module_cases
from tests.support.harness import Rendered, ServerThread, free_port, observed_ready
from tests.support.table import case

ROOT = Path(__file__).resolve().parent.parent
METHOD = "/apiextensions.fn.proto.v1.FunctionRunnerService/RunFunction"
MAX_SEND = 4 * MIB


class CachedServerThread(ServerThread):
    """The production server with a cache the test holds (to read its counters)."""

    def __init__(self, config: ServerConfig, cache: ResponseCache | None) -> None:
        super().__init__(config)
        self.cache = cache

    async def _start(self) -> None:
        self._server = build_server(self.config, self._executor, self.cache)
        await self._server.start()


@dataclass
class Served:
    """A running server, its cache (None when off) and a bytes-in/bytes-out call."""

    thread: CachedServerThread
    cache: ResponseCache | None
    channel: grpc.Channel

    def call(self, request: fnv1.RunFunctionRequest | bytes, tag: str = "") -> bytes:
        """Send ``request`` (tagged ``tag`` unless already bytes); the raw response."""
        if isinstance(request, fnv1.RunFunctionRequest):
            tagged = fnv1.RunFunctionRequest()
            tagged.CopyFrom(request)
            tagged.meta.tag = tag
            request = tagged.SerializeToString()
        call = self.channel.unary_unary(METHOD, request_serializer=None, response_deserializer=None)
        return bytes(call(request, timeout=60))

    def run(self, request: fnv1.RunFunctionRequest) -> Rendered:
        """``request`` answered and read back (for :func:`converge`)."""
        return Rendered(fnv1.RunFunctionResponse.FromString(self.call(request)))


def _serve(cache_mib: int) -> Iterator[Served]:
    config = ServerConfig(
        address=f"127.0.0.1:{free_port()}",
        insecure=True,
        max_send_message_size=MAX_SEND,
        response_cache_mib=cache_mib,
    )
    cache = response_cache(config)
    thread = CachedServerThread(config, cache).start()
    channel = grpc.insecure_channel(
        config.address, options=[("grpc.max_receive_message_length", -1)]
    )
    yield Served(thread, cache, channel)
    channel.close()
    thread.stop()


@pytest.fixture(scope="module")
def cached() -> Iterator[Served]:
    """A server with the default cache (64 MiB)."""
    yield from _serve(64)


@pytest.fixture(scope="module")
def uncached() -> Iterator[Served]:
    """A server with ``--response-cache-mib 0``."""
    yield from _serve(0)


def _counters(served: Served) -> tuple[int, int]:
    assert served.cache is not None
    return served.cache.hits, served.cache.misses


def _hit(served: Served, request: fnv1.RunFunctionRequest | bytes, tag: str) -> tuple[bool, bytes]:
    """Whether ``request`` was answered from the cache, and the answer."""
    hits, misses = _counters(served)
    answer = served.call(request, tag)
    after = _counters(served)
    assert after[0] + after[1] == hits + misses + 1, "exactly one lookup per request"
    return after[0] == hits + 1, answer


# -- requests ---------------------------------------------------------------------------------


def _gcp_case() -> ModuleCase:
    return cluster_case("gcp")


@pytest.fixture(scope="module")
def steady(uncached: Served) -> tuple[ModuleCase, fnv1.RunFunctionRequest]:
    """A GCP cluster whose resources are all observed Ready: what every poll re-sends."""
    case = _gcp_case()
    _, observed = converge(uncached.run, case)
    return case, case.request(observed=observed)


def _load_bench() -> ModuleType:
    spec = importlib.util.spec_from_file_location("bench_run", ROOT / "bench" / "run.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules["bench_run"] = module  # dataclasses look their module up while defining
    spec.loader.exec_module(module)
    return module


def _every_case_request(uncached: Served) -> list[tuple[str, fnv1.RunFunctionRequest]]:
    """Every module case (first pass, converged, each invalid variant) and every render case."""
    found: list[tuple[str, fnv1.RunFunctionRequest]] = []
    for module_case in module_cases():
        found.append((f"{module_case.id}/first", module_case.request()))
        _, observed = converge(uncached.run, module_case)
        found.append((f"{module_case.id}/converged", module_case.request(observed=observed)))
        for invalid in module_case.invalid:
            composite, step = copy.deepcopy(module_case.composite), module_case.step()
            invalid.mutate(composite, step)
            found.append(
                (
                    f"{module_case.id}/{invalid.name}",
                    module_case.request(composite=composite, input=step),
                )
            )
    bench = _load_bench()
    for workload in bench.example_workloads():
        found.append(
            (f"render case {workload.name}", fnv1.RunFunctionRequest.FromString(workload.payload))
        )
    return found


# -- the key ----------------------------------------------------------------------------------


def _length_delimited(number: int, data: bytes) -> bytes:
    def varint(value: int) -> bytes:
        out = bytearray()
        while value >= 0x80:
            out.append((value & 0x7F) | 0x80)
            value >>= 7
        out.append(value)
        return bytes(out)

    return varint(number << 3 | 2) + varint(len(data)) + data


def reordered(message: Message) -> bytes:
    """``message``'s wire bytes with its fields, and every map's entries, in reverse order.

    Valid protobuf for the same content, as another marshaler (Go's does not sort maps) sends.
    """
    parts: list[bytes] = []
    for field, value in message.ListFields():
        entry_type = field.message_type
        if entry_type is not None and entry_type.GetOptions().map_entry:
            value_field = entry_type.fields_by_name["value"]
            for key in sorted(value, reverse=True):
                item = value[key]
                if value_field.message_type is not None:
                    encoded = reordered(item)
                else:
                    encoded = item if isinstance(item, bytes) else str(item).encode()
                entry = _length_delimited(1, key.encode()) + _length_delimited(2, encoded)
                parts.append(_length_delimited(field.number, entry))
        elif entry_type is not None and field.is_repeated:
            parts.append(b"".join(_length_delimited(field.number, reordered(m)) for m in value))
        elif entry_type is not None:
            parts.append(_length_delimited(field.number, reordered(value)))
        else:
            alone = type(message)()
            if field.is_repeated:
                getattr(alone, field.name).extend(value)
            else:
                setattr(alone, field.name, value)
            parts.append(alone.SerializeToString())
    return b"".join(reversed(parts))


def test_reordered_bytes_hit_and_answer_with_their_own_tag(
    cached: Served, uncached: Served, steady: tuple[ModuleCase, fnv1.RunFunctionRequest]
) -> None:
    _, request = steady
    request = fnv1.RunFunctionRequest.FromString(request.SerializeToString())
    request.meta.tag = "reordered"
    shuffled = reordered(request)
    assert shuffled != request.SerializeToString()
    assert fnv1.RunFunctionRequest.FromString(shuffled) == request

    was_hit, first = _hit(cached, request, "first")
    assert not was_hit
    was_hit, answer = _hit(cached, shuffled, "reordered")
    assert was_hit, "the same content in another byte order must hit"
    assert answer == uncached.call(shuffled)
    assert fnv1.RunFunctionResponse.FromString(answer).meta.tag == "reordered"
    assert fnv1.RunFunctionResponse.FromString(first).meta.tag == "first"


Change = Callable[[fnv1.RunFunctionRequest], None]


def _struct_edit(path: str, value: Any) -> Callable[[struct_pb2.Struct], None]:
    def edit(struct: struct_pb2.Struct) -> None:
        body = struct_to_dict(struct)
        *parents, leaf = path.split(".")
        target = body
        for name in parents:
            target = target.setdefault(name, {})
        target[leaf] = value
        struct.Clear()
        struct.update(body)

    return edit


def _first_observed(request: fnv1.RunFunctionRequest) -> str:
    return sorted(request.observed.resources)[0]


def _change_observed_status(request: fnv1.RunFunctionRequest) -> None:
    resource = request.observed.resources[_first_observed(request)].resource
    _struct_edit("status.atProvider.someUnreadField", "changed")(resource)


def _change_observed_connection(request: fnv1.RunFunctionRequest) -> None:
    request.observed.resources[_first_observed(request)].connection_details["extra"] = b"x"


def _drop_observed(request: fnv1.RunFunctionRequest) -> None:
    del request.observed.resources[_first_observed(request)]


def _change_required(request: fnv1.RunFunctionRequest) -> None:
    key = sorted(request.required_resources)[0]
    item = request.required_resources[key].items[0].resource
    _struct_edit("data.someUnreadSetting", "changed")(item)


def _add_extra(request: fnv1.RunFunctionRequest) -> None:
    target = request.extra_resources["legacy"]
    target.items.add().resource.update({"apiVersion": "v1", "kind": "ConfigMap"})


def _change_context(request: fnv1.RunFunctionRequest) -> None:
    request.context.update({"example.org/unrelated": {"key": "value"}})


def _change_input(request: fnv1.RunFunctionRequest) -> None:
    request.input.update({"ttl": "61s"})


def _change_desired(request: fnv1.RunFunctionRequest) -> None:
    request.desired.resources["from-an-earlier-step"].resource.update(
        {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "x"}}
    )


def _change_credentials(request: fnv1.RunFunctionRequest) -> None:
    request.credentials["source"].credential_data.data["token"] = b"t"


CHANGES: dict[str, Change] = {
    "composite label": lambda r: _struct_edit("metadata.labels.team", "b")(
        r.observed.composite.resource
    ),
    "composite spec": lambda r: _struct_edit("spec.parameters.domain", "other.example.org")(
        r.observed.composite.resource
    ),
    "composite status": lambda r: _struct_edit("status.someUnreadField", 1)(
        r.observed.composite.resource
    ),
    "composite number type": lambda r: _struct_edit("status.number", 1.5)(
        r.observed.composite.resource
    ),
    "observed resource status": _change_observed_status,
    "observed connection details": _change_observed_connection,
    "observed resource gone": _drop_observed,
    "required resource": _change_required,
    "extra resource": _add_extra,
    "context": _change_context,
    "input": _change_input,
    "desired from an earlier step": _change_desired,
    "credentials": _change_credentials,
    "capabilities": lambda r: r.meta.capabilities.append(fnv1.CAPABILITY_REQUIRED_SCHEMAS),
}


@pytest.mark.parametrize("name", list(CHANGES))
def test_any_change_of_the_request_misses(
    name: str,
    cached: Served,
    uncached: Served,
    steady: tuple[ModuleCase, fnv1.RunFunctionRequest],
) -> None:
    _, baseline = steady
    cached.call(baseline, "baseline")
    assert _hit(cached, baseline, "again")[0], "the unchanged request hits"

    changed = fnv1.RunFunctionRequest()
    changed.CopyFrom(baseline)
    CHANGES[name](changed)
    assert changed != baseline
    was_hit, answer = _hit(cached, changed, "changed")
    assert not was_hit, f"a change of {name} must miss"
    assert answer == uncached.call(changed, "changed")


def test_a_new_function_version_misses(
    cached: Served, steady: tuple[ModuleCase, fnv1.RunFunctionRequest]
) -> None:
    _, request = steady
    assert cached.cache is not None
    cached.call(request, "warm")
    assert _hit(cached, request, "again")[0]
    version = cached.cache.version
    cached.cache.version = f"{version}+next"
    try:
        assert not _hit(cached, request, "upgraded")[0], "a new version must miss"
    finally:
        cached.cache.version = version


def test_the_tag_alone_does_not_change_the_key(
    cached: Served, uncached: Served, steady: tuple[ModuleCase, fnv1.RunFunctionRequest]
) -> None:
    _, request = steady
    cached.call(request, "one")
    for tag in ("two", "", "a-much-longer-tag-" * 20):
        was_hit, answer = _hit(cached, request, tag)
        assert was_hit
        assert answer == uncached.call(request, tag)


# -- byte-identical output -------------------------------------------------------------------


def test_output_with_the_cache_is_byte_identical_to_without(
    cached: Served, uncached: Served
) -> None:
    requests = _every_case_request(uncached)
    assert len(requests) > 20
    stored_before = len(cached.cache or ())
    for (name, request), tags in zip(
        requests, itertools.cycle([("a", "b"), ("", "c")]), strict=False
    ):
        off = uncached.call(request, tags[0])
        first = cached.call(request, tags[0])
        assert first == off, f"{name}: first answer differs with the cache on"
        again = cached.call(request, tags[1])
        assert again == uncached.call(request, tags[1]), f"{name}: cached answer differs"
    assert len(cached.cache or ()) > stored_before, "answers were stored"


def test_fatal_answers_are_not_stored(cached: Served) -> None:
    case = _gcp_case()
    composite = copy.deepcopy(case.composite)
    composite["metadata"]["labels"]["cloud"] = "mars"
    request = case.request(composite=composite)
    assert fnv1.RunFunctionResponse.FromString(cached.call(request, "x")).results
    assert not _hit(cached, request, "y")[0]


def test_unparsable_requests_bypass_the_cache(cached: Served) -> None:
    hits, misses = _counters(cached)
    answer = fnv1.RunFunctionResponse.FromString(cached.call(b"\xff\xff\xff"))
    assert "not a valid RunFunctionRequest" in answer.results[0].message
    assert _counters(cached) == (hits, misses)


def test_the_cache_is_bounded_and_drops_the_least_recently_used(uncached: Served) -> None:
    cache = ResponseCache(64 * 1024, MAX_SEND)
    config = ServerConfig(address=f"127.0.0.1:{free_port()}", insecure=True)
    thread = CachedServerThread(config, cache).start()
    channel = grpc.insecure_channel(config.address)
    served = Served(thread, cache, channel)
    try:
        case = _gcp_case()
        requests = [case.renamed(f"bounded-{n}").request() for n in range(40)]
        for request in requests:
            served.call(request)
            assert cache.size <= cache.limit_bytes
        assert cache.evictions > 0
        assert 0 < len(cache) < len(requests)
        assert _hit(served, requests[-1], "recent")[0]
        assert not _hit(served, requests[0], "oldest")[0]
        assert served.call(requests[0], "t") == uncached.call(requests[0], "t")
    finally:
        channel.close()
        thread.stop()


def test_zero_turns_the_cache_off(uncached: Served) -> None:
    assert uncached.cache is None
    assert response_cache(ServerConfig(response_cache_mib=0)) is None
    default = response_cache(ServerConfig())
    assert default is not None
    assert default.limit_bytes == 48 * MIB, "a quarter of 64 MiB goes to the composing memos"
    assert budget(64 * MIB) == (48 * MIB, 16 * MIB // 3)
    assert budget(400 * MIB) == (384 * MIB, 16 * MIB // 3), "the memos take at most 16 MiB"
    assert budget(0) == (0, 16 * MIB // 3)


# -- the Struct encoder -----------------------------------------------------------------------


EDGE_BODIES: list[dict[str, Any]] = [
    {
        "empty": {},
        "none": [],
        "null": None,
        "yes": True,
        "no": False,
        "one": 1,
        "half": 0.5,
        "big": 2**60,
        "negative": -3,
        "tuple": (1, "x"),
        "inf": float("inf"),
        "blank": "",
        "unicode": "ü€𝄞",
        "nested": [[{"a": [None, {}]}]],
        "long": "x" * 300,
        "zero": 0,
        "negative zero": -0.0,
    },
    {f"key-{n}": {"n": n} for n in range(200)},
]


def _update_bytes(body: dict[str, Any]) -> bytes:
    struct = struct_pb2.Struct()
    struct.update(body)
    return struct.SerializeToString(deterministic=True)


def _encoded_bytes(body: dict[str, Any]) -> bytes:
    struct = struct_pb2.Struct()
    fill_struct(struct, body)
    return struct.SerializeToString(deterministic=True)


def test_struct_encoder_matches_struct_update_for_every_composed_body(
    uncached: Served,
) -> None:
    bodies = list(EDGE_BODIES)
    for module_case in module_cases():
        rendered, _ = converge(uncached.run, module_case)
        bodies += list(rendered.resources.values())
    assert len(bodies) > 50
    for body in bodies:
        assert _encoded_bytes(body) == _update_bytes(body), body
        assert _encoded_bytes(body) == _update_bytes(body), "and again, remembered"


def test_resource_entries_are_what_deterministic_serialization_writes(
    uncached: Served,
) -> None:
    """Map entries in upb's order at every level (``namespace`` before ``name``), the ready
    field, and the same bytes again when remembered."""
    bodies = [*EDGE_BODIES, {"name": 1, "namespace": 2, "nam": 3, "b": 4, "B": 5, "é": 6}]
    for module_case in module_cases():
        rendered, _ = converge(uncached.run, module_case)
        bodies += list(rendered.resources.values())
    for index, body in enumerate(bodies):
        for ready in (fnv1.READY_TRUE, fnv1.READY_FALSE):
            state = fnv1.State()
            state.resources[f"r-{index}"].resource.update(body)
            state.resources[f"r-{index}"].ready = ready
            expected = state.SerializeToString(deterministic=True)
            assert resource_entry(f"r-{index}", body, ready) == expected, body
            assert resource_entry(f"r-{index}", body, ready) == expected, "remembered"


@pytest.mark.parametrize(
    "body",
    [
        case(
            "a non-string key: Struct.update raises, and the fast encoder must raise the "
            "same error rather than write a key Crossplane would not read",
            {1: "a non-string key"},
        ),
        case(
            "an int too big for a double: Struct.update refuses it, the fast encoder must "
            "not round it silently",
            {"a": 2**2000},
        ),
        case(
            "a value of no JSON type: both encoders refuse it with the same exception type",
            {"a": object()},
        ),
        case(
            "a lone surrogate is not encodable UTF-8: both encoders fail alike instead of "
            "sending invalid protobuf",
            {"a": "\ud800"},
        ),
    ],
    ids=["int key", "too big", "object", "surrogate"],
)
def test_struct_encoder_fails_as_struct_update_does(body: dict[Any, Any]) -> None:
    with pytest.raises(Exception) as expected:
        struct_pb2.Struct().update(body)
    with pytest.raises(expected.type):
        fill_struct(struct_pb2.Struct(), body)
    with pytest.raises(expected.type):
        resource_entry("r", body, fnv1.READY_TRUE)


def test_struct_encoder_accepts_protobuf_values_as_struct_update_does() -> None:
    inner = struct_pb2.Struct()
    inner.update({"a": 1})
    body = {"struct": inner, "text": "x"}
    assert _encoded_bytes(body) == _update_bytes(body)


def test_observed_ready_bodies_round_trip() -> None:
    body = observed_ready({"apiVersion": "v1", "kind": "X", "spec": {"a": [1, 2.5, True]}})
    struct = struct_pb2.Struct()
    fill_struct(struct, body)
    assert struct_to_dict(struct) == body


# -- remembered Helm values ------------------------------------------------------------------


def test_remembered_helm_values_are_fresh_copies_and_errors_are_not_remembered() -> None:
    from fnplatform.errors import InputError
    from fnplatform.library.templates import render_values

    source = "replicas: {{ replicas }}\nlabels:\n  team: {{ team }}\nlist: [1, 2]\n"
    first = render_values("demo", source, {"replicas": 2, "team": "a"})
    first["labels"]["team"] = "changed by a caller"
    first["list"].append(3)
    again = render_values("demo", source, {"replicas": 2, "team": "a"})
    assert again == {"replicas": 2, "labels": {"team": "a"}, "list": [1, 2]}
    assert render_values("demo", source, {"replicas": 3, "team": "a"})["replicas"] == 3
    assert render_values("demo", source, {"replicas": True, "team": "a"})["replicas"] is True
    for _ in range(2):
        with pytest.raises(InputError, match="undefined variable"):
            render_values("demo", source, {"replicas": 2})
    dated = render_values("demo", "when: 2026-01-01\n", {})
    assert str(dated["when"]) == "2026-01-01"


def test_remembered_struct_reads_are_fresh_and_exact() -> None:
    from fnplatform.request.structs import walk_struct

    body = {
        "spec": {"replicas": 3, "ratio": 0.5, "on": True, "items": [{"a": None}] * 20},
        "metadata": {"name": "x" * 300},
    }
    struct = struct_pb2.Struct()
    struct.update(body)
    first = struct_to_dict(struct)
    first["spec"]["items"][0]["a"] = "changed by a caller"
    again = struct_to_dict(struct)
    assert again == walk_struct(struct) == body
    assert type(again["spec"]["replicas"]) is int
    assert type(again["spec"]["on"]) is bool


def test_malloc_arenas_are_limited_unless_the_environment_says(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import ctypes

    from function import server

    calls: list[tuple[int, int]] = []

    class Libc:
        def mallopt(self, parameter: int, value: int) -> int:
            calls.append((parameter, value))
            return 1

    monkeypatch.setattr(ctypes, "CDLL", lambda name: Libc())
    monkeypatch.setenv("MALLOC_ARENA_MAX", "4")
    server.limit_malloc_arenas()
    assert calls == [], "an explicit MALLOC_ARENA_MAX wins"
    monkeypatch.delenv("MALLOC_ARENA_MAX")
    server.limit_malloc_arenas()
    assert calls == [(server.M_ARENA_MAX, 2)]
