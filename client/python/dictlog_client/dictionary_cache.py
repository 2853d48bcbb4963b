"""DictionaryCache: decoded zstd dictionaries by id within a memory budget, least
recently used evicted first (the Python twin of the C++ client's DdictCache).

A dictionary id names the same bytes for the life of a store (ids are never reused),
so an entry rarely goes stale; one that gc deleted is never asked for again and ages
out. The exception is a store restored from a backup, which gives again the ids the
live store gave after it: so each entry keeps its content check (the CRC-32 frames
carry beside the id), a lookup with another check misses, and the value loaded then
replaces the entry. Each entry costs what its loader says (Client: the dictionary's
bytes plus the decoding tables zstd builds from them).

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
    #: Entries replaced because a lookup named their id with another check.
    replaced: int = 0


class DictionaryCache(Generic[_Value]):
    """Holds at most budget_bytes of entries, but always the one most recently added."""

    def __init__(self, budget_bytes: int) -> None:
        self._budget = max(0, budget_bytes)
        self._lock = threading.Lock()
        # id -> (value, cost, check); most recently used last.
        self._entries: "collections.OrderedDict[int, Tuple[_Value, int, int]]" = (
            collections.OrderedDict())
        self._bytes = 0
        self._hits = self._misses = self._evictions = self._replaced = 0

    def get(self, key: int, check: int,
            load: Callable[[], Tuple[_Value, int, int]]) -> _Value:
        """The cached value of key (now the most recently used) if its check is check
        (0: any), or load()'s value (value, cost in bytes, check), cached in place of
        an entry of key with another check. load's errors propagate; nothing is cached
        then."""
        with self._lock:
            entry = self._entries.get(key)
            if entry is not None and check in (0, entry[2]):
                self._entries.move_to_end(key)
                self._hits += 1
                return entry[0]
            self._misses += 1
        value, cost, loaded_check = load()
        with self._lock:
            entry = self._entries.pop(key, None)
            if entry is not None and entry[2] == loaded_check:
                self._entries[key] = entry  # Another thread loaded it meanwhile.
                return entry[0]
            if entry is not None:  # Another dictionary under the same id.
                self._bytes -= entry[1]
                self._replaced += 1
            self._entries[key] = (value, cost, loaded_check)
            self._bytes += cost
            while self._bytes > self._budget and len(self._entries) > 1:
                _, (_, evicted_cost, _) = self._entries.popitem(last=False)
                self._bytes -= evicted_cost
                self._evictions += 1
        return value

    def stats(self) -> CacheStats:
        with self._lock:
            return CacheStats(self._hits, self._misses, self._evictions, self._bytes,
                              len(self._entries), self._replaced)
