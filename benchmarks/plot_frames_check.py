#!/usr/bin/env python3
"""Draws the dictionary-check comparison (ADR 0047): frames_bench's record-mode rows,
rounds of the dictlogd before the check (old_N.csv) and with it (new_N.csv) in one
directory; medians over the rounds of response bytes per record and server CPU per
million records, per decoding form.

    /usr/bin/python3 benchmarks/plot_frames_check.py benchmarks/results/frames_check
writes frames_check.png into that directory and prints the medians.
"""
import csv
import glob
import os
import statistics
import sys

import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

FORMS = ("server", "client", "client-packed")
METRICS = (("bytes_per_record", "response bytes / record"),
           ("server_cpu_s_per_million", "server CPU s / M records"))


def medians(directory, build):
    values = {}
    for path in sorted(glob.glob(os.path.join(directory, build + "_*.csv"))):
        with open(path) as f:
            for row in csv.DictReader(f):
                if row["mode"] != "record":
                    continue
                for metric, _ in METRICS:
                    values.setdefault((row["decoding"], metric), []).append(float(row[metric]))
    return {key: statistics.median(v) for key, v in values.items()}


def main(directory):
    old, new = medians(directory, "old"), medians(directory, "new")
    fig, axes = plt.subplots(1, len(METRICS), figsize=(10, 4))
    for ax, (metric, label) in zip(axes, METRICS):
        xs = range(len(FORMS))
        ax.bar([x - 0.2 for x in xs], [old[(f, metric)] for f in FORMS], 0.4, label="before")
        ax.bar([x + 0.2 for x in xs], [new[(f, metric)] for f in FORMS], 0.4,
               label="with the check")
        ax.set_xticks(list(xs))
        ax.set_xticklabels(FORMS)
        ax.set_title(label)
        for form in FORMS:
            print(f"{metric} {form}: before {old[(form, metric)]:.2f}, "
                  f"with the check {new[(form, metric)]:.2f}")
    axes[0].legend()
    fig.suptitle("MultiGet(64), record mode: medians of the rounds")
    fig.tight_layout()
    fig.savefig(os.path.join(directory, "frames_check.png"), dpi=90)


if __name__ == "__main__":
    main(sys.argv[1])
