"""Unit tests of compare_report (rows, table, CSV, targets). Run by
compare_report_test.sh with /usr/bin/python3."""
import csv
import io
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import compare_report  # noqa: E402


def bench(ops_per_s, records_per_s, p50=100, p99=900, errors=0):
    return {"ops_per_s": ops_per_s, "records_per_s": records_per_s, "errors": errors,
            "latency_us": {"p50": p50, "p99": p99}}


def row(name, server="dictlogd", ratio_stored=1000, get=1000.0, multiget=20000.0,
        dictionary_bytes=0, storage="record", block=0):
    config = {"name": name, "server": server, "storage": storage, "block_bytes": block,
              "dictionary": "+dict" in name}
    stats = {"records": 10, "raw_bytes": 4000, "stored_bytes": ratio_stored,
             "dictionary_bytes": dictionary_bytes, "sst_bytes": 2 * ratio_stored}
    return compare_report.make_row(config, stats, [bench(get, get)],
                                   [bench(get / 5, multiget)], 7)


class MakeRowTest(unittest.TestCase):
    def test_ratio_counts_dictionaries(self):
        r = row("record+dict", ratio_stored=1500, dictionary_bytes=500)
        self.assertEqual(r["ratio"], 2.0)
        self.assertEqual(r["get_ops_s"], 1000.0)
        self.assertEqual(r["multiget_records_s"], 20000.0)
        self.assertEqual(r["verified_records"], 7)

    def test_median_round_and_range(self):
        config = {"name": "record", "server": "dictlogd", "storage": "record",
                  "dictionary": False}
        stats = {"records": 1, "raw_bytes": 10, "stored_bytes": 5}
        gets = [bench(300.0, 300.0, p99=3), bench(100.0, 100.0, p99=1, errors=2),
                bench(200.0, 200.0, p99=2)]
        multigets = [bench(10.0, 640.0), bench(20.0, 1280.0)]
        r = compare_report.make_row(config, stats, gets, multigets, 3)
        self.assertEqual(r["get_ops_s"], 200.0)
        self.assertEqual(r["get_p99_us"], 2)  # the median round's own latency
        self.assertEqual(r["get_errors"], 2)  # every round's errors
        self.assertEqual((r["get_ops_s_min"], r["get_ops_s_max"]), (100.0, 300.0))
        self.assertEqual(r["multiget_records_s"], 640.0)  # lower middle of two
        self.assertEqual(r["rounds"], 3)

    def test_nothing_stored_has_no_ratio(self):
        self.assertEqual(row("null", server="compare_server", ratio_stored=0)["ratio"], 0.0)


class OutputTest(unittest.TestCase):
    def test_markdown_table(self):
        table = compare_report.markdown_table(
            [row("record+dict", dictionary_bytes=24),
             row("null", server="compare_server", ratio_stored=0)])
        lines = table.splitlines()
        self.assertTrue(lines[0].startswith(
            "| config | stored bytes | ratio | SST bytes | SST ratio | Get ops/s"))
        self.assertEqual(len(lines), 4)
        self.assertIn("| record+dict | 1,024 | 3.906 | 2,000 | 2.000 | 1,000 | 900 | 20,000 |",
                      lines[2])
        self.assertIn("| 20.0x | 0 |", lines[2])
        self.assertTrue(lines[3].startswith("| null | - | - | - | - | 1,000 |"))
        for line in lines:
            self.assertEqual(line.count("|"), len(compare_report.TABLE_COLUMNS) + 1)

    def test_csv_round_trips(self):
        rows = [row("record"), row("block16k", storage="block", block=16384)]
        parsed = list(csv.DictReader(io.StringIO(compare_report.to_csv(rows))))
        self.assertEqual(list(parsed[0].keys()), compare_report.COLUMNS)
        self.assertEqual(parsed[1]["block_bytes"], "16384")
        self.assertEqual(float(parsed[0]["ratio"]), 4.0)


