#!/usr/bin/python3
"""Drift experiment for issue 20: a pool fed category A, then category B, recovers.

Per pair A->B of loghub files (real dictlogd on 127.0.0.1 port 0 with a temp data dir,
stopped by its pid; the real `dictlog` CLI; out_of_sample.py's Server and Client):

1. Drift run: append the first half of A to one pool (category "drift") and wait until
   automatic training is idle (its dictionary is grown: each A first half used here is
   over 128 KiB, the full-size point). Then append all of B in chunks of --chunk_bytes,
   waiting for training to be idle after each, and record per chunk the pool's
   raw/stored byte difference (exact: with upkeep off nothing re-encodes old records
   after the first dictionary), drift_retrains, drift_reactivations (earlier
   dictionaries activated again when the data drifted back) and the active dictionary.
2. B-alone run: a fresh server, B appended in the same chunks to a fresh pool created
   with --drift_threshold=0, with --recompress_first_dictionary=false so each chunk's
   stored bytes stay exact. This is "a dictionary trained on B alone": dictlog's own
   first and growth trainings on B only, no drift retraining.

Figures: the ratio of B's second half in both pools (drift/alone >= 0.95 is "within
5%"); where drift was acted on (B bytes before the drift retraining was queued);
recovered_at: B bytes fed before the first window of --window_bytes from which every
later window's ratio in the drift pool is >= 0.95 x the B-alone pool's on the same
records; the budget: 2x the data the first training needed (the A pool's dictionary is
full-size at --auto_train_min_multiple (8) x 16 KiB = 128 KiB, so 256 KiB).
"""
import argparse
import csv
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import out_of_sample  # noqa: E402
import zstd_reference  # noqa: E402

ROOT = out_of_sample.ROOT
POOL = "drift"
FIRST_TRAINING_BYTES = 8 * 16384  # Full-size point of a 16 KiB dictionary.

PAIRS = ["HDFS:Zookeeper", "Hadoop:Spark", "BGL:Linux", "Android:OpenSSH",
         "Zookeeper:HealthApp"]


def lines_of(path):
    with open(path, "rb") as f:
        lines = f.read().split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    return [l.rstrip(b"\r") for l in lines]


def chunks(lines, chunk_bytes):
    """Consecutive groups of lines of about chunk_bytes, as appended bytes."""
    out, cur, size = [], [], 0
    for l in lines:
        cur.append(l)
        size += len(l) + 1
        if size >= chunk_bytes:
            out.append(cur)
            cur, size = [], 0
    if cur:
        out.append(cur)
    return out


def feed(server, client, groups, deadline_s):
    """Appends each group to POOL; per group: raw, stored, retrains, active dict."""
    rows = []
    before = client.pool(POOL) or {"raw_bytes": 0, "stored_bytes": 0}
    for g in groups:
        client.run("append", "--category=" + POOL, data=b"".join(l + b"\n" for l in g))
        p = out_of_sample.wait_idle(server, client, POOL, deadline_s)
        rows.append({"raw": p["raw_bytes"] - before["raw_bytes"],
                     "stored": p["stored_bytes"] - before["stored_bytes"],
                     "retrains": p.get("drift_retrains", 0),
                     "reactivations": p.get("drift_reactivations", 0),
                     "dict": p["active_dictionary_id"],
                     "degraded": p.get("drift_degraded_percent", 0.0)})
        before = p
    return rows


def ratio(rows):
    raw = sum(r["raw"] for r in rows)
    st = sum(r["stored"] for r in rows)
    return raw / st if st else 0.0


def windows(rows, window_bytes):
    """Start indexes of consecutive windows of about window_bytes of raw data."""
    starts, size = [0], 0
    for i, r in enumerate(rows):
        size += r["raw"]
        if size >= window_bytes and i + 1 < len(rows):
            starts.append(i + 1)
            size = 0
    return starts


def recovered_at(drift, alone, window_bytes):
    """B bytes before the first window from which every window does >= 95% of alone."""
    starts = windows(alone, window_bytes)
    bounds = list(zip(starts, starts[1:] + [len(alone)]))
    ok = [ratio(drift[a:b]) >= 0.95 * ratio(alone[a:b]) for a, b in bounds]
    for k in range(len(bounds)):
        if all(ok[k:]):
            return sum(r["raw"] for r in alone[:bounds[k][0]])
    return None


