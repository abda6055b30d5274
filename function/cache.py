"""A bounded cache of whole responses, keyed by the canonical content of the request.

Crossplane re-sends an unchanged request for every unchanged composite on every poll, and
composing is deterministic (same request content, byte-identical response), so an answer can
be reused. What makes this safe:

- The key is a SHA-256 of the request re-serialized deterministically (protobuf sorts map
  entries: Go's marshaler does not, so the same content arrives in different byte orders),
  with only ``meta.tag`` left out, plus the function version and the send limit. Everything
  else that can change an answer is in it: composite, observed resources and their connection
  details, desired state of earlier steps, required and extra resources, context, step input,
  credentials, capabilities. A stale answer is the one failure that matters, so nothing is
  left out "because it does not matter today".
- The response is stored without its tag and answered with the asking request's tag.
- Fatal answers are not stored (an internal error may be transient); neither is a response
  whose bytes the stored form would not reproduce exactly.

The bound is in bytes (responses plus a fixed per-entry overhead), least recently used first.
``--response-cache-mib`` bounds everything the process remembers between requests: a quarter
of it (at most 16 MiB) goes to the composing memos (encoded bodies and decoded Structs in
``fnplatform.request.structs``, reusable passes in ``fnplatform.engine.reuse``), the rest to whole
responses. With 0 there is no response cache and the memos keep 16 MiB.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from fnplatform.request.memo import SizedMemo

from function.__version__ import __version__
from function.answer import CallRecord
from function.wire import length_delimited

ENTRY_OVERHEAD = 256  # key, OrderedDict link, tuple and bytes headers, per entry
MEMOS_MAX = 16 * 1024 * 1024
MEMOS_SHARE = 4
#: Memos sharing the budget: encoded bodies, decoded Structs (fnplatform.request.structs) and
#: reusable passes (fnplatform.engine.reuse).
MEMOS = 3


def budget(total_bytes: int) -> tuple[int, int]:
    """``--response-cache-mib`` in bytes split into (responses, each of the :data:`MEMOS`)."""
    if total_bytes <= 0:
        return 0, MEMOS_MAX // MEMOS
    memos = min(MEMOS_MAX, total_bytes // MEMOS_SHARE)
    return total_bytes - memos, memos // MEMOS


@dataclass(frozen=True)
class Lookup:
    """The outcome of looking a request up: its key and tag, and the answer if cached."""

    key: bytes
    tag: str
    response: bytes | None
    record: CallRecord | None = None  # what the cached answer was (module, kind, outcome)


@dataclass
class Stored:
    """A response without its tag: ``meta`` minus the tag, and every later field."""

    meta: bytes
    rest: bytes
    record: CallRecord | None = None

    @property
    def cost(self) -> int:
        """Bytes this entry is charged against the bound."""
        return len(self.meta) + len(self.rest) + ENTRY_OVERHEAD

    def answer(self, tag: str) -> bytes:
        """The response bytes for a request tagged ``tag``.

        Deterministic serialization writes fields in number order: ``meta`` (1) first, and in
        it ``tag`` (1) before ``ttl`` (2). So the bytes are the meta field, its tag, the rest.
        """
        data = tag.encode()
        meta = (length_delimited(1, data) if data else b"") + self.meta
        return length_delimited(1, meta) + self.rest


class ResponseCache(SizedMemo[bytes, Stored]):
    """Responses by canonical request content; LRU within ``limit_bytes`` (a response may
    take all of it)."""

    def __init__(
        self, limit_bytes: int, max_send: int, version: str = __version__, settings: str = ""
    ) -> None:
        """``settings``: the server's flags that change answers (the TTL defaults), in the key."""
        super().__init__(limit_bytes, largest_share=1)
        self.max_send = max_send
        self.version = version
        self.settings = settings
        self.hits = 0  # lookups happen on the event loop only
        self.misses = 0

    def key(self, request: fnv1.RunFunctionRequest) -> bytes:
        """The digest of everything in ``request`` but its tag, the version and the limit.

        ``request`` is modified: its tag is cleared.
        """
        request.meta.tag = ""
        if not request.meta.ListFields():  # nothing else in meta: as if it were not sent
            request.ClearField("meta")
        digest = hashlib.sha256()
        digest.update(
            f"function-platform {self.version} max-send {self.max_send} {self.settings}\n".encode()
        )
        digest.update(request.SerializeToString(deterministic=True))
        return digest.digest()

    def lookup(self, request: bytes) -> Lookup | None:
        """The request's key and tag, and the cached answer if any; None if unparsable."""
        parsed = fnv1.RunFunctionRequest()
        try:
            parsed.ParseFromString(request)
        except Exception:  # the composing path reports it
            return None
        tag = parsed.meta.tag
        key = self.key(parsed)
        stored = self._get(key)
        if stored is None:
            self.misses += 1
            return Lookup(key, tag, None)
        self.hits += 1
        return Lookup(key, tag, stored.answer(tag), stored.record)

    def store(self, lookup: Lookup, response: bytes, record: CallRecord | None = None) -> None:
        """Remember ``response`` (the answer to ``lookup``'s request) if it is safe to reuse."""
        stored = _storable(response, lookup.tag)
        if stored is None:
            return
        stored.record = record
        self._keep(lookup.key, stored, stored.cost)


def _storable(response: bytes, tag: str) -> Stored | None:
    """``response`` without its tag, or None when it must not be reused."""
    parsed = fnv1.RunFunctionResponse()
    try:
        parsed.ParseFromString(response)
    except Exception:  # never cache what we cannot read back
        return None
    if not parsed.HasField("meta") or parsed.meta.tag != tag:
        return None
    if any(r.severity == fnv1.SEVERITY_FATAL for r in parsed.results):
        return None
    parsed.meta.tag = ""
    meta = parsed.meta.SerializeToString(deterministic=True)
    parsed.ClearField("meta")
    stored = Stored(meta, parsed.SerializeToString(deterministic=True))
    if stored.answer(tag) != response:  # the stored form must give back these exact bytes
        return None
    return stored
