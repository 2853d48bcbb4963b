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
        rows = list(csv.DictReader(f))
    for r in rows:  # CSVs from before dictionary modes: every dictionary was full.
        r.setdefault("dict_mode", "full" if r["dict_bytes"] != "0" else "-")
    return rows


MODE_COLORS = {"full": "tab:blue", "compact": "tab:red", "compact5h": "tab:purple",
               "content": "tab:gray"}


def speed_vs_dicts(rows, out):
    """records/s of single records (16 KiB dictionary) against the dictionary count."""
    recs = [r for r in rows if r["unit"] == "record" and r["dict_bytes"] == "16384"]
    hot = [float(r["records_per_s"]) for r in recs
           if r["case"] == "hot" and r["dict_mode"] == "full"]
    fig, ax = plt.subplots(figsize=(8, 5))
    for mode in sorted({r["dict_mode"] for r in recs}):
        for case, dist, style in [("cold_plain", "uniform", "o-"),
                                  ("cold_plain", "zipf:0.99", "o:"),
                                  ("dictlog", "zipf:0.99", "s--")]:
            pts = sorted((int(r["dicts"]), float(r["records_per_s"]) / 1e6)
                         for r in recs if r["case"] == case and r["dist"] == dist
                         and r["dict_mode"] == mode)
            if pts:
                ax.plot(*zip(*pts), style, color=MODE_COLORS.get(mode, "black"),
                        label=f"{mode}: {case}, {dist}")
    if hot:
        ax.axhline(sum(hot) / len(hot) / 1e6, color="green",
                   label="one hot full dictionary")
        ax.axhline(0.7 * sum(hot) / len(hot) / 1e6, color="green", linestyle=":",
                   label="70% of it (Zipf target)")
    ax.set_xscale("log")
    ax.set_xlabel("distinct dictionaries (pools)")
    ax.set_ylabel("million records / s (one core)")
    ax.set_title("Decoding single loghub records, 16 KiB dictionaries")
    ax.legend(fontsize=8)
    ax.grid(True, alpha=0.3)
    fig.tight_layout()
    fig.savefig(out, dpi=100)


def ratio_vs_cold_speed(rows, out):
    """Stored ratio against cold records/s (uniform, plain zstd) per dictionary form,
    one point per dictionary count: the trade-off compact dictionaries make."""
    recs = [r for r in rows if r["unit"] == "record" and r["case"] == "cold_plain"
            and r["dist"] == "uniform"]
    fig, ax = plt.subplots(figsize=(8, 5))
    for mode in sorted({r["dict_mode"] for r in recs}):
        pts = sorted((int(r["dicts"]), float(r["records_per_s"]) / 1e6, float(r["ratio"]))
                     for r in recs if r["dict_mode"] == mode)
        if not pts:
            continue
        ax.plot([p[1] for p in pts], [p[2] for p in pts], "o-",
                color=MODE_COLORS.get(mode, "black"), label=mode)
        for dicts, speed, ratio in pts:
            ax.annotate(str(dicts), (speed, ratio), fontsize=7, xytext=(3, 3),
                        textcoords="offset points")
    ax.set_xscale("log")
    ax.set_xlabel("million records / s, cold dictionaries, uniform (labels: dictionaries)")
    ax.set_ylabel("stored ratio (loghub, 16 KiB dictionary)")
    ax.set_title("Ratio vs cold decoding speed by dictionary form")
    ax.legend(fontsize=8)
    ax.grid(True, alpha=0.3)
    fig.tight_layout()
    fig.savefig(out, dpi=100)


def hot_vs_cold(rows, out):
    """Bars per unit and dictionary size: none, hot, cold plain, dictlog (uniform)."""
    rows = [r for r in rows if r["dict_mode"] in ("full", "-")]
    groups = []
    for r in rows:
        key = (r["unit"], int(r["dict_bytes"]))
        if r["case"] != "none" and r["records_per_s"] != "0" and key not in groups:
            groups.append(key)
    most = max((int(r["dicts"]) for r in rows if r["case"] == "cold_plain"), default=0)
    cases = [("hot", "uniform", 1), ("cold_plain", "uniform", most),
             ("dictlog", "uniform", most)]
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
    ratio_vs_cold_speed(rows, argv[2] + "-ratio-vs-cold-speed.png")
    print(f"wrote {argv[2]}-speed-vs-dicts.png, {argv[2]}-hot-vs-cold.png and "
          f"{argv[2]}-ratio-vs-cold-speed.png")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
