#!/usr/bin/env python3
"""Charts from storage_bench's CSV: stored ratio by configuration (block size, with and
without dictionaries), and stored ratio vs random-read speed (the block-size trade-off).
Usage: plot_storage_bench.py CSV OUT_PREFIX  (writes OUT_PREFIX-*.png).

Needs matplotlib (`make charts` installs it from PyPI)."""
import csv
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def load(path):
    with open(path) as f:
        return list(csv.DictReader(f))


def color(row):
    return "tab:blue" if row["dictionary"] == "1" else "tab:gray"


def ratio_by_config(rows, out):
    fig, ax = plt.subplots(figsize=(8, 4))
    names = [r["config"] for r in rows]
    ratios = [float(r["ratio"]) for r in rows]
    ax.bar(names, ratios, color=[color(r) for r in rows])
    for i, ratio in enumerate(ratios):
        ax.text(i, ratio, f"{ratio:.2f}", ha="center", va="bottom", fontsize=8)
    ax.set_ylabel("stored ratio (raw / stored bytes)")
    ax.set_title("Stored ratio by storage unit (blue: pool dictionaries)")
    plt.setp(ax.get_xticklabels(), rotation=20, ha="right")
    fig.tight_layout()
    fig.savefig(out)


def ratio_vs_reads(rows, out):
    fig, ax = plt.subplots(figsize=(7, 5))
    for r in rows:
        x = float(r["ratio"])
        for key, marker in (("get_records_per_s", "o"), ("multiget_records_per_s", "s")):
            y = float(r[key]) / 1000
            ax.scatter(x, y, color=color(r), marker=marker)
            if marker == "o":
                ax.annotate(r["config"], (x, y), fontsize=8, xytext=(4, 4),
                            textcoords="offset points")
    ax.set_xlabel("stored ratio")
    ax.set_ylabel("random reads, thousand records/s (o: Get, s: MultiGet)")
    ax.set_title("Ratio vs random reads (in process, one thread)")
    ax.grid(alpha=0.3)
    fig.tight_layout()
    fig.savefig(out)


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    rows = load(sys.argv[1])
    ratio_by_config(rows, sys.argv[2] + "-ratio.png")
    ratio_vs_reads(rows, sys.argv[2] + "-ratio-vs-reads.png")


if __name__ == "__main__":
    main()