class TargetsTest(unittest.TestCase):
    def targets(self, rows):
        return {t["target"]: t for t in compare_report.targets(rows)}

    def test_pass_and_fail(self):
        t = self.targets([row("record+dict", get=900.0, multiget=8000.0),
                          row("block16k", get=200.0, multiget=4000.0),
                          row("null", server="compare_server", ratio_stored=0, get=1000.0)])
        self.assertEqual(t["multiget_records_vs_get"]["measured"], 8.889)
        self.assertFalse(t["multiget_records_vs_get"]["pass"])
        self.assertEqual(t["get_vs_null"]["measured"], 0.9)
        self.assertTrue(t["get_vs_null"]["pass"])
        self.assertEqual(t["record_vs_block16k_get"]["measured"], 4.5)
        self.assertTrue(t["record_vs_block16k_get"]["pass"])
        self.assertEqual(t["record_vs_block16k_multiget"]["measured"], 2.0)
        self.assertFalse(t["record_vs_block16k_multiget"]["pass"])
        self.assertIn("multiget_records_vs_get:block16k", t)

    def test_missing_configurations_are_not_run(self):
        t = self.targets([row("record")])
        self.assertIsNone(t["get_vs_null"]["measured"])
        self.assertIsNone(t["get_vs_null"]["pass"])
        markdown = compare_report.targets_markdown(compare_report.targets([row("record")]))
        self.assertIn("| not run | >= 0.85 | - |", markdown)

    def test_versus_rocksdb(self):
        rows = [row("record+dict", ratio_stored=2000, get=1200.0),
                row("rocksdb_dict", server="compare_server", ratio_stored=1000, get=1000.0),
                row("null", server="compare_server", ratio_stored=0)]
        versus = compare_report.versus_rocksdb(rows)
        self.assertEqual(len(versus), 1)
        self.assertEqual(versus[0]["ratio_factor"], 0.5)
        self.assertEqual(versus[0]["sst_ratio_factor"], 0.5)
        self.assertEqual(versus[0]["get_factor"], 1.2)
        self.assertEqual(compare_report.versus_rocksdb([row("record")]), [])

    def test_lookup_bounds(self):
        rows = [row("record+dict", get=900.0, multiget=30000.0),
                row("rocksdb_dict", server="compare_server", get=800.0, multiget=15000.0),
                row("record+dict_plain", get=950.0, multiget=32000.0),
                row("rocksdb_plain", server="compare_server", get=1000.0, multiget=40000.0),
                row("null", server="compare_server", ratio_stored=0, get=2000.0,
                    multiget=100000.0)]
        bounds = {b["bound"]: b["factor"] for b in compare_report.lookup_bounds(rows)}
        self.assertEqual(bounds["get_ops_s:record+dict_vs_rocksdb_plain"], 0.9)
        self.assertEqual(bounds["get_ops_s:null_vs_rocksdb_plain"], 2.0)
        self.assertEqual(bounds["multiget_records_s:record+dict_vs_rocksdb_plain"], 0.75)
        self.assertEqual(bounds["multiget_records_s:rocksdb_dict_vs_rocksdb_plain"], 0.375)
        self.assertEqual(bounds["multiget_records_s:record+dict_plain_vs_rocksdb_plain"], 0.8)
        self.assertNotIn("get_ops_s:block2k+dict_vs_rocksdb_plain", bounds)  # Not run.
        self.assertIn("| Get ops/s: record+dict / rocksdb_plain | 0.900 |",
                      compare_report.bounds_markdown(compare_report.lookup_bounds(rows)))
        self.assertEqual(compare_report.lookup_bounds(rows[:2]), [])
        self.assertEqual(compare_report.bounds_markdown([]), "")


def paired_spec(target):
    """The PAIRED_READS or PAIRED_BOUNDS entry named `target`."""
    return next(spec for spec in compare_report.PAIRED_READS + compare_report.PAIRED_BOUNDS
                if spec[0] == target)


