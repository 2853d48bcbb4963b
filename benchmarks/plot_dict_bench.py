#!/usr/bin/env python3
"""Charts from dict_bench's CSV: speed vs number of dictionaries, and hot vs cold vs
dictlog. Usage: plot_dict_bench.py CSV OUT_PREFIX  (writes OUT_PREFIX-*.png).

Needs matplotlib (`make charts` installs it from PyPI)."""
import csv
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def load(path):
    with open(path) as f:
        return list(csv.DictReader(f))


def speed_vs_dicts(rows, out):
    """records/s of single records (16 KiB dictionary) against the dictionary count."""
    recs = [r for r in rows if r["unit"] == "record" and r["dict_bytes"] == "16384"]
    hot = [float(r["records_per_s"]) for r in recs if r["case"] == "hot"]
    fig, ax = plt.subplots(figsize=(8, 5))
    for case, style in [("cold_plain", "o-"), ("dictlog_group", "s--"),
                        ("dictlog_group_prefetch", "^:")]:
        for dist, color in [("uniform", "tab:blue"), ("zipf:0.99", "tab:orange")]:
            pts = sorted((int(r["dicts"]), float(r["records_per_s"]) / 1e6)
                         for r in recs if r["case"] == case and r["dist"] == dist)
            if pts:
                ax.plot(*zip(*pts), style, color=color, label=f"{case}, {dist}")
    if hot:
        ax.axhline(sum(hot) / len(hot) / 1e6, color="green", label="one hot dictionary")
    ax.set_xscale("log")
    ax.set_xlabel("distinct dictionaries (pools)")
    ax.set_ylabel("million records / s (one core)")
    ax.set_title("Decoding single loghub records, 16 KiB dictionaries")
    ax.legend(fontsize=8)
    ax.grid(True, alpha=0.3)
    fig.tight_layout()
    fig.savefig(out, dpi=100)


def hot_vs_cold(rows, out):
    """Bars per unit and dictionary size: none, hot, cold plain, dictlog (uniform)."""
    groups = []
    for r in rows:
        key = (r["unit"], int(r["dict_bytes"]))
        if r["case"] != "none" and r["records_per_s"] != "0" and key not in groups:
            groups.append(key)
    most = max((int(r["dicts"]) for r in rows if r["case"] == "cold_plain"), default=0)
    cases = [("hot", "uniform", 1), ("cold_plain", "uniform", most),
             ("dictlog_group_prefetch", "uniform", most)]
    fig, ax = plt.subplots(figsize=(max(6, 1.4 * len(groups)), 5))
    width = 0.8 / len(cases)
    for i, (case, dist, dicts) in enumerate(cases):
        values = []
        for unit, dict_bytes in groups:
            match = [float(r["records_per_s"]) for r in rows
                     if r["unit"] == unit and int(r["dict_bytes"]) == dict_bytes
                     and r["case"] == case and r["dist"] == dist
                     and int(r["dicts"]) == dicts]
            values.append(match[-1] / 1e6 if match else 0)
        ax.bar([g + i * width for g in range(len(groups))], values, width,
               label=f"{case} ({dicts} dict{'s' if dicts > 1 else ''})")
    ax.set_xticks([g + width for g in range(len(groups))])
    ax.set_xticklabels([f"{u}\n{b // 1024} KiB dict" for u, b in groups], fontsize=8)
    ax.set_ylabel("million records / s")
    ax.set_title("Hot vs cold dictionaries vs dictlog's path (uniform)")
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(out, dpi=100)


def main(argv):
    if len(argv) != 3:
        print(__doc__, file=sys.stderr)
        return 2
    rows = load(argv[1])
    speed_vs_dicts(rows, argv[2] + "-speed-vs-dicts.png")
    hot_vs_cold(rows, argv[2] + "-hot-vs-cold.png")
    print(f"wrote {argv[2]}-speed-vs-dicts.png and {argv[2]}-hot-vs-cold.png")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
