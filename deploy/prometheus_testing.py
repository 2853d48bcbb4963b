"""Helpers for tests that check PromQL (dashboards, alerting rules) against a real
dictlogd and a real Prometheus (Debian package prometheus): a PromQL selector parser,
the labels of a text exposition, child processes stopped by pid, and a Prometheus
scraping one target on 127.0.0.1. Used from one test thread."""

import json
import os
import re
import signal
import subprocess
import time
import urllib.error
import urllib.parse
import urllib.request

DEADLINE_SECONDS = 60
# Labels Prometheus attaches to every scraped series.
TARGET_LABELS = {"instance", "job"}

_KEYWORDS = {"by", "without", "on", "ignoring", "group_left", "group_right", "bool", "and",
             "or", "unless", "offset", "inf", "nan"}
_STRING = re.compile(r'"(?:\\.|[^"\\])*"')
_GROUPING = re.compile(r"\b(by|without|on|ignoring|group_left|group_right)\s*\(([^)]*)\)")
_TOKEN = re.compile(r"([A-Za-z_:][A-Za-z0-9_:]*)\s*(\{[^}]*\})?\s*(\()?")
_MATCHER = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)\s*(?:=~|!~|!=|=)\s*\"")


def rule_exprs(path):
    """(alert name, PromQL) of every rule of the rules file `path`. The file is YAML,
    read here without a YAML library: each `alert:` is followed by its `expr:`, the
    expression on that line or in the indented block after `expr: |` (promtool checks
    the YAML itself)."""
    with open(path) as f:
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


def assert_rules_exported(test, rules_path, scrape, made_by_prometheus=("up",)):
    """Asserts, on unittest case `test`, that every metric and label the rules of
    `rules_path` name (but those Prometheus makes itself) is in `scrape`, a text
    exposition, and that they group by no label those metrics lack."""
    exported = scrape_labels(scrape)
    for alert, expr in rule_exprs(rules_path):
        selectors, groupings = parse_promql(expr)
        test.assertTrue(selectors, f"{alert}: no metric in {expr}")
        known = set(TARGET_LABELS)
        for name, labels in selectors:
            if name in made_by_prometheus:
                continue
            test.assertIn(name, exported, f"{alert}: {name} is not in /metrics")
            known |= exported[name]
            test.assertLessEqual(labels, exported[name] | TARGET_LABELS,
                                 f"{alert}: {name} lacks one of {labels}")
        test.assertLessEqual(groupings, known, f"{alert}: {expr}")


def assert_promtool_passes(test, rules_path, unit_tests_path):
    """Asserts, on unittest case `test`, that `promtool check rules` finds every rule of
    `rules_path` valid and that `promtool test rules` passes `unit_tests_path` (both run
    from the rules' directory, as the unit tests name their rule files)."""
    def promtool(*args):
        return subprocess.run(["promtool", *args], cwd=os.path.dirname(rules_path),
                              capture_output=True, text=True)

    result = promtool("check", "rules", os.path.basename(rules_path))
    test.assertEqual(result.returncode, 0, result.stdout + result.stderr)
    test.assertIn(f"SUCCESS: {len(rule_exprs(rules_path))} rules found", result.stdout)
    result = promtool("test", "rules", os.path.basename(unit_tests_path))
    test.assertEqual(result.returncode, 0, result.stdout + result.stderr)


def firing(url, alertname):
    """The alerts named `alertname` that Prometheus at `url` has firing."""
    return [a for a in api(url, "/api/v1/alerts")["alerts"]
            if a["labels"]["alertname"] == alertname and a["state"] == "firing"]


def assert_every_rule_evaluates(test, url, rules_path):
    """Waits until Prometheus at `url` has evaluated each of its rules, then asserts
    that they are those of `rules_path` and healthy. Returns the names of the alerts
    pending or firing."""
    def evaluated():
        rules = [r for g in api(url, "/api/v1/rules")["groups"] for r in g["rules"]]
        done = all(not r.get("lastEvaluation", "").startswith("0001") for r in rules)
        return done and rules

    rules = wait_for("every rule evaluated", evaluated)
    test.assertEqual(sorted(r["name"] for r in rules),
                     sorted(alert for alert, _ in rule_exprs(rules_path)))
    for rule in rules:
        test.assertEqual(rule["health"], "ok", rule)
    return {a["labels"]["alertname"] for a in api(url, "/api/v1/alerts")["alerts"]}


def parse_promql(expr):
    """(selectors, grouping labels) of a PromQL expression: selectors as (metric name,
    labels its matchers name) in order; functions, keywords and numbers are skipped."""
    matchers_by_start = {}
    for m in re.finditer(r"\{[^}]*\}", expr):  # Matchers, before strings are blanked.
        matchers_by_start[m.start()] = set(_MATCHER.findall(m.group()))
    text = _STRING.sub(lambda m: '"' + " " * (len(m.group()) - 2) + '"', expr)
    text = re.sub(r"\[[^\]]*\]", lambda m: " " * len(m.group()), text)  # Ranges.
    text = re.sub(r"\b\d[\w.]*", lambda m: " " * len(m.group()), text)  # 0.99, 5m, 1e3.
    groupings = set()

    def take_grouping(m):
        groupings.update(label.strip() for label in m.group(2).split(",") if label.strip())
        return " " * len(m.group())

    text = _GROUPING.sub(take_grouping, text)
    selectors = []
    for m in _TOKEN.finditer(text):
        name, matchers, call = m.groups()
        if call or name.lower() in _KEYWORDS:
            continue
        labels = matchers_by_start.get(m.start(2), set()) if matchers else set()
        selectors.append((name, labels))
    return selectors, groupings


