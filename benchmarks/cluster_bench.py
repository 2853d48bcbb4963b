#!/usr/bin/env python3
"""cluster_bench: single-node dictlog next to a local cluster, in one run.

Issue 22's closing figures: ingest records/s and MultiGet(64) records/s of a 3-broker +
3-node cluster (deploy/local-cluster/cluster.sh) on this machine next to single-node
dictlog with the same binaries, measured one after the other in one run. On one machine
this shows the cost of replication (three brokers and three materializing nodes on the
same cores), not scaling.

Per setup:
  ingest   `dictlog-bench load` of the loghub files (--copies) through one node, timed
           from the start of the load to its last acknowledgement, and to the moment
           every node reads the last id of every pool (so that figure includes
           materializing on every node; polled with `dictlog get`, ~0.1 s resolution);
  multiget `dictlog-bench read --op=multiget --batch=64` for --read_seconds against each
           node in turn (uniform over the loaded ids); records/s per node and their sum.

Writes a CSV (--csv) and, if matplotlib is importable, a PNG beside it. Only loopback
addresses; every process it starts is stopped by its pid (cluster.sh down for the
cluster). Exit 0 ok, 1 failure, 2 usage.

    make build kafka
    python3 benchmarks/cluster_bench.py --bin_dir=bin --dir=../shared/data/loghub \\
        --copies=5 --work_dir=/tmp/cluster_bench --csv=benchmarks/results/cluster_bench.csv
"""
import argparse
import csv
import json
import os
import shutil
import signal
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
CLUSTER_SH = os.path.join(HERE, "..", "deploy", "local-cluster", "cluster.sh")


def run(cmd, **kw):
    return subprocess.run(cmd, check=True, text=True, capture_output=True, **kw)


def last_ids(ids_file):
    """The last acknowledged id of each pool in a dictlog-bench ids file."""
    last = {}
    with open(ids_file) as f:
        for line in f:
            line = line.strip()
            if not line:
                continue
            pool, seq = line.rsplit("/", 1)
            if int(seq) > last.get(pool, (0, ""))[0]:
                last[pool] = (int(seq), line)
    return [v[1] for v in last.values()]


def wait_readable(cli, server, ids, timeout_s):
    """Waits until `server` answers every id of `ids` (a replica that has not applied an
    id answers UNAVAILABLE); returns the seconds waited."""
    start = time.monotonic()
    while True:
        r = subprocess.run([cli, "--server=" + server, "get"] + list(ids),
                           text=True, capture_output=True)
        if r.returncode == 0:
            return time.monotonic() - start
        if time.monotonic() - start > timeout_s:
            raise RuntimeError(f"{server}: the last ids not readable after {timeout_s} s: "
                               f"{r.stderr.strip()}")
        time.sleep(0.05)


def measure(setup, nodes, args, work):
    """Ingest through nodes[0], then MultiGet against each node; rows for the CSV."""
    bench = os.path.join(args.bin_dir, "dictlog-bench")
    cli = os.path.join(args.bin_dir, "dictlog")
    ids = os.path.join(work, setup + ".ids")
    start = time.monotonic()
    load = run([bench, "load", "--server=" + nodes[0], "--dir=" + args.dir,
                "--copies=%d" % args.copies, "--batch_records=%d" % args.batch_records,
                "--ids_out=" + ids])
    acked = time.monotonic() - start
    records = sum(1 for _ in open(ids))
    for node in nodes:
        wait_readable(cli, node, last_ids(ids), args.apply_timeout)
    everywhere = time.monotonic() - start
    print(f"{setup}: {records} records acknowledged in {acked:.1f} s, readable on "
          f"{len(nodes)} node(s) after {everywhere:.1f} s", flush=True)
    rows = [{"setup": setup, "measure": "ingest_acknowledged", "node": nodes[0],
             "records": records, "seconds": round(acked, 2),
             "records_per_s": round(records / acked), "errors": 0},
            {"setup": setup, "measure": "ingest_readable_everywhere", "node": nodes[0],
             "records": records, "seconds": round(everywhere, 2),
             "records_per_s": round(records / everywhere), "errors": 0}]
    for node in nodes:
        report = os.path.join(work, f"{setup}-{node.replace(':', '_')}.json")
        run([bench, "read", "--server=" + node, "--ids=" + ids, "--op=multiget",
             "--batch=64", "--concurrency=%d" % args.concurrency,
             "--duration=%ds" % args.read_seconds, "--json=" + report])
        r = json.load(open(report))
        print(f"{setup}: MultiGet(64) on {node}: {r['records_per_s']:.0f} records/s, "
              f"p99 {r['latency_us']['p99']:.0f} us, errors {r['errors']}", flush=True)
        rows.append({"setup": setup, "measure": "multiget64", "node": node,
                     "records": r["records"], "seconds": args.read_seconds,
                     "records_per_s": round(r["records_per_s"]), "errors": r["errors"]})
    return rows


