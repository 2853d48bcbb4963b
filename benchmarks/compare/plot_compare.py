#!/usr/bin/env python3
"""PNG charts of a benchmarks/compare run (needs matplotlib):
  PREFIX-block-size-vs-ratio.png  stored ratio by unit (record, 2..64 KiB blocks),
                                  with and without pool dictionaries (values, and
                                  SST files on disk), and RocksDB's
  PREFIX-ratio-vs-reads.png       ratio against Get ops/s and MultiGet(64) records/s
  PREFIX-dict-vs-nodict.png       the same unit with and without a dictionary
Usage: plot_compare.py compare.csv PREFIX   (compare.py calls plot() itself)
"""
import csv
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

UNITS = [("record", 0), ("2 KiB", 2048), ("4 KiB", 4096), ("16 KiB", 16384),
         ("64 KiB", 65536)]


def _unit_index(row):
    if row["server"] != "dictlogd":
        return None
    size = int(row["block_bytes"]) if row["storage"] == "block" else 0
    return next((i for i, (_, b) in enumerate(UNITS) if b == size), None)


def _is_dict(row):
    return str(row["dictionary"]) in ("True", "true", "1")


def block_size_vs_ratio(rows, path):
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for dictionary, style, label in ((True, "o-", "dictlog + pool dictionary"),
                                     (False, "s--", "dictlog, no dictionary")):
        points = sorted((_unit_index(r), float(r["ratio"])) for r in rows
                        if _unit_index(r) is not None and _is_dict(r) == dictionary)
        if points:
            line, = ax.plot([p[0] for p in points], [p[1] for p in points], style, label=label)
        disk = sorted((_unit_index(r), float(r.get("sst_ratio") or 0)) for r in rows
                      if _unit_index(r) is not None and _is_dict(r) == dictionary)
        if points and any(p[1] for p in disk):
            ax.plot([p[0] for p in disk], [p[1] for p in disk], style, alpha=0.35,
                    color=line.get_color(), label=label + " (SST files on disk)")
    for r in rows:
        if r["config"] == "rocksdb_dict":
            ax.plot([2], [float(r["ratio"])], "D", color="C3", markersize=9,
                    label="RocksDB zstd, 16 KiB dict per SST, 4 KiB blocks (SST files)")
    ax.set_xticks(range(len(UNITS)))
    ax.set_xticklabels([u for u, _ in UNITS])
    ax.set_xlabel("storage unit (block size)")
    ax.set_ylabel("ratio (raw / stored)")
    ax.set_ylim(bottom=0)
    ax.set_title("block size vs ratio")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, loc="lower right")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def ratio_vs_reads(rows, path):
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.5))
    for ax, key, title in ((axes[0], "get_ops_s", "Get ops/s"),
                           (axes[1], "multiget_records_s", "MultiGet(64) records/s")):
        for r in rows:
            value = float(r[key])
            if r["config"] == "null":
                ax.axhline(value, color="grey", linestyle=":", label="null handler (ceiling)")
                continue
            color = "C3" if r["server"] != "dictlogd" else ("C0" if _is_dict(r) else "C1")
            ax.scatter([float(r["ratio"])], [value], color=color)
            ax.annotate(r["config"], (float(r["ratio"]), value), fontsize=8,
                        xytext=(4, 4), textcoords="offset points")
        ax.set_xlabel("ratio (raw / stored: dictlog values + dictionaries; RocksDB SSTs)")
        ax.set_ylabel(title)
        ax.set_ylim(bottom=0)
        ax.set_title("ratio vs random reads: " + title)
        ax.grid(alpha=0.3)
        if any(r["config"] == "null" for r in rows):
            ax.legend(loc="lower left", fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def dict_vs_nodict(rows, path):
    by = {r["config"]: r for r in rows}
    pairs = [(u, by[d], by[n]) for u, d, n in (("record", "record+dict", "record"),
                                               ("4 KiB blocks", "block4k+dict", "block4k"))
             if d in by and n in by]
    fig, axes = plt.subplots(1, 3, figsize=(12, 4))
    for ax, key, title in ((axes[0], "ratio", "ratio"), (axes[1], "get_ops_s", "Get ops/s"),
                           (axes[2], "multiget_records_s", "MultiGet(64) records/s")):
        xs = range(len(pairs))
        ax.bar([x - 0.2 for x in xs], [float(p[1][key]) for p in pairs], 0.4,
               label="pool dictionary")
        ax.bar([x + 0.2 for x in xs], [float(p[2][key]) for p in pairs], 0.4,
               label="no dictionary")
        ax.set_xticks(list(xs))
        ax.set_xticklabels([p[0] for p in pairs])
        ax.set_title(title)
        ax.grid(alpha=0.3, axis="y")
    axes[0].legend()
    fig.suptitle("dictionary vs no dictionary")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def plot(rows, prefix):
    """Writes the charts; returns their paths."""
    rows = [{k: str(v) for k, v in r.items()} for r in rows]
    paths = []
    for suffix, draw in (("-block-size-vs-ratio.png", block_size_vs_ratio),
                         ("-ratio-vs-reads.png", ratio_vs_reads),
                         ("-dict-vs-nodict.png", dict_vs_nodict)):
        draw(rows, prefix + suffix)
        paths.append(prefix + suffix)
    return paths


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    with open(sys.argv[1]) as f:
        print("\n".join(plot(list(csv.DictReader(f)), sys.argv[2])))
