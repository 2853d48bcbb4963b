"""The Grafana dashboard deploy/grafana/dictlog.json against a real dictlogd and a real
Prometheus.

dictlogd runs on 127.0.0.1 port 0 with --metrics_listen on port 0 and a temp data dir;
the dictlog CLI sends traffic (loghub appends, a MultiGet, a scan, a failing call, a
training, a re-compression). Then:
- every metric the dashboard's PromQL expressions (panel targets and template variable
  queries) name is in dictlogd's /metrics, and every label their matchers and groupings
  name is a label of one of those metrics (or one Prometheus adds: instance, job);
- Prometheus (Debian package prometheus) scrapes dictlogd every second and returns data
  for every expression, with Grafana's variables set to their "All" values, which also
  proves each expression parses;
- the panels operators look at first are there (ingest, reads, latency by method, errors
  by code, ratio and stored bytes per pool, cache hit rate and cold builds,
  re-compression and training, RocksDB compactions).
Metric names are taken from the expressions by prometheus_testing.parse_promql(),
tested on its own here.
"""

import json
import os
import re
import tempfile
import unittest

from deploy.prometheus_testing import (TARGET_LABELS, http_get, parse_promql, query,
                                       run_cli, scrape_labels, start_dictlogd,
                                       start_prometheus)

ROOT = os.path.join(os.environ.get("TEST_SRCDIR", ""), os.environ.get("TEST_WORKSPACE", "dictlog"))
DASHBOARD = os.path.join(ROOT, "deploy/grafana/dictlog.json")
DICTLOGD = os.path.join(ROOT, "server/daemon/dictlogd")
DICTLOG = os.path.join(ROOT, "client/cli/dictlog")
LOGHUB = os.path.join(os.environ.get("TEST_SRCDIR", ""), "loghub")
# Grafana variables as the dashboard's "All" option and a rate window for 1 s scrapes.
VARIABLES = {"__rate_interval": "1m"}
ALL = ".*"


def dashboard_queries(dashboard):
    """(where, PromQL) of every panel target and template variable query; a variable's
    label_values(SELECTOR, LABEL) is given as SELECTOR and LABEL."""
    queries = []

    def walk(node, where):
        if isinstance(node, dict):
            where = node.get("title") or node.get("name") or where
            if isinstance(node.get("expr"), str):
                queries.append((where, node["expr"], None))
            query = node.get("query")
            query = query.get("query") if isinstance(query, dict) else query
            if node.get("type") == "query" and isinstance(query, str):
                m = re.fullmatch(r"\s*label_values\((.*),\s*(\w+)\)\s*", query)
                assert m, f"variable {where}: not label_values(...): {query}"
                queries.append((where, m.group(1), m.group(2)))
            for value in node.values():
                walk(value, where)
        elif isinstance(node, list):
            for value in node:
                walk(value, where)

    walk(dashboard, "dashboard")
    return queries



def with_variables(expr):
    """expr with Grafana's $var / ${var} replaced by test values."""
    return re.sub(r"\$\{?(\w+)\}?", lambda m: VARIABLES.get(m.group(1), ALL), expr)



class ParsePromqlTest(unittest.TestCase):

    def test_names_labels_and_groupings(self):
        selectors, groupings = parse_promql(
            'histogram_quantile(0.99, sum by (le, method) (rate(dictlog_rpc_duration_'
            'seconds_bucket{instance=~"$instance",service=~"a{b}"}[$__rate_interval])))'
            ' / on (method) group_left sum without(code) (dictlg_typo_total offset 5m)'
            ' > bool 2')
        self.assertEqual(selectors, [("dictlog_rpc_duration_seconds_bucket",
                                      {"instance", "service"}), ("dictlg_typo_total", set())])
        self.assertEqual(groupings, {"le", "method", "code"})

    def test_label_values_variables(self):
        queries = dashboard_queries({"templating": {"list": [
            {"type": "query", "name": "pool",
             "query": {"query": 'label_values(dictlog_pool_records{x="1"}, pool)'}}]}})
        self.assertEqual(queries, [("pool", 'dictlog_pool_records{x="1"}', "pool")])