def run_pair(directory, bin_dir, a, b, chunk_bytes, window_bytes, deadline_s, flags):
    a_lines = lines_of(os.path.join(directory, a + ".log"))
    b_lines = lines_of(os.path.join(directory, b + ".log"))
    half = len(b_lines) // 2
    groups = chunks(b_lines[:half], chunk_bytes) + chunks(b_lines[half:], chunk_bytes)
    n_first = len(chunks(b_lines[:half], chunk_bytes))
    server = out_of_sample.Server(bin_dir, deadline_s, flags)
    try:
        c = out_of_sample.Client(bin_dir, server.address)
        c.run("append", "--category=" + POOL,
              data=b"".join(l + b"\n" for l in a_lines[:len(a_lines) // 2]))
        p_a = out_of_sample.wait_idle(server, c, POOL, deadline_s)
        drift = feed(server, c, groups, deadline_s)
        dicts = c.dicts(POOL)
    finally:
        server.stop()
    server = out_of_sample.Server(bin_dir, deadline_s,
                                  list(flags) + ["--recompress_first_dictionary=false"])
    try:
        c = out_of_sample.Client(bin_dir, server.address)
        c.run("pool", "create", POOL, "--drift_threshold=0")  # Only its own training.
        alone = feed(server, c, groups, deadline_s)
    finally:
        server.stop()
    retrain_at = next((sum(r["raw"] for r in drift[:i]) for i, r in enumerate(drift)
                       if r["retrains"] > 0), None)
    rec = recovered_at(drift, alone, window_bytes)
    d2, a2 = ratio(drift[n_first:]), ratio(alone[n_first:])
    return {
        "pair": "%s->%s" % (a, b), "a_raw_bytes": p_a["raw_bytes"],
        "a_ratio": p_a["raw_bytes"] / p_a["stored_bytes"],
        "b_raw_bytes": sum(r["raw"] for r in drift),
        "drift_retrains": drift[-1]["retrains"], "dictionaries": len(dicts),
        "drift_reactivations": drift[-1]["reactivations"],
        "retrain_queued_at_b_bytes": retrain_at,
        "b_second_half_ratio_drift": d2, "b_second_half_ratio_alone": a2,
        "drift_vs_alone": d2 / a2 if a2 else 0.0,
        "recovered_at_b_bytes": rec, "budget_bytes": 2 * FIRST_TRAINING_BYTES,
        "pass": (a2 > 0 and d2 / a2 >= 0.95 and rec is not None and
                 rec <= 2 * FIRST_TRAINING_BYTES),
        "chunks": [{"drift_ratio": r["raw"] / r["stored"] if r["stored"] else 0.0,
                    "alone_ratio": q["raw"] / q["stored"] if q["stored"] else 0.0,
                    "raw": r["raw"], "retrains": r["retrains"],
                    "reactivations": r["reactivations"], "dict": r["dict"],
                    "degraded": r["degraded"]} for r, q in zip(drift, alone)],
    }


FIELDS = ["pair", "a_raw_bytes", "a_ratio", "b_raw_bytes", "drift_retrains",
          "drift_reactivations", "dictionaries",
          "retrain_queued_at_b_bytes", "b_second_half_ratio_drift",
          "b_second_half_ratio_alone", "drift_vs_alone", "recovered_at_b_bytes",
          "budget_bytes", "pass"]


def print_table(rows):
    print("%-20s %8s %6s %8s %4s %4s %9s %7s %7s %7s %9s %s" % (
        "pair A->B", "A raw", "A rat", "B raw", "retr", "back", "retrain@", "B2 drift",
        "B2 alone",
        "d/a", "recov@", "target"))
    for r in rows:
        print("%-20s %8d %6.2f %8d %4d %4d %9s %7.3f %7.3f %7.3f %9s %s" % (
            r["pair"], r["a_raw_bytes"], r["a_ratio"], r["b_raw_bytes"],
            r["drift_retrains"], r["drift_reactivations"], r["retrain_queued_at_b_bytes"],
            r["b_second_half_ratio_drift"], r["b_second_half_ratio_alone"],
            r["drift_vs_alone"], r["recovered_at_b_bytes"],
            "PASS" if r["pass"] else "FAIL"))


def chart(rows, path):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib not importable: no chart", file=sys.stderr)
        return
    fig, axes = plt.subplots(len(rows), 1, figsize=(9, 2.6 * len(rows)), squeeze=False)
    for ax, r in zip(axes[:, 0], rows):
        xs, x = [], 0
        for ch in r["chunks"]:
            x += ch["raw"]
            xs.append(x / 1024)
        ax.plot(xs, [ch["drift_ratio"] for ch in r["chunks"]], label="A then B (drift)")
        ax.plot(xs, [ch["alone_ratio"] for ch in r["chunks"]], label="B alone")
        ax.axvline(r["budget_bytes"] / 1024, color="grey", linestyle=":", label="budget")
        ax.set_title(r["pair"], fontsize=9)
        ax.set_ylabel("chunk ratio")
        ax.legend(fontsize=7)
    axes[-1, 0].set_xlabel("KiB of B appended")
    fig.tight_layout()
    fig.savefig(path)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("directory", nargs="?", default=zstd_reference.default_dir())
    ap.add_argument("--pairs", default=",".join(PAIRS), help="A:B,... (loghub file stems)")
    ap.add_argument("--bin_dir", default=os.path.join(ROOT, "bazel-bin"))
    ap.add_argument("--out_dir", default=os.path.join(ROOT, "benchmarks", "results"))
    ap.add_argument("--name", default="drift_experiment")
    ap.add_argument("--chunk_bytes", type=int, default=8192)
    ap.add_argument("--window_bytes", type=int, default=32768)
    ap.add_argument("--deadline_s", type=float, default=60)
    ap.add_argument("--server_flag", action="append", default=[],
                    help="extra dictlogd flag (repeatable)")
    a = ap.parse_args(argv)
    rows = []
    for pair in a.pairs.split(","):
        src, dst = pair.split(":")
        rows.append(run_pair(a.directory, a.bin_dir, src, dst, a.chunk_bytes,
                             a.window_bytes, a.deadline_s, a.server_flag))
        print("measured %s" % rows[-1]["pair"], file=sys.stderr)
    print_table(rows)
    os.makedirs(a.out_dir, exist_ok=True)
    base = os.path.join(a.out_dir, a.name)
    with open(base + ".csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=FIELDS, extrasaction="ignore")
        w.writeheader()
        w.writerows(rows)
    with open(base + ".json", "w") as f:
        json.dump(rows, f, indent=2)
        f.write("\n")
    chart(rows, base + ".png")
    return 0 if all(r["pass"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