def single_node(args, work):
    data = os.path.join(work, "single")
    port_file = os.path.join(work, "single.port")
    log = open(os.path.join(work, "single.log"), "w")
    proc = subprocess.Popen([os.path.join(args.bin_dir, "dictlogd"), "--listen=127.0.0.1:0",
                             "--data_dir=" + data, "--port_file=" + port_file],
                            stdout=log, stderr=subprocess.STDOUT)
    try:
        deadline = time.monotonic() + 60
        while not (os.path.exists(port_file) and open(port_file).read().strip()):
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError("single-node dictlogd did not start (see single.log)")
            time.sleep(0.05)
        server = "127.0.0.1:" + open(port_file).read().strip()
        return measure("single", [server], args, work)
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def cluster(args, work):
    cdir = os.path.join(work, "cluster")
    env = dict(os.environ, DICTLOGD=os.path.abspath(os.path.join(args.bin_dir, "dictlogd")))
    try:
        up = run(["bash", CLUSTER_SH, "up", "--dir=" + cdir, "--brokers=%d" % args.brokers,
                  "--nodes=%d" % args.nodes], env=env)
        nodes = [line.split()[1] for line in up.stdout.splitlines()
                 if line.startswith("dictlogd-")]
        if len(nodes) != args.nodes:
            raise RuntimeError("cluster.sh up printed no dictlogd nodes:\n" + up.stdout)
        return measure("cluster-%db-%dn" % (args.brokers, args.nodes), nodes, args, work)
    finally:
        subprocess.run(["bash", CLUSTER_SH, "down", "--dir=" + cdir], env=env)


def plot(rows, png):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib not importable: no chart", file=sys.stderr)
        return
    setups = list(dict.fromkeys(r["setup"] for r in rows))
    ingest = [next(r["records_per_s"] for r in rows
                   if r["setup"] == s and r["measure"] == "ingest_readable_everywhere")
              for s in setups]
    reads = [sum(r["records_per_s"] for r in rows
                 if r["setup"] == s and r["measure"] == "multiget64") for s in setups]
    fig, axes = plt.subplots(1, 2, figsize=(9, 3.5))
    axes[0].bar(setups, ingest)
    axes[0].set_title("ingest records/s (until readable everywhere)")
    axes[1].bar(setups, reads)
    axes[1].set_title("MultiGet(64) records/s (sum over nodes)")
    fig.tight_layout()
    fig.savefig(png)
    print("chart in", png)


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--bin_dir", default="bin", help="dictlogd, dictlog, dictlog-bench")
    p.add_argument("--dir", required=True, help="directory of *.log files (loghub)")
    p.add_argument("--copies", type=int, default=5, help="times each file is appended")
    p.add_argument("--batch_records", type=int, default=1000)
    p.add_argument("--brokers", type=int, default=3)
    p.add_argument("--nodes", type=int, default=3)
    p.add_argument("--read_seconds", type=int, default=10)
    p.add_argument("--concurrency", type=int, default=16)
    p.add_argument("--apply_timeout", type=float, default=300,
                   help="seconds a node may take to apply the load")
    p.add_argument("--work_dir", default="/tmp/cluster_bench")
    p.add_argument("--csv", default="benchmarks/results/cluster_bench.csv")
    args = p.parse_args()
    if args.copies < 1 or args.read_seconds < 1 or not 1 <= args.nodes <= 9:
        p.error("--copies, --read_seconds must be >= 1, --nodes 1..9")
    shutil.rmtree(args.work_dir, ignore_errors=True)
    os.makedirs(args.work_dir)
    rows = single_node(args, args.work_dir) + cluster(args, args.work_dir)
    os.makedirs(os.path.dirname(os.path.abspath(args.csv)), exist_ok=True)
    with open(args.csv, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
        w.writeheader()
        w.writerows(rows)
    print("csv in", args.csv)
    plot(rows, os.path.splitext(args.csv)[0] + ".png")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except (RuntimeError, subprocess.CalledProcessError) as e:
        detail = getattr(e, "stderr", "") or ""
        print("cluster_bench:", e, detail, file=sys.stderr)
        sys.exit(1)
