"""A small thread-safe LRU cache with per-entry time-to-live.

Used by the build tool to remember file hashes between runs without
re-reading files whose mtime has not changed.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from dataclasses import dataclass
from typing import Generic, Hashable, Optional, TypeVar

K = TypeVar("K", bound=Hashable)
V = TypeVar("V")


@dataclass
class _Entry(Generic[V]):
    value: V
    expires_at: float


class LRUCache(Generic[K, V]):
    """Least-recently-used cache; entries older than `ttl` seconds are stale."""

    def __init__(self, capacity: int = 128, ttl: float = 300.0) -> None:
        if capacity <= 0:
            raise ValueError(f"capacity must be positive, got {capacity}")
        self._capacity = capacity
        self._ttl = ttl
        self._data: OrderedDict[K, _Entry[V]] = OrderedDict()
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0

    def get(self, key: K) -> Optional[V]:
        with self._lock:
            entry = self._data.get(key)
            if entry is None or entry.expires_at < time.monotonic():
                if entry is not None:
                    del self._data[key]
                self.misses += 1
                return None
            self._data.move_to_end(key)
            self.hits += 1
            return entry.value

    def put(self, key: K, value: V) -> None:
        with self._lock:
            if key in self._data:
                self._data.move_to_end(key)
            self._data[key] = _Entry(value, time.monotonic() + self._ttl)
            while len(self._data) > self._capacity:
                self._data.popitem(last=False)

    def __len__(self) -> int:
        with self._lock:
            return len(self._data)

    def hit_rate(self) -> float:
        total = self.hits + self.misses
        return self.hits / total if total else 0.0


def fibonacci(n: int) -> int:
    """Returns the n-th Fibonacci number (0, 1, 1, 2, 3, 5, ...)."""
    a, b = 0, 1
    for _ in range(n):
        a, b = b, a + b
    return a


if __name__ == "__main__":
    cache: LRUCache[str, int] = LRUCache(capacity=2, ttl=1.5)
    cache.put("a", 1)
    cache.put("b", 2)
    cache.get("a")
    cache.put("c", 3)  # evicts "b", the least recently used
    print(len(cache), cache.get("b"), f"hit rate {cache.hit_rate():.0%}")
