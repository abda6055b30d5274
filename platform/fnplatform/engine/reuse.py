"""Passes reused while what the composer read is unchanged.

Under load most requests differ from the last one a composite sent: a provider wrote a
``resourceVersion``, a timestamp, a field nothing here reads. The response cache
(``function.cache``) keys on the whole request and misses on all of them; composing again
gives the same answer. A pass is a pure function of the composite (less the ``metadata``
fields every write changes), the step input, the context, the required resources, earlier
steps' desired state, and the observed fields the composer reads. So the outcome of composing
(``fnplatform.engine.runner.settle``: desired resources as wire bytes, status, conditions, results,
requirements, or the error) is kept under a digest of the first five, beside the reads
(:class:`RecordedReads`: every question the composer asked of the observed resources, and its
answer). A later request with the same digest asks the same questions of its own observed
resources; the same answers mean the same pass, byte for byte, and its outcome is reused.
Readiness of each resource is not part of it: it is read again on every pass
(``fnplatform.engine.runner.write``). The unsynced warnings are: their source, every ``Synced``
condition, is one of the recorded reads.

The reads are exact, not a heuristic: every observed read a composer or the library makes goes
through :class:`~fnplatform.observation.resources.ObservedResources` (``comp.request`` is read only
for the
required resources, which are in the digest), and composing reads no clock, no environment
and no randomness. ``FNPLATFORM_VERIFY_REUSE=1`` (set for every test) composes again on each
reuse and fails loudly when the two differ.
"""

from __future__ import annotations

import hashlib
import marshal
import os
from collections.abc import Callable, Hashable, Iterator
from dataclasses import dataclass, field
from typing import Any

from crossplane.function.proto.v1 import run_function_pb2 as fnv1

from fnplatform.composition import Notes
from fnplatform.errors import CompositionError
from fnplatform.observation.resources import ObservedResources, none_false
from fnplatform.request.memo import SizedMemo
from fnplatform.request.requirements import Requirement

#: What every write to the composite changes and no composer reads.
VOLATILE_METADATA = ("resourceVersion", "managedFields", "generation")
#: Request fields the digest leaves out: ``meta`` (the tag) and ``observed`` (the composite
#: goes in without its volatile metadata; the composed resources only through their reads).
_LEFT_OUT = frozenset({"meta", "observed"})


#: The answer to a read of something absent (a ``KeyError``): one ``marshal`` writes, and no
#: observed read ever answers.
MISSING: Any = Ellipsis
Read = tuple[Any, ...]  # (method name, *arguments)


def _ask(observed: ObservedResources, read: Read) -> Any:
    """The answer ``observed`` gives to ``read``."""
    method, *arguments = read
    try:
        answer = getattr(ObservedResources, method)(observed, *arguments)
    except KeyError:
        return MISSING
    return tuple(answer) if method == "__iter__" else answer


class RecordedReads(ObservedResources):
    """Observed resources that note every question asked of them, with its answer.

    Only the outermost call is noted (``field`` may read the converted body through
    ``get``; noting that would make the whole body, ``resourceVersion`` and all, an input).
    Answers are the values handed to the composer, kept as their ``marshal`` bytes.
    """

    def __init__(self, observed: ObservedResources) -> None:
        super().__init__(None, sharing=observed)
        #: Each question and its answer as ``marshal`` writes it: exact about types (``True``
        #: is not ``1``, ``1`` is not ``1.0``), so equal bytes are equal answers (a dict in
        #: another order only reads as different: never reused wrongly).
        self.reads: dict[Read, bytes] = {}
        self.unhashable = False  # a read whose arguments can't be a key: nothing is reused
        self._depth = 0

    def _note(self, read: Read) -> Any:
        if self._depth:
            return getattr(ObservedResources, read[0])(self, *read[1:])
        self._depth += 1
        try:
            answer = _ask(self, read)
        finally:
            self._depth -= 1
        try:
            if read not in self.reads:
                self.reads[read] = marshal.dumps(answer, 2)
        except (TypeError, ValueError):  # arguments that can't be a key, or an answer marshal
            self.unhashable = True  # refuses: this pass is not reused
        return answer

    def __getitem__(self, name: str) -> dict[str, Any]:
        answer = self._note(("__getitem__", name))
        if answer is MISSING:
            raise KeyError(name)
        return answer  # type: ignore[no-any-return]

    def get(self, name: str, default: Any = None) -> Any:  # type: ignore[override]
        answer = self._note(("get", name))
        return default if answer is None else answer

    def __contains__(self, name: object) -> bool:
        return bool(self._note(("__contains__", name)))

    def __iter__(self) -> Iterator[str]:
        return iter(self._note(("__iter__",)))

    def __len__(self) -> int:
        return int(self._note(("__len__",)))

    def conditions_of(self, name: str) -> Any:
        return self._note(("conditions_of", name))

    def unsynced(self) -> Any:
        return self._note(("unsynced",))

    def field(self, name: str, path: str, default: Any = None) -> Any:
        return self._note(("field", name, path, default))

    def part(self, name: str, path: str) -> Any:
        return self._note(("part", name, path))

    def type_of(self, name: str) -> Any:
        return self._note(("type_of", name))

    def names_of(self, api_version: str, kind: str) -> Any:
        return self._note(("names_of", api_version, kind))

    def condition_true(self, name: str, type_: str = "Ready") -> Any:
        return self._note(("condition_true", name, type_))

    def connection_details(self, name: str) -> Any:
        return self._note(("connection_details", name))