def scrape_labels(text):
    """{sample name: label names seen on it} of a Prometheus text exposition."""
    labels = {}
    for line in text.splitlines():
        m = re.match(r"([A-Za-z_:][A-Za-z0-9_:]*)(\{.*\})?\s", line)
        if m and not line.startswith("#"):
            names = re.findall(r'([A-Za-z_][A-Za-z0-9_]*)="(?:\\.|[^"\\])*"', m.group(2) or "")
            labels.setdefault(m.group(1), set()).update(names)
    return labels


def wait_for(what, condition):
    deadline = time.monotonic() + DEADLINE_SECONDS
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}")


def http_get(url):
    with urllib.request.urlopen(url, timeout=10) as response:
        return response.read().decode()


class Process:
    """A child process with its output in a log file; stop() by pid: SIGTERM, then
    SIGKILL after 30 s. Returns the exit status."""

    def __init__(self, argv, log_path):
        self.log_path = log_path
        self.log = open(log_path, "ab")
        self.process = subprocess.Popen(argv, stdout=self.log, stderr=subprocess.STDOUT)

    def log_text(self):
        with open(self.log_path, errors="replace") as f:
            return f.read()

    def stop(self):
        self.process.send_signal(signal.SIGTERM)
        try:
            return self.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.process.kill()
            return self.process.wait()
        finally:
            self.log.close()


def read_port(path, process):
    def port():
        assert process.process.poll() is None, process.log_text()
        if not os.path.exists(path) or not os.path.getsize(path):
            return None
        with open(path) as f:
            return int(f.read())

    return wait_for(path, port)


def start_dictlogd(dictlogd, work, log, extra_args=()):
    """A dictlogd (a Process) on 127.0.0.1 port 0 with its metrics on port 0, data in
    `work`/data, automatic training off, `extra_args` after, output in `work`/`log`;
    returns (process, gRPC address, metrics address) once both ports are written."""
    ports = {name: os.path.join(work, name) for name in ("port", "metrics_port")}
    for path in ports.values():
        if os.path.exists(path):
            os.remove(path)  # Left by an earlier dictlogd on the same data.
    process = Process(
        [dictlogd, "--listen=127.0.0.1:0", "--data_dir=" + os.path.join(work, "data"),
         "--port_file=" + ports["port"], "--metrics_listen=127.0.0.1:0",
         "--metrics_port_file=" + ports["metrics_port"], "--auto_train=false",
         *extra_args],
        os.path.join(work, log))
    return (process, "127.0.0.1:%d" % read_port(ports["port"], process),
            "127.0.0.1:%d" % read_port(ports["metrics_port"], process))


def run_cli(dictlog, server, *args, ok=True):
    """The dictlog CLI against `server`; asserts it exits 0 exactly when `ok`."""
    result = subprocess.run([dictlog, "--server=" + server, *args],
                            capture_output=True, text=True)
    assert (result.returncode == 0) == ok, (args, result.returncode, result.stderr)
    return result


def start_prometheus(work, target, rule_files=()):
    """A Prometheus (a Process) scraping `target` (host:port) every second as job
    `dictlog`, evaluating `rule_files` every second, its files in `work`; returns
    (process, url) once it has scraped the target three times."""
    config = os.path.join(work, "prometheus.yml")
    with open(config, "w") as f:
        f.write("global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n")
        if rule_files:
            f.write("rule_files:\n" + "".join(f"  - '{r}'\n" for r in rule_files))
        f.write("scrape_configs:\n  - job_name: dictlog\n    static_configs:\n"
                f"      - targets: ['{target}']\n")
    prometheus = Process(
        ["prometheus", "--config.file=" + config,
         "--storage.tsdb.path=" + os.path.join(work, "prometheus"),
         "--web.listen-address=127.0.0.1:0"], os.path.join(work, "prometheus.log"))
    try:
        def address():
            assert prometheus.process.poll() is None, prometheus.log_text()
            m = re.search(r'msg="Listening on" address=(127\.0\.0\.1:\d+)',
                          prometheus.log_text())
            return m and m.group(1)

        url = "http://" + wait_for("Prometheus to listen", address)

        def ready():
            # Prometheus listens before its storage is up and answers 503 until then.
            try:
                http_get(url + "/-/ready")
                return True
            except urllib.error.HTTPError as e:
                if e.code != 503:
                    raise
                return False

        wait_for("Prometheus to be ready", ready)
        # Three scrapes of dictlogd: enough samples for every rate() over 1m.
        wait_for("three scrapes", lambda: any(
            float(r["value"][1]) >= 3 for r in query(
                url, "count_over_time(dictlog_store_open[1m])")))
    except BaseException:
        prometheus.stop()
        raise
    return prometheus, url


def api(url, path, params=None):
    """The `data` of a Prometheus HTTP API answer (status success asserted)."""
    body = json.loads(http_get(url + path + ("?" + urllib.parse.urlencode(params)
                                             if params else "")))
    assert body["status"] == "success", body
    return body["data"]


def query(url, expr):
    """The result vector of an instant query."""
    return api(url, "/api/v1/query", {"query": expr})["result"]
