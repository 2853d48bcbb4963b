#!/usr/bin/env python3
"""Draws frames_bench's CSV: server CPU per million records, response bytes per record
and records/s, server-side vs client-side decoding (per-result and packed
MultiGetFrames responses), record and block mode.

    python3 benchmarks/plot_frames_bench.py benchmarks/results/frames_bench.csv
writes frames_bench.png next to the CSV.
"""
import csv
import os
import sys

import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


COLORS = {"server": "#4c72b0", "client": "#dd8452", "client-packed": "#55a868"}


def main(path):
    with open(path) as f:
        rows = list(csv.DictReader(f))
    panels = [("server_cpu_s_per_million", "server CPU s / million records"),
              ("bytes_per_record", "response bytes / record"),
              ("records_per_s", "records / s"),
              ("client_cpu_us_per_record", "client CPU us / record")]
    fig, axes = plt.subplots(1, len(panels), figsize=(18, 4.5))
    for ax, (column, title) in zip(axes, panels):
        labels = ["%s\n%s" % (r["mode"], r["decoding"]) for r in rows]
        ax.bar(labels, [float(r[column]) for r in rows],
               color=[COLORS.get(r["decoding"], "#888888") for r in rows])
        ax.set_title(title)
        ax.tick_params(axis="x", labelsize=7)
    fig.suptitle("MultiGet(%s): server-side vs client-side decoding (%s records per mode)"
                 % (rows[0]["batch"], rows[0]["records_per_mode"]))
    fig.tight_layout()
    out = os.path.join(os.path.dirname(path), "frames_bench.png")
    fig.savefig(out, dpi=90)
    print(out)


if __name__ == "__main__":
    main(sys.argv[1])