def answers_same(reads: dict[Read, bytes], observed: ObservedResources) -> bool:
    """Whether ``observed`` answers every one of ``reads`` as before."""
    return all(marshal.dumps(_ask(observed, read), 2) == answer for read, answer in reads.items())


PENDING, NOT_YET, DONE = "pending", "not yet", "done"


@dataclass
class SettledResource:
    """One desired resource of a settled pass as the response writes it (what the pass memo
    keeps of it), and how its readiness is derived."""

    name: str
    entry: bytes  # its ``State.resources`` entry with ``ready: READY_TRUE``
    explicit: bool | None  # a readiness the composer set, else None: derived (observed)
    exists_is_ready: bool  # the kind is Ready once it exists (no conditions)
    #: The body itself, for a resource an earlier step put into the response (updated in
    #: place there); never kept in :data:`PASSES`, whose passes have no earlier resources.
    body: dict[str, Any] | None = None

    def entry_with(self, ready: int) -> bytes:
        """The entry with ``ready`` (READY_TRUE or READY_FALSE): only its last byte differs.

        Deterministic serialization writes ``Resource.ready`` (field 3, varint) after the
        Struct and the connection details, so an entry ends with ``0x18`` and the value.
        """
        if ready == fnv1.READY_TRUE:
            return self.entry
        return self.entry[:-1] + bytes((ready,))


@dataclass
class Settled:
    """What composing a pass decided, before readiness: see the module docstring."""

    outcome: str  # PENDING, NOT_YET or DONE
    requirements: list[Requirement] = field(default_factory=list)
    resources: list[SettledResource] = field(default_factory=list)
    notes: Notes = field(default_factory=Notes)
    error: CompositionError | None = None

    def cost(self) -> int:
        """Bytes it holds, roughly: the entries and a share for everything else."""
        return 2048 + sum(len(r.entry) + len(r.name) + 120 for r in self.resources)


def digest_of(request: fnv1.RunFunctionRequest) -> bytes | None:
    """The digest of what a pass reads besides observed composed resources, or None when a
    pass of ``request`` is never reused: an earlier step put resources into desired state
    (the response updates those in place, from the bodies themselves).

    Every part is serialized deterministically (Go sends map entries in any order) and
    written with its field number, key and length, so two digests are equal only when the
    parts are: each top-level field but ``meta`` and ``observed``, map fields entry by entry,
    and the composite with its fields but the volatile metadata.
    """
    if request.desired.resources:
        return None
    digest = hashlib.blake2b(digest_size=20)

    def part(label: str, message: Any) -> None:
        data = message.SerializeToString(deterministic=True)
        digest.update(b"%s %d\n" % (label.encode(), len(data)))
        digest.update(data)

    for descriptor, value in request.ListFields():
        if descriptor.name in _LEFT_OUT:
            continue
        if descriptor.message_type.GetOptions().map_entry:
            for key in sorted(value):
                part(f"{descriptor.number}[{key}]", value[key])
        else:
            part(str(descriptor.number), value)
    composite = request.observed.composite
    part(
        "connection",
        fnv1.Resource(connection_details=composite.connection_details, ready=composite.ready),
    )
    fields = composite.resource.fields
    for key in sorted(fields):
        if key != "metadata":
            part(f"composite.{key}", fields[key])
            continue
        metadata = fields[key].struct_value.fields
        for name in sorted(metadata):
            if name not in VOLATILE_METADATA:
                part(f"composite.metadata.{name}", metadata[name])
    return digest.digest()


