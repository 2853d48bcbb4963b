"""Geometric means over the loghub files of partial_decode.csv, as a markdown table."""
import collections
import csv
import math
import sys

rows = list(csv.DictReader(open(sys.argv[1])))
groups = collections.defaultdict(list)
for r in rows:
    groups[(int(r["block_bytes"]), r["piece_bytes"])].append(r)


def order(key):
    block, piece = key
    return (block, 0 if piece == "whole" else 1, -int(piece) if piece != "whole" else 0)


def gmean(rs, field):
    return math.exp(sum(math.log(float(r[field])) for r in rs) / len(rs))


base = {}
print("| frame bytes | zstd blocks in the frame | ratio | whole decode us | decode stopped at the entry, us | stopped / one-block whole |")
print("|---:|---|---:|---:|---:|---:|")
for key in sorted(groups, key=order):
    block, piece = key
    rs = groups[key]
    if piece == "whole":
        base[block] = (gmean(rs, "ratio"), gmean(rs, "whole_decode_us"))
    print("| %d | %s | %.3f (%+.1f%%) | %.2f | %.2f | %.2f |" % (
        block, "one (as stored today)" if piece == "whole" else "one per %s B" % piece,
        gmean(rs, "ratio"), 100 * (gmean(rs, "ratio") / base[block][0] - 1),
        gmean(rs, "whole_decode_us"), gmean(rs, "stopped_decode_us"),
        gmean(rs, "stopped_decode_us") / base[block][1]))
