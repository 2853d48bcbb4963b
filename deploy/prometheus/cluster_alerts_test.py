"""The cluster-mode alerting rules deploy/prometheus/dictlog-cluster-alerts.yml, checked
three ways:
- promtool (Debian package prometheus): `check rules`, and `test rules` on
  dictlog-cluster-alerts_test.yml, whose synthetic series make each alert fire and stay
  quiet;
- against a real cluster-mode dictlogd (127.0.0.1, port 0) on a real Kafka broker (one
  KRaft broker from deploy/local-cluster/cluster.sh): every metric and label the rules
  name is in its /metrics;
- end to end: a message dictlogd can never apply, produced into dictlog.records by
  tools/kafka_check, is skipped and counted, and a real Prometheus loaded with the
  rules and scraping dictlogd every second fires DictlogClusterSkippedMessages; every
  rule evaluates without error and no other fires.
"""

import os
import re
import socket
import subprocess
import tempfile
import unittest

from deploy.prometheus_testing import (assert_every_rule_evaluates, assert_promtool_passes,
                                       assert_rules_exported, firing, http_get, start_dictlogd,
                                       start_prometheus, wait_for)

ROOT = os.path.join(os.environ.get("TEST_SRCDIR", ""), os.environ.get("TEST_WORKSPACE", "dictlog"))
RULES_DIR = os.path.join(ROOT, "deploy/prometheus")
RULES = os.path.join(RULES_DIR, "dictlog-cluster-alerts.yml")
DICTLOGD = os.path.join(ROOT, "server/daemon/dictlogd")
CLUSTER_SH = os.path.join(ROOT, "deploy/local-cluster/cluster.sh")
KAFKA_LIB = os.path.join(ROOT, "deploy/local-cluster/kafka/lib")
KAFKA_CHECK = os.path.join(ROOT, "tools/kafka_check/kafka_check")
PARTITIONS = 2


def cluster_sh(*args):
    """deploy/local-cluster/cluster.sh with the test's jars and a small C1-only JVM."""
    env = dict(os.environ, KAFKA_LIB=KAFKA_LIB,
               KAFKA_JVM_OPTS="-Xmx384m -Xms64m -XX:+UseSerialGC -XX:TieredStopAtLevel=1")
    return subprocess.run([CLUSTER_SH, *args], env=env, capture_output=True, text=True,
                          timeout=300)


def free_port():
    """A loopback port nothing listens on now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class PromtoolTest(unittest.TestCase):

    def test_rules_check_and_their_unit_tests_pass(self):
        assert_promtool_passes(self, RULES,
                               os.path.join(RULES_DIR, "dictlog-cluster-alerts_test.yml"))


class ClusterAlertsAgainstDictlogdTest(unittest.TestCase):

    @classmethod
    def setUpClass(cls):
        assert os.path.isdir(KAFKA_LIB), "no Kafka jars: run `make kafka` (make test does)"
        cls.work = tempfile.mkdtemp(dir=os.environ.get("TEST_TMPDIR"))
        cls.kafka_dir = os.path.join(cls.work, "kafka")
        cls.dictlogd = None
        cls.prometheus = None
        try:
            cls.start()
        except BaseException:
            cls.tearDownClass()
            raise

    @classmethod
    def start(cls):
        up = cluster_sh("up", "--dir=" + cls.kafka_dir, "--brokers=1", "--timeout=240")
        assert up.returncode == 0, up.stdout + up.stderr
        bootstrap = re.search(r"^kafka-1 (127\.0\.0\.1:\d+)$", up.stdout, re.M).group(1)
        cls.bootstrap = bootstrap
        # A cluster node announces the address peers reach it at: a fixed port, the
        # last --listen winning over start_dictlogd's port 0.
        address = f"127.0.0.1:{free_port()}"
        cls.dictlogd, cls.server, cls.metrics_target = start_dictlogd(
            DICTLOGD, cls.work, "dictlogd.log",
            ["--listen=" + address, "--advertise_address=" + address,
             "--kafka_bootstrap=" + bootstrap, "--node_name=alerts-1",
             "--kafka_replication_factor=1", f"--kafka_partitions={PARTITIONS}"])
        metrics_url = f"http://{cls.metrics_target}/metrics"
        wait_for("every partition serving", lambda: all(
            f'dictlog_cluster_partition_serving{{partition="{p}"}} 1' in http_get(metrics_url)
            for p in range(PARTITIONS)))
        produced = subprocess.run(
            [KAFKA_CHECK, "--bootstrap=" + bootstrap, "--topic=dictlog.records", "--count=1",
             "--timeout_ms=60000", "produce"], capture_output=True, text=True, timeout=120)
        assert produced.returncode == 0, produced.stdout + produced.stderr
        wait_for("the message skipped", lambda: "\ndictlog_cluster_skipped_messages_total 1\n"
                 in http_get(metrics_url))
        cls.scrape = http_get(metrics_url)
        cls.prometheus, cls.prometheus_url = start_prometheus(
            cls.work, cls.metrics_target, rule_files=[RULES])

    @classmethod
    def tearDownClass(cls):
        if cls.prometheus is not None:
            cls.prometheus.stop()
        if cls.dictlogd is not None:
            status = cls.dictlogd.stop()
            cls.dictlogd = None
            assert status == 0, "dictlogd exited non-zero on SIGTERM"
        if os.path.exists(os.path.join(cls.kafka_dir, "cluster.env")):
            down = cluster_sh("down", "--dir=" + cls.kafka_dir, "--timeout=30")
            assert down.returncode == 0, down.stdout + down.stderr

    def test_the_message_was_skipped_and_logged(self):
        self.assertIn("materializer: skipping dictlog.records/", self.dictlogd.log_text())

    def test_every_metric_and_label_of_the_rules_is_exported(self):
        assert_rules_exported(self, RULES, self.scrape)

    def test_prometheus_fires_skipped_messages_and_evaluates_every_rule(self):
        alerts = wait_for("DictlogClusterSkippedMessages to fire",
                          lambda: firing(self.prometheus_url, "DictlogClusterSkippedMessages"))
        self.assertEqual(alerts[0]["labels"]["severity"], "critical")
        self.assertEqual(alerts[0]["labels"]["instance"], self.metrics_target)
        names = assert_every_rule_evaluates(self, self.prometheus_url, RULES)
        # Every partition serves and the node agrees with the log: only the skip fires
        # or waits.
        self.assertEqual(names, {"DictlogClusterSkippedMessages"})

if __name__ == "__main__":
    unittest.main(verbosity=2)
