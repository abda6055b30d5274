"""One bounded, thread-safe memo: what the per-content caches of a pass share.

Composing runs on worker threads, so each memo (step inputs, observed conditions, spec walks)
takes a lock around its OrderedDict and drops its least recently used entries beyond its
bound. The value is computed outside the lock: two threads may compute the same entry once
each, and both answers are equal, since every key is the exact content it stands for.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Hashable
from typing import Generic, TypeVar

Value = TypeVar("Value")


class BoundedMemo(Generic[Value]):
    """``compute()`` by key, the most recent ``limit`` kept."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._entries: OrderedDict[Hashable, Value] = OrderedDict()
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._entries)

    def get(self, key: Hashable, compute: Callable[[], Value]) -> Value:
        """What ``compute()`` returned for ``key`` before, else ``compute()``, remembered."""
        with self._lock:
            found = self._entries.get(key)
            if found is not None:
                self._entries.move_to_end(key)
                return found
        found = compute()
        with self._lock:
            self._entries[key] = found
            while len(self._entries) > self.limit:
                self._entries.popitem(last=False)
        return found


Key = TypeVar("Key", bound=Hashable)


class SizedMemo(Generic[Key, Value]):
    """The most recently used values within ``limit_bytes``, each counted at the cost its
    caller gives (the one eviction rule of the byte-bounded memos: encoded bodies, decoded
    Structs, settled passes, whole responses). A value costing more than the bound's
    ``1/largest_share`` is never kept: it would evict everything else for one request.
    Thread-safe."""

    def __init__(self, limit_bytes: int, largest_share: int = 4) -> None:
        self.limit_bytes = limit_bytes
        self.largest_share = largest_share
        self.size = 0
        self.evictions = 0
        self._entries: OrderedDict[Key, tuple[Value, int]] = OrderedDict()
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._entries)

    def configure(self, limit_bytes: int) -> None:
        """Set the bound (0 disables remembering) and drop what is remembered."""
        with self._lock:
            self.limit_bytes = limit_bytes
            self._entries.clear()
            self.size = 0

    def _get(self, key: Key) -> Value | None:
        """The value kept for ``key`` (now the most recently used), else None."""
        with self._lock:
            found = self._entries.get(key)
            if found is None:
                return None
            self._entries.move_to_end(key)
            return found[0]

    def _keep(self, key: Key, value: Value, cost: int) -> None:
        """Keep ``value`` for ``key`` (replacing what was), dropping the least recently used
        beyond the bound."""
        if cost > self.limit_bytes // self.largest_share:
            return
        with self._lock:
            previous = self._entries.pop(key, None)
            if previous is not None:
                self.size -= previous[1]
            self._entries[key] = (value, cost)
            self.size += cost
            while self.size > self.limit_bytes:
                _, (_, dropped) = self._entries.popitem(last=False)
                self.size -= dropped
                self.evictions += 1
