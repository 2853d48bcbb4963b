#!/usr/bin/env python3
"""size_winners.py LOG...: which dictionary size won dictlogd's automatic trainings.

Reads dictlogd server logs (the "trained dictionary N (...; tried: SIZE/SETTING RATIOx
(kept), ...; S s)" lines) and, for every training that tried more than one size,
counts whether a candidate of the largest size tried was kept, grouped by that size
and by whether COVER was among the candidates (samples up to 256 KiB). Prints each
training a smaller size won, with the best ratio of each size. Used by ADR 0050.
"""
import collections
import re
import sys

TRIED = re.compile(r"tried: (.*); [0-9.]+ s\)")
CANDIDATE = re.compile(r"(\d+)/(\S+) ([0-9.]+)x( \(kept\))?")


def main(paths):
    groups = collections.Counter()
    largest_won = collections.Counter()
    for path in paths:
        with open(path, errors="replace") as f:
            for line in f:
                if "trained" not in line:
                    continue
                m = TRIED.search(line)
                if not m:
                    continue
                cands = CANDIDATE.findall(m.group(1))
                sizes = sorted({int(c[0]) for c in cands}, reverse=True)
                kept = [c for c in cands if c[3]]
                if len(sizes) < 2 or not kept:
                    continue
                cover = any(c[1].startswith("cover") for c in cands)
                key = (sizes[0], cover)
                groups[key] += 1
                if int(kept[0][0]) == sizes[0]:
                    largest_won[key] += 1
                    continue
                best = {s: max(float(c[2]) for c in cands if int(c[0]) == s) for s in sizes}
                print(f"smaller size won in {path}: {best}")
    print("largest size tried, COVER tried: trainings, largest size kept")
    for key in sorted(groups, reverse=True):
        print(f"{key[0]:>6} {'cover' if key[1] else 'no cover':>8}: {groups[key]:>4} "
              f"{largest_won[key]:>4}")
    print(f"total: {sum(groups.values())} trainings, largest kept in "
          f"{sum(largest_won.values())}")


if __name__ == "__main__":
    main(sys.argv[1:])
