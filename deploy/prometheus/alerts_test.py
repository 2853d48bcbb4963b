"""The alerting rules deploy/prometheus/dictlog-alerts.yml, checked three ways:
- promtool (Debian package prometheus): `check rules`, and `test rules` on
  dictlog-alerts_test.yml, whose synthetic series make each alert fire and stay quiet;
- against a real dictlogd (127.0.0.1, port 0): every metric and label the rules name
  is in its /metrics (but `up`, which Prometheus makes);
- end to end: a store with a damaged table file. dictlogd (started again on it) answers
  a MultiGet's ids with DATA_LOSS, and a real Prometheus loaded with the rules and
  scraping it every second fires DictlogDataLossReturned; every rule evaluates
  without error.
"""

import os
import subprocess
import tempfile
import unittest

from deploy.prometheus_testing import (TARGET_LABELS, api, http_get, parse_promql, run_cli,
                                       scrape_labels, start_dictlogd, start_prometheus,
                                       wait_for)

ROOT = os.path.join(os.environ.get("TEST_SRCDIR", ""), os.environ.get("TEST_WORKSPACE", "dictlog"))
RULES_DIR = os.path.join(ROOT, "deploy/prometheus")
RULES = os.path.join(RULES_DIR, "dictlog-alerts.yml")
DICTLOGD = os.path.join(ROOT, "server/daemon/dictlogd")
DICTLOG = os.path.join(ROOT, "client/cli/dictlog")
LOGHUB = os.path.join(os.environ.get("TEST_SRCDIR", ""), "loghub")
# Metrics Prometheus makes itself.
PROMETHEUS_METRICS = {"up"}


def rule_exprs():
    """(alert name, PromQL) of every rule. The file is YAML, read here without a YAML
    library: each `alert:` is followed by its `expr:`, the expression on that line or
    in the indented block after `expr: |` (promtool checks the YAML itself)."""
    with open(RULES) as f:
        lines = f.read().splitlines()
    rules, alert, i = [], None, 0
    while i < len(lines):
        stripped = lines[i].strip()
        if stripped.startswith("- alert:"):
            alert = stripped.split(":", 1)[1].strip()
        elif stripped.startswith("expr:"):
            expr = stripped.split(":", 1)[1].strip()
            if expr == "|":
                indent = len(lines[i]) - len(lines[i].lstrip()) + 2
                block = []
                while i + 1 < len(lines) and (not lines[i + 1].strip() or
                                              lines[i + 1].startswith(" " * indent)):
                    i += 1
                    block.append(lines[i].strip())
                expr = " ".join(block)
            rules.append((alert, expr))
        i += 1
    return rules


def promtool(*args):
    return subprocess.run(["promtool", *args], cwd=RULES_DIR, capture_output=True, text=True)


class PromtoolTest(unittest.TestCase):

    def test_rules_are_valid(self):
        result = promtool("check", "rules", "dictlog-alerts.yml")
        self.assertEqual(result.returncode, 0, result.stdout + result.stderr)
        self.assertIn(f"SUCCESS: {len(rule_exprs())} rules found", result.stdout)

    def test_unit_tests_pass(self):
        result = promtool("test", "rules", "dictlog-alerts_test.yml")
        self.assertEqual(result.returncode, 0, result.stdout + result.stderr)


