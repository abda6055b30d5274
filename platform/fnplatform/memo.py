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
