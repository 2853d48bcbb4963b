"""Unit tests of dictlog_client.dictionary_cache.DictionaryCache: the bytes budget, least
recently used eviction, the newest entry kept past the budget, an entry replaced by a
value with another check, load errors, and loads from many threads.

Environment: none; run from a directory where `dictlog_client` is importable (the
Bazel wrapper python_test.sh).
"""

import concurrent.futures
import unittest

from dictlog_client.dictionary_cache import CacheStats, DictionaryCache


class Loader:
    """Loads "value-<id>" (check 1) at a fixed cost and counts the loads per id."""

    def __init__(self, cost):
        self.cost = cost
        self.loads = {}

    def __call__(self, key, value=None, check=1):
        def load():
            self.loads[key] = self.loads.get(key, 0) + 1
            return value or "value-%d" % key, self.cost, check
        return load


class DictionaryCacheTest(unittest.TestCase):

    def test_evicts_the_least_recently_used_past_the_budget(self):
        cache = DictionaryCache(100)
        loader = Loader(40)
        self.assertEqual(cache.get(1, 0, loader(1)), "value-1")
        self.assertEqual(cache.get(2, 0, loader(2)), "value-2")
        self.assertEqual(cache.get(1, 0, loader(1)), "value-1")  # A hit: 2 is now oldest.
        self.assertEqual(cache.get(3, 0, loader(3)), "value-3")  # 120 > 100: evicts 2.
        self.assertEqual(cache.stats(), CacheStats(hits=1, misses=3, evictions=1,
                                                   bytes=80, entries=2))
        cache.get(1, 0, loader(1))
        cache.get(2, 0, loader(2))  # Loaded again; evicts 3 (1 was used after it).
        self.assertEqual(loader.loads, {1: 1, 2: 2, 3: 1})
        cache.get(1, 0, loader(1))
        self.assertEqual(loader.loads[1], 1)

    def test_keeps_the_newest_entry_even_past_the_budget(self):
        cache = DictionaryCache(10)
        loader = Loader(1000)
        cache.get(1, 0, loader(1))
        cache.get(1, 0, loader(1))
        self.assertEqual(cache.stats().entries, 1)
        self.assertEqual(cache.stats().bytes, 1000)
        cache.get(2, 0, loader(2))
        self.assertEqual(cache.stats(), CacheStats(hits=1, misses=2, evictions=1,
                                                   bytes=1000, entries=1))

    def test_a_lookup_with_another_check_loads_and_replaces_the_entry(self):
        cache = DictionaryCache(100)
        loader = Loader(40)
        self.assertEqual(cache.get(5, 0, loader(5, "before", check=111)), "before")
        # Any check (a server before checks), or its own, finds it.
        self.assertEqual(cache.get(5, 0, loader(5, "unused", check=222)), "before")
        self.assertEqual(cache.get(5, 111, loader(5, "unused", check=222)), "before")
        self.assertEqual(loader.loads[5], 1)
        # A restored store gave id 5 to another dictionary: the frame's check differs.
        self.assertEqual(cache.get(5, 222, loader(5, "after", check=222)), "after")
        self.assertEqual(loader.loads[5], 2)
        self.assertEqual(cache.get(5, 222, loader(5, "unused", check=333)), "after")
        self.assertEqual(cache.stats(), CacheStats(hits=3, misses=2, evictions=0,
                                                   bytes=40, entries=1, replaced=1))

    def test_a_failed_load_caches_nothing(self):
        cache = DictionaryCache(100)

        def fail():
            raise KeyError("gone")
        with self.assertRaises(KeyError):
            cache.get(7, 0, fail)
        self.assertEqual(cache.stats().entries, 0)
        self.assertEqual(cache.get(7, 0, Loader(1)(7)), "value-7")

    def test_many_threads_stay_within_the_budget(self):
        cache = DictionaryCache(10 * 50)
        loader = Loader(50)

        def use(n):
            key = n % 40
            return cache.get(key, 0, loader(key)) == "value-%d" % key
        with concurrent.futures.ThreadPoolExecutor(8) as pool:
            self.assertTrue(all(pool.map(use, range(4000))))
        stats = cache.stats()
        self.assertLessEqual(stats.bytes, 500)
        self.assertEqual(stats.bytes, stats.entries * 50)
        self.assertEqual(stats.hits + stats.misses, 4000)


if __name__ == "__main__":
    unittest.main(verbosity=2)