#: (composer, reads, the settled pass), by :func:`digest_of`
Entry = tuple[Hashable, dict[Read, bytes], Settled]


@dataclass(frozen=True)
class Probe:
    """What :meth:`PassMemo.probe` learned of a request before composing it."""

    observed: ObservedResources  # its observed resources, reads cached
    digest: bytes | None = None  # None: no pass of it is reused
    entry: Entry | None = None  # the pass its observed resources answer as before

    @property
    def reused(self) -> bool:
        """Whether a pass would be reused."""
        return self.entry is not None


class PassMemo(SizedMemo[bytes, Entry]):
    """Settled passes by digest, each with its reads (the most recent, within a byte bound).

    One entry per digest: a composite converging asks new questions as it goes, and only
    the latest answers are worth keeping. Thread-safe; composing happens outside the lock.
    """

    def __init__(self, limit_bytes: int) -> None:
        super().__init__(limit_bytes)
        self.verify = os.environ.get("FNPLATFORM_VERIFY_REUSE") == "1"

    def probe(
        self, composer: Hashable | None, request: fnv1.RunFunctionRequest, raw: bytes | None = None
    ) -> Probe:
        """What :meth:`settle` needs of ``request`` (parsed from ``raw``, composed by
        ``composer``; None: not known, nothing reused), taken before anything changes it: its
        observed resources, its digest, and the pass it would reuse, if any. Cheap: the
        digest and the pass's observed reads up to the first that answers differently."""
        observed = ObservedResources(request.observed.resources)
        observed.none_false = raw is not None and none_false(raw)
        digest = digest_of(request) if self.limit_bytes and composer is not None else None
        if digest is None:
            return Probe(observed)
        found = self._get(digest)
        if found is None or found[0] is not composer or not answers_same(found[1], observed):
            return Probe(observed, digest)
        return Probe(observed, digest, found)

    def settle(
        self, composer: Hashable, probe: Probe, compose: Callable[[ObservedResources], Settled]
    ) -> Settled:
        """The pass :meth:`probe` found ``composer``'s request answers as before, else
        ``compose`` (given the observed resources to read), remembered with its reads.

        An entry holds its ``composer`` itself, so it is never another one's that got its id."""
        if probe.entry is not None and probe.entry[0] is composer:
            if self.verify:
                check_same(probe.entry[2], compose(probe.observed))
            return probe.entry[2]
        if probe.digest is None:
            return compose(probe.observed)
        reads = RecordedReads(probe.observed)
        settled = compose(reads)
        if not reads.unhashable:
            resources = [
                SettledResource(r.name, r.entry, r.explicit, r.exists_is_ready)
                for r in settled.resources
            ]  # the bodies are not kept
            kept = Settled(
                settled.outcome, settled.requirements, resources, settled.notes, settled.error
            )
            self._keep(
                probe.digest, (composer, reads.reads, kept), kept.cost() + 200 * len(reads.reads)
            )
        return settled


def check_same(reused: Settled, composed: Settled) -> None:
    """Fail when a reused pass differs from composing it again (``FNPLATFORM_VERIFY_REUSE``)."""

    def shape(settled: Settled) -> Any:
        return (
            settled.outcome,
            [
                (r.selector().SerializeToString(deterministic=True), r.key)
                for r in settled.requirements
            ],
            [(r.name, r.entry, r.explicit, r.exists_is_ready) for r in settled.resources],
            settled.notes.status,
            settled.notes.connection,
            sorted(settled.notes.held),
            [c.SerializeToString(deterministic=True) for c in settled.notes.conditions],
            [r.SerializeToString(deterministic=True) for r in settled.notes.results],
            repr(settled.error),
        )

    if shape(reused) != shape(composed):
        msg = "a reused pass differs from composing it again (fnplatform.engine.reuse)"
        raise AssertionError(msg)


PASSES = PassMemo(8 * 1024 * 1024)  # sized by function.server.size_memos