class PairedTest(unittest.TestCase):
    def test_median_of_the_pairs_ratios(self):
        # Slices of A and B taken seconds apart: the host's speed moves both.
        e = compare_report.paired_entry(
            paired_spec("multiget_block2k_dict_vs_rocksdb_dict"),
            [140000.0, 90000.0, 120000.0, 160000.0], [100000.0, 60000.0, 75000.0, 100000.0])
        self.assertEqual(e["ratios"], [1.4, 1.5, 1.6, 1.6])
        self.assertEqual((e["median"], e["low"], e["high"]), (1.5, 1.4, 1.6))
        self.assertEqual(e["needed"], compare_report.BLOCK2K_MULTIGET_VS_ROCKSDB)
        self.assertTrue(e["pass"])
        fail = compare_report.paired_entry(paired_spec("get_vs_null"), [800.0, 900.0],
                                           [1000.0, 1000.0])
        self.assertEqual((fail["median"], fail["pass"]), (0.8, False))  # lower middle

    def test_value_by_op(self):
        self.assertEqual(compare_report.paired_value("multiget", bench(100.0, 6400.0)), 6400.0)
        self.assertEqual(compare_report.paired_value("get", bench(100.0, 6400.0)), 100.0)

    def test_markdown(self):
        e = compare_report.paired_entry(paired_spec("multiget_record_dict_vs_rocksdb_dict"),
                                        [180000.0, 150000.0], [100000.0, 100000.0])
        md = compare_report.paired_markdown([e], "3s")
        self.assertIn("| paired reads (3s slices, alternating) | pairs |", md)
        self.assertIn("| MultiGet(64) records/s record+dict / rocksdb_dict | 2 | 1.50 | "
                      "1.50-1.80 | >= 2 | FAIL |", md)
        none = compare_report.paired_entry(paired_spec("get_vs_null"), [], [])
        self.assertIsNone(none["pass"])
        self.assertIn("| Get ops/s record+dict / null | 0 | - | - | >= 0.85 | - |",
                      compare_report.paired_markdown([none]))
        self.assertEqual(compare_report.paired_markdown([]), "")

    def test_bounds_have_no_verdict(self):
        # RocksDB's lookup alone against rocksdb_dict: what bounds the MultiGet targets.
        e = compare_report.paired_entry(
            paired_spec("bound_multiget_rocksdb_plain_vs_rocksdb_dict"),
            [190000.0, 210000.0, 150000.0], [100000.0, 100000.0, 100000.0])
        self.assertEqual((e["median"], e["low"], e["high"]), (1.9, 1.5, 2.1))
        self.assertIsNone(e["needed"])
        self.assertIsNone(e["pass"])
        self.assertIn("| MultiGet(64) records/s rocksdb_plain / rocksdb_dict | 3 | 1.90 | "
                      "1.50-2.10 | - | bound |", compare_report.paired_markdown([e]))
        # Every bound pairs configurations compare knows, and no name is a target's.
        targets = {t for t, _, _, _, _ in compare_report.PAIRED_READS}
        for target, a, b, op, needed in compare_report.PAIRED_BOUNDS:
            self.assertNotIn(target, targets)
            self.assertIsNone(needed)
            self.assertIn(op, ("get", "multiget"))
            self.assertIn("rocksdb_plain", (a, b))


def scale_row(name, server="dictlogd", sst=2000, multiget=20000.0, load_s=8.0,
              finalize_s=2.0, rss=100 << 20):
    config = {"name": name, "server": server, "storage": "block", "block_bytes": 4096,
              "dictionary": True}
    stats = {"records": 10, "raw_bytes": 4000, "stored_bytes": 1000, "sst_bytes": sst}
    scale = {"zipf_get": [bench(3000.0, 3000.0)], "zipf_multiget": [bench(100.0, 6400.0)],
             "nocache_get": [bench(50.0, 50.0)], "nocache_multiget": [],
             "load_s": load_s, "finalize_s": finalize_s, "peak_rss_bytes": rss}
    return compare_report.make_row(config, stats, [bench(1000.0, 1000.0)],
                                   [bench(300.0, multiget)], 7, scale)


