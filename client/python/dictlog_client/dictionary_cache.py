"""DictionaryCache: decoded zstd dictionaries by id within a memory budget, least
recently used evicted first (the Python twin of the C++ client's DdictCache).

A dictionary id names the same bytes for the life of a server (ids are never reused),
so an entry never goes stale; one that gc deleted is never asked for again and ages
out. Each entry costs what its loader says (Client: the dictionary's bytes plus the
decoding tables zstd builds from them).

Thread safety: get() may be called from any number of threads; one lock guards the
entries, and loading runs outside it (two threads missing the same id may both load
it; one result is kept).
"""

from __future__ import annotations

import collections
import dataclasses
import threading
from typing import Callable, Generic, Tuple, TypeVar

_Value = TypeVar("_Value")


@dataclasses.dataclass(frozen=True)
class CacheStats:
    hits: int
    misses: int
    evictions: int
    bytes: int
    entries: int


class DictionaryCache(Generic[_Value]):
    """Holds at most budget_bytes of entries, but always the one most recently added."""

    def __init__(self, budget_bytes: int) -> None:
        self._budget = max(0, budget_bytes)
        self._lock = threading.Lock()
        # id -> (value, cost); most recently used last.
        self._entries: "collections.OrderedDict[int, Tuple[_Value, int]]" = (
            collections.OrderedDict())
        self._bytes = 0
        self._hits = self._misses = self._evictions = 0

    def get(self, key: int, load: Callable[[], Tuple[_Value, int]]) -> _Value:
        """The cached value of key (now the most recently used), or load()'s value
        (value, cost in bytes), cached. load's errors propagate; nothing is cached then."""
        with self._lock:
            entry = self._entries.get(key)
            if entry is not None:
                self._entries.move_to_end(key)
                self._hits += 1
                return entry[0]
            self._misses += 1
        value, cost = load()
        with self._lock:
            entry = self._entries.get(key)
            if entry is not None:  # Another thread loaded it meanwhile.
                self._entries.move_to_end(key)
                return entry[0]
            self._entries[key] = (value, cost)
            self._bytes += cost
            while self._bytes > self._budget and len(self._entries) > 1:
                _, (_, evicted_cost) = self._entries.popitem(last=False)
                self._bytes -= evicted_cost
                self._evictions += 1
        return value

    def stats(self) -> CacheStats:
        with self._lock:
            return CacheStats(self._hits, self._misses, self._evictions, self._bytes,
                              len(self._entries))
