#!/usr/bin/python3
"""Out-of-sample dictlog measurement for issue 20, next to the python-zstandard reference.

Per category (one *.log file): a fresh dictlogd (127.0.0.1, port 0, temp data dir,
stopped by its pid), `dictlog append` of the first half (CRLF stripped by default),
wait until automatic training and the first-dictionary re-encode are idle (the
server's dictlog_auto_training_queued/running metrics are 0 and no recompress job
runs), snapshot
the pool, append the second half, wait again, measure the second half.

Measurement: the pool's stored_bytes difference (final - after first half) is exact
only if the first half's records are not rewritten after the snapshot. When the pool
has another active dictionary at the end than at the snapshot (a first or a growth
training during the second half), the first training's re-encode of *all* older
records, first half included, would credit the first half's shrinkage to the second
half. Therefore the second half is measured per record in that case: `dictlog get --frame` of each second-half record,
minus the 4-byte magic (= the magicless frame the reference counts); otherwise
(same active dictionary at both points) the stored_bytes difference is used.
Column diffok says which (yes: difference; no: frames).
"""
import argparse
import csv
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import urllib.request

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import zstd_reference  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MAGIC = 4


class Server:
    """A dictlogd on 127.0.0.1 port 0 with a temp data dir; stop() kills its pid."""

    def __init__(self, bin_dir, deadline_s, flags=()):
        self.dir = tempfile.mkdtemp(prefix="oos-")
        port_file = os.path.join(self.dir, "port")
        metrics_file = os.path.join(self.dir, "metrics_port")
        self.log = open(os.path.join(self.dir, "log"), "w")
        self.proc = subprocess.Popen(
            [os.path.join(bin_dir, "server/daemon/dictlogd"), "--listen=127.0.0.1:0",
             "--data_dir=" + os.path.join(self.dir, "data"), "--port_file=" + port_file,
             "--metrics_listen=127.0.0.1:0", "--metrics_port_file=" + metrics_file]
            + list(flags),
            stdout=self.log, stderr=subprocess.STDOUT)
        end = time.monotonic() + deadline_s
        for f in (port_file, metrics_file):
            while not (os.path.exists(f) and open(f).read().strip()):
                if self.proc.poll() is not None or time.monotonic() > end:
                    self.stop()
                    raise RuntimeError("dictlogd did not start; see its log")
                time.sleep(0.02)
        self.address = "127.0.0.1:" + open(port_file).read().strip()
        self.metrics = "http://127.0.0.1:%s/metrics" % open(metrics_file).read().strip()

    def training_idle(self):
        """True if no automatic training is queued or running."""
        text = urllib.request.urlopen(self.metrics, timeout=10).read().decode()
        return ("\ndictlog_auto_training_queued 0\n" in text and
                "\ndictlog_auto_training_running 0\n" in text)

    def stop(self):
        if self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                os.kill(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
        self.log.close()
        shutil.rmtree(self.dir, ignore_errors=True)


class Client:
    def __init__(self, bin_dir, address):
        self.cmd = [os.path.join(bin_dir, "client/cli/dictlog"), "--server=" + address]

    def run(self, *args, data=None):
        r = subprocess.run(self.cmd + list(args), input=data, capture_output=True)
        if r.returncode != 0:
            raise RuntimeError("dictlog %s: %s" % (" ".join(args), r.stderr.decode()))
        return r

    def pool(self, name):
        for line in self.run("pools", "--format=json").stdout.decode().splitlines():
            p = json.loads(line)
            if p["pool"] == name:
                return p
        return None

    def dicts(self, name):
        """[(id, active, records)] of the pool's dictionaries, from `dict list`."""
        out = self.run("dict", "list", "--pool=" + name).stdout.decode().splitlines()
        rows = []
        for line in out[1:]:
            f = line.split()
            if len(f) >= 7 and f[0].isdigit():
                rows.append((int(f[0]), f[5] == "yes", int(f[6])))
        return rows

    def recompress_running(self, name):
        r = subprocess.run(self.cmd + ["recompress", "--pool=" + name, "--status"],
                           capture_output=True)
        return b"RUNNING" in r.stdout

    def frame_bytes(self, record_id):
        err = self.run("get", "--frame", record_id).stderr.decode()
        m = re.search(r": (\d+) bytes", err)
        if not m:
            raise RuntimeError("no frame size in %r" % err)
        return int(m.group(1))


def idle(server, client, name):
    """True once no training is queued or running and no re-encode runs."""
    return (client.pool(name) is not None and server.training_idle() and
            not client.recompress_running(name))


def wait_idle(server, client, name, deadline_s):
    end = time.monotonic() + deadline_s
    while not idle(server, client, name):
        if time.monotonic() > end:
            print("pool %s: not idle after %ss" % (name, deadline_s), file=sys.stderr)
            break
        time.sleep(0.05)
    return client.pool(name)


def measure_category(bin_dir, path, deadline_s, flags=()):
    name = os.path.splitext(os.path.basename(path))[0]
    with open(path, "rb") as f:
        lines = f.read().split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    half = len(lines) // 2
    first = b"".join(l + b"\n" for l in lines[:half])
    second = b"".join(l + b"\n" for l in lines[half:])
    server = Server(bin_dir, deadline_s, flags)
    try:
        c = Client(bin_dir, server.address)
        c.run("append", "--category=" + name, data=first)
        p1 = wait_idle(server, c, name, deadline_s)
        ids = c.run("append", "--category=" + name, data=second).stdout.decode().split()
        p2 = wait_idle(server, c, name, deadline_s)
        raw2 = p2["raw_bytes"] - p1["raw_bytes"]
        diff_valid = p1["active_dictionary_id"] == p2["active_dictionary_id"]
        diff = p2["stored_bytes"] - p1["stored_bytes"]
        magicless = diff if diff_valid else sum(c.frame_bytes(i) - MAGIC for i in ids)
        final_dicts = c.dicts(name)
    finally:
        server.stop()
    return {
        "category": name, "records": len(ids), "raw_bytes": raw2,
        "stored_bytes": magicless, "ratio": raw2 / magicless if magicless else 0.0,
        "diff_bytes": diff, "diff_valid": diff_valid,
        "dict_after_first_half": p1["active_dictionary_id"],
        "dict_at_end": p2["active_dictionary_id"], "dictionaries": len(final_dicts),
    }


def compare(directory, bin_dir, deadline_s, flags=()):
    ref = {r["category"]: r for r in zstd_reference.reference(directory)}
    names = sorted(n for n in os.listdir(directory) if n.endswith(".log"))
    rows = []
    for n in names:
        r = measure_category(bin_dir, os.path.join(directory, n), deadline_s, flags)
        rf = ref[r["category"]]
        r["ref_raw_bytes"] = rf["raw_bytes"]
        r["ref_compressed_bytes"] = rf["compressed_bytes"]
        r["ref_ratio"] = rf["ratio"]
        r["vs_ref"] = r["ratio"] / rf["ratio"] if rf["ratio"] else 0.0
        r["pass"] = r["vs_ref"] >= 1.0
        rows.append(r)
        print("measured %s" % r["category"], file=sys.stderr)
    raw = sum(r["raw_bytes"] for r in rows)
    st = sum(r["stored_bytes"] for r in rows)
    rraw = sum(r["ref_raw_bytes"] for r in rows)
    rc = sum(r["ref_compressed_bytes"] for r in rows)
    ratio, rratio = (raw / st if st else 0.0), (rraw / rc if rc else 0.0)
    rows.append({
        "category": "TOTAL", "records": sum(r["records"] for r in rows), "raw_bytes": raw,
        "stored_bytes": st, "ratio": ratio,
        "diff_bytes": sum(r["diff_bytes"] for r in rows),
        "diff_valid": all(r["diff_valid"] for r in rows),
        "dict_after_first_half": "", "dict_at_end": "",
        "dictionaries": sum(r["dictionaries"] for r in rows),
        "ref_raw_bytes": rraw, "ref_compressed_bytes": rc, "ref_ratio": rratio,
        "vs_ref": ratio / rratio if rratio else 0.0,
        "pass": rratio > 0 and ratio / rratio >= 1.05 and all(r["pass"] for r in rows),
    })
    return rows


FIELDS = ["category", "records", "raw_bytes", "stored_bytes", "ratio", "diff_bytes",
          "diff_valid", "dict_after_first_half", "dict_at_end", "dictionaries",
          "ref_raw_bytes", "ref_compressed_bytes", "ref_ratio", "vs_ref", "pass"]


def print_table(rows):
    print("%-11s %6s %9s %9s %7s %9s %5s %7s %7s %8s %s" % (
        "category", "recs", "raw", "stored", "ratio", "diff", "diffok", "dict1st",
        "ref", "dl/ref", "target"))
    for r in rows:
        target = ">=1.05x ref, all pass" if r["category"] == "TOTAL" else ">=ref"
        print("%-11s %6d %9d %9d %7.3f %9d %5s %7s %7.3f %8.3f %s %s" % (
            r["category"], r["records"], r["raw_bytes"], r["stored_bytes"], r["ratio"],
            r["diff_bytes"], "yes" if r["diff_valid"] else "no",
            r["dict_after_first_half"], r["ref_ratio"], r["vs_ref"],
            "PASS" if r["pass"] else "FAIL", target))


def chart(rows, path):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib not importable: no chart", file=sys.stderr)
        return
    cats = [r["category"] for r in rows]
    x = range(len(cats))
    fig, ax = plt.subplots(figsize=(10, 4))
    ax.bar([i - 0.2 for i in x], [r["ratio"] for r in rows], 0.4, label="dictlog")
    ax.bar([i + 0.2 for i in x], [r["ref_ratio"] for r in rows], 0.4,
           label="python-zstandard reference")
    ax.set_xticks(list(x))
    ax.set_xticklabels(cats, rotation=30)
    ax.set_ylabel("out-of-sample ratio (second half)")
    ax.legend()
    fig.tight_layout()
    fig.savefig(path)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("directory", nargs="?", default=zstd_reference.default_dir())
    ap.add_argument("--bin_dir", default=os.path.join(ROOT, "bazel-bin"))
    ap.add_argument("--out_dir", default=os.path.join(ROOT, "benchmarks", "results"))
    ap.add_argument("--name", default="out_of_sample")
    ap.add_argument("--deadline_s", type=float, default=30)
    ap.add_argument("--server_flag", action="append", default=[],
                    help="extra dictlogd flag (repeatable), e.g. --server_flag=--auto_train_first_bytes=0")
    a = ap.parse_args(argv)
    rows = compare(a.directory, a.bin_dir, a.deadline_s, a.server_flag)
    print_table(rows)
    os.makedirs(a.out_dir, exist_ok=True)
    base = os.path.join(a.out_dir, a.name)
    with open(base + ".csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=FIELDS)
        w.writeheader()
        w.writerows(rows)
    with open(base + ".json", "w") as f:
        json.dump(rows, f, indent=2)
        f.write("\n")
    chart(rows, base + ".png")
    return 0


if __name__ == "__main__":
    sys.exit(main())
