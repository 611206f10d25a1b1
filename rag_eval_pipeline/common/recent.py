"""A bounded, thread-safe map of what was used most recently: the one shape of the caches a
process keeps (values read from files, opened indexes, ranked queries)."""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Hashable
from typing import Generic, TypeVar

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


class KeptRecent(Generic[K, V]):
    """At most ``kept`` values, and at most ``kept_size`` of their sizes together; the least
    recently used go first. A value larger than ``kept_size`` alone is not kept."""

    def __init__(self, kept: int, kept_size: int | None = None) -> None:
        self._kept, self._kept_size = kept, kept_size
        self._values: OrderedDict[K, tuple[V, int]] = OrderedDict()
        self._size = 0
        self._lock = threading.Lock()

    def get(self, key: K) -> V | None:
        with self._lock:
            found = self._values.get(key)
            if found is None:
                return None
            self._values.move_to_end(key)
            return found[0]

    def put(self, key: K, value: V, size: int = 0) -> None:
        if self._kept_size is not None and size > self._kept_size:
            return
        with self._lock:
            if key in self._values:
                self._size -= self._values.pop(key)[1]
            self._values[key] = (value, size)
            self._size += size
            while len(self._values) > self._kept or (
                self._kept_size is not None and self._size > self._kept_size
            ):
                self._size -= self._values.popitem(last=False)[1][1]

    def __len__(self) -> int:
        return len(self._values)