class DashboardTest(unittest.TestCase):

    @classmethod
    def setUpClass(cls):
        with open(DASHBOARD) as f:
            cls.dashboard = json.load(f)
        cls.queries = dashboard_queries(cls.dashboard)
        cls.work = tempfile.mkdtemp(dir=os.environ.get("TEST_TMPDIR"))
        cls.prometheus = None
        cls.dictlogd, cls.server, cls.metrics_target = start_dictlogd(
            DICTLOGD, cls.work, "dictlogd.log")
        cls.send_traffic()
        cls.scrape = http_get(f"http://{cls.metrics_target}/metrics")
        cls.prometheus, cls.prometheus_url = start_prometheus(cls.work, cls.metrics_target)

    @classmethod
    def tearDownClass(cls):
        if cls.prometheus is not None:
            cls.prometheus.stop()
        assert cls.dictlogd.stop() == 0, "dictlogd exited non-zero on SIGTERM"

    @classmethod
    def cli(cls, *args, ok=True):
        return run_cli(DICTLOG, cls.server, *args, ok=ok).stdout

    @classmethod
    def send_traffic(cls):
        ids = []
        for category in ("HDFS", "Apache"):
            ids += cls.cli("append", "--category=" + category,
                           os.path.join(LOGHUB, category + ".log")).split()
        cls.cli("get", *ids[:100])
        cls.cli("get", ids[0], "HDFS/999999999", ok=False)  # A per-id NOT_FOUND.
        cls.cli("scan", "--category=Apache", "--limit=50")
        cls.cli("pool", "show", "NoSuchPool", ok=False)
        cls.cli("dict", "train", "--pool=HDFS", "--activate")
        cls.cli("recompress", "--pool=HDFS")

    def test_dashboard_has_queries(self):
        self.assertGreaterEqual(len(self.queries), 20)

    def test_every_queried_metric_is_exported(self):
        exported = scrape_labels(self.scrape)
        for where, expr, _ in self.queries:
            selectors, _ = parse_promql(expr)
            self.assertTrue(selectors, f"{where}: no metric in {expr}")
            for name, _ in selectors:
                self.assertTrue(name in exported, f"{where}: {name} is not in /metrics")

    def test_every_queried_label_is_exported(self):
        exported = scrape_labels(self.scrape)
        for where, expr, variable_label in self.queries:
            selectors, groupings = parse_promql(expr)
            known = set(TARGET_LABELS)
            for name, labels in selectors:
                known |= exported.get(name, set())
                self.assertLessEqual(labels, exported.get(name, set()) | TARGET_LABELS,
                                     f"{where}: {name} has no label among {labels}")
            wanted = groupings | ({variable_label} if variable_label else set())
            self.assertLessEqual(wanted, known, f"{where}: {expr}")

    def test_prometheus_returns_data_for_every_query(self):
        for where, expr, variable_label in self.queries:
            result = query(self.prometheus_url, with_variables(expr))
            self.assertTrue(result, f"{where}: no data for {with_variables(expr)}")
            if variable_label:
                self.assertTrue(all(variable_label in r["metric"] for r in result), where)

    def test_covers_what_operators_look_at_first(self):
        queried = {name for _, expr, _ in self.queries for name, _ in parse_promql(expr)[0]}
        for name in ("dictlog_appended_records_total", "dictlog_read_records_total",
                     "dictlog_rpc_duration_seconds_bucket", "dictlog_rpcs_total",
                     "dictlog_pool_compression_ratio", "dictlog_pool_stored_bytes",
                     "dictlog_dictionary_cache_hits_total",
                     "dictlog_dictionary_cache_misses_total",
                     "dictlog_dictionary_cache_builds_total",
                     "dictlog_recompress_records_done", "dictlog_recompress_records_planned",
                     "dictlog_auto_trainings_total", "dictlog_rocksdb_num_running_compactions",
                     "dictlog_rocksdb_estimate_pending_compaction_bytes",
                     "dictlog_read_errors_total", "dictlog_pool_damaged_at_open",
                     "dictlog_dictionaries_unreadable_at_open",
                     "dictlog_wal_recovery_drops"):
            self.assertIn(name, queried)
        exprs = [expr for _, expr, _ in self.queries]
        self.assertTrue(any("histogram_quantile" in e and "method" in parse_promql(e)[1]
                            for e in exprs), "no latency percentile by method")
        self.assertTrue(any("code" in parse_promql(e)[1] and 'code!="OK"' in e for e in exprs),
                        "no errors by code")


if __name__ == "__main__":
    unittest.main(verbosity=2)