class ScaleTest(unittest.TestCase):
    def targets(self, rows, budget=None):
        return {t["target"]: t for t in compare_report.targets(rows, budget)}

    def test_scale_fields(self):
        r = scale_row("block4k+dict")
        self.assertEqual((r["load_s"], r["finalize_s"], r["ingest_s"]), (8.0, 2.0, 10.0))
        self.assertEqual(r["ingest_records_s"], 1.0)  # 10 records in 10 s
        self.assertEqual((r["zipf_get_ops_s"], r["zipf_multiget_records_s"]), (3000.0, 6400.0))
        self.assertEqual((r["nocache_get_ops_s"], r["nocache_multiget_records_s"]), (50.0, ""))
        self.assertEqual(r["peak_rss_bytes"], 100 << 20)
        plain = row("record")
        self.assertEqual((plain["ingest_s"], plain["zipf_get_ops_s"]), ("", ""))
        self.assertEqual(compare_report.scale_table([plain]), "")
        lines = compare_report.scale_table([r, plain]).splitlines()
        self.assertIn("| 50 | - | 1 | 10.0 | 100 |", lines[2])
        self.assertTrue(lines[3].endswith("| - | - | - | - | - | - |"), lines[3])
        self.assertEqual(list(csv.DictReader(io.StringIO(
            compare_report.to_csv([r]))))[0]["ingest_s"], "10.0")

    def test_scale_targets(self):
        t = self.targets([
            scale_row("record+dict", multiget=40000.0, load_s=5.0, rss=700 << 20),
            scale_row("block2k+dict", multiget=29000.0),
            scale_row("block4k+dict", sst=3000, load_s=18.0),
            scale_row("block16k+dict", sst=2500),
            scale_row("rocksdb_dict", server="compare_server", sst=4000, multiget=20000.0,
                      rss=900 << 20),
            scale_row("rocksdb_dict16k", server="compare_server", sst=3000)], budget=200 << 20)
        # SST ratio = raw / SST bytes: 4000/3000 vs 4000/4000.
        self.assertEqual(t["sst_block4k_dict_vs_rocksdb_dict"]["measured"], 1.333)
        self.assertFalse(t["sst_block4k_dict_vs_rocksdb_dict"]["pass"])
        self.assertEqual(t["sst_block16k_dict_vs_rocksdb_dict16k"]["measured"], 1.2)
        self.assertTrue(t["sst_block16k_dict_vs_rocksdb_dict16k"]["pass"])
        self.assertEqual(t["multiget_block2k_dict_vs_rocksdb_dict"]["measured"], 1.45)
        self.assertFalse(t["multiget_block2k_dict_vs_rocksdb_dict"]["pass"])
        self.assertEqual(t["multiget_record_dict_vs_rocksdb_dict"]["measured"], 2.0)
        self.assertTrue(t["multiget_record_dict_vs_rocksdb_dict"]["pass"])
        self.assertEqual(t["ingest_record_dict_vs_rocksdb_dict"]["measured"], 1.4)  # 10 records in 7 s vs 10 s
        self.assertTrue(t["ingest_record_dict_vs_rocksdb_dict"]["pass"])
        self.assertEqual(t["ingest_block4k_dict_vs_rocksdb_dict"]["measured"], 0.5)
        self.assertFalse(t["ingest_block4k_dict_vs_rocksdb_dict"]["pass"])
        # Budget 200 MiB + 256 MiB slack: 456/700 fails, 456/100 passes; RocksDB not held.
        self.assertEqual(t["peak_rss:record+dict"]["measured"], 0.651)
        self.assertFalse(t["peak_rss:record+dict"]["pass"])
        self.assertTrue(t["peak_rss:block2k+dict"]["pass"])
        self.assertNotIn("peak_rss:rocksdb_dict", t)

    def test_ingest_before_targets(self):
        # compare.py --dictlogd_before: CONFIG@before rows get ingest targets of their own.
        t = self.targets([
            scale_row("block4k+dict@before", load_s=18.0),
            scale_row("block4k+dict", load_s=8.0),
            scale_row("rocksdb_dict", server="compare_server")])
        self.assertEqual(t["ingest_block4k+dict_before_vs_rocksdb_dict"]["measured"], 0.5)
        self.assertEqual(t["ingest_block4k_dict_vs_rocksdb_dict"]["measured"], 1.0)
        self.assertNotIn("ingest_record+dict_before_vs_rocksdb_dict", t)

    def test_scale_targets_not_run(self):
        t = self.targets([row("record+dict")])
        for name in ("sst_block4k_dict_vs_rocksdb_dict", "ingest_record_dict_vs_rocksdb_dict",
                     "peak_rss:record+dict"):
            self.assertIsNone(t[name]["pass"], name)


if __name__ == "__main__":
    unittest.main()