class AlertsAgainstDictlogdTest(unittest.TestCase):

    @classmethod
    def setUpClass(cls):
        cls.work = tempfile.mkdtemp(dir=os.environ.get("TEST_TMPDIR"))
        cls.prometheus = None
        cls.dictlogd = None
        cls.ids = cls.fill_and_damage_store()
        cls.dictlogd = cls.start_dictlogd("dictlogd.log")
        result = cls.cli("get", *cls.ids, ok=False)
        cls.get_errors = result.stderr
        cls.scrape = http_get(f"http://{cls.metrics_target}/metrics")
        cls.prometheus, cls.prometheus_url = start_prometheus(
            cls.work, cls.metrics_target, rule_files=[RULES])

    @classmethod
    def tearDownClass(cls):
        if cls.prometheus is not None:
            cls.prometheus.stop()
        if cls.dictlogd is not None:
            assert cls.dictlogd.stop() == 0, "dictlogd exited non-zero on SIGTERM"

    @classmethod
    def start_dictlogd(cls, log):
        process, cls.server, cls.metrics_target = start_dictlogd(DICTLOGD, cls.work, log)
        return process

    @classmethod
    def cli(cls, *args, ok=True):
        return run_cli(DICTLOG, cls.server, *args, ok=ok)

    @classmethod
    def fill_and_damage_store(cls):
        """Appends HDFS's lines, flushes them to table files and stops dictlogd; then
        flips a byte a third of the way into the largest table file (its data blocks:
        the index and filter are at its end). Returns the ids."""
        process = cls.start_dictlogd("dictlogd-fill.log")
        try:
            ids = cls.cli("append", "--category=HDFS",
                          os.path.join(LOGHUB, "HDFS.log")).stdout.split()
            cls.cli("flush")
        finally:
            assert process.stop() == 0, process.log_text()
        data = os.path.join(cls.work, "data")
        tables = [os.path.join(data, f) for f in os.listdir(data) if f.endswith(".sst")]
        largest = max(tables, key=os.path.getsize)
        with open(largest, "r+b") as f:
            f.seek(os.path.getsize(largest) // 3)
            byte = f.read(1)
            f.seek(-1, os.SEEK_CUR)
            f.write(bytes([byte[0] ^ 0x5A]))
        return ids

    def test_the_damage_reads_as_data_loss(self):
        self.assertIn("DATA_LOSS", self.get_errors)
        self.assertIn('dictlog_read_errors_total{service="dictlog.v1.LogStore",'
                      'method="MultiGet",code="DATA_LOSS"}', self.scrape)

    def test_every_metric_and_label_of_the_rules_is_exported(self):
        exported = scrape_labels(self.scrape)
        for alert, expr in rule_exprs():
            selectors, groupings = parse_promql(expr)
            self.assertTrue(selectors, f"{alert}: no metric in {expr}")
            known = set(TARGET_LABELS)
            for name, labels in selectors:
                if name in PROMETHEUS_METRICS:
                    continue
                self.assertIn(name, exported, f"{alert}: {name} is not in /metrics")
                known |= exported[name]
                self.assertLessEqual(labels, exported[name] | TARGET_LABELS,
                                     f"{alert}: {name} lacks one of {labels}")
            self.assertLessEqual(groupings, known, f"{alert}: {expr}")

    def test_prometheus_fires_data_loss_and_evaluates_every_rule(self):
        def firing():
            alerts = api(self.prometheus_url, "/api/v1/alerts")["alerts"]
            return [a for a in alerts if a["labels"]["alertname"] == "DictlogDataLossReturned"
                    and a["state"] == "firing"]

        alerts = wait_for("DictlogDataLossReturned to fire", firing)
        self.assertEqual(alerts[0]["labels"]["method"], "MultiGet")
        self.assertEqual(alerts[0]["labels"]["severity"], "critical")
        self.assertEqual(alerts[0]["labels"]["instance"], self.metrics_target)

        def evaluated():
            rules = [r for g in api(self.prometheus_url, "/api/v1/rules")["groups"]
                     for r in g["rules"]]
            done = all(not r.get("lastEvaluation", "").startswith("0001") for r in rules)
            return done and rules

        rules = wait_for("every rule evaluated", evaluated)
        self.assertEqual(sorted(r["name"] for r in rules),
                         sorted(alert for alert, _ in rule_exprs()))
        for rule in rules:
            self.assertEqual(rule["health"], "ok", rule)
        # Nothing else is wrong with this server: only the damage's alerts fire.
        names = {a["labels"]["alertname"] for a in
                 api(self.prometheus_url, "/api/v1/alerts")["alerts"]}
        self.assertLessEqual(names, {"DictlogDataLossReturned", "DictlogPoolDamagedAtOpen"})


if __name__ == "__main__":
    unittest.main(verbosity=2)
