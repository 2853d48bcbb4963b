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
import tempfile
import unittest

from deploy.prometheus_testing import (assert_every_rule_evaluates, assert_promtool_passes,
                                       assert_rules_exported, firing, http_get, run_cli,
                                       start_dictlogd, start_prometheus, wait_for)

ROOT = os.path.join(os.environ.get("TEST_SRCDIR", ""), os.environ.get("TEST_WORKSPACE", "dictlog"))
RULES_DIR = os.path.join(ROOT, "deploy/prometheus")
RULES = os.path.join(RULES_DIR, "dictlog-alerts.yml")
DICTLOGD = os.path.join(ROOT, "server/daemon/dictlogd")
DICTLOG = os.path.join(ROOT, "client/cli/dictlog")
LOGHUB = os.path.join(os.environ.get("TEST_SRCDIR", ""), "loghub")


class PromtoolTest(unittest.TestCase):

    def test_rules_check_and_their_unit_tests_pass(self):
        assert_promtool_passes(self, RULES, os.path.join(RULES_DIR, "dictlog-alerts_test.yml"))


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
        assert_rules_exported(self, RULES, self.scrape)

    def test_prometheus_fires_data_loss_and_evaluates_every_rule(self):
        alerts = wait_for("DictlogDataLossReturned to fire",
                          lambda: firing(self.prometheus_url, "DictlogDataLossReturned"))
        self.assertEqual(alerts[0]["labels"]["method"], "MultiGet")
        self.assertEqual(alerts[0]["labels"]["severity"], "critical")
        self.assertEqual(alerts[0]["labels"]["instance"], self.metrics_target)
        names = assert_every_rule_evaluates(self, self.prometheus_url, RULES)
        # Nothing else is wrong with this server: only the damage's alerts fire.
        self.assertLessEqual(names, {"DictlogDataLossReturned", "DictlogPoolDamagedAtOpen"})

if __name__ == "__main__":
    unittest.main(verbosity=2)
