#!/usr/bin/python3
"""Out-of-sample python-zstandard reference for issue 20 (dictionaries for small pools).

For each *.log file (one category per file): lines split into a first and a second
half (one trailing '\\r' stripped per line, as `dictlog append` does by default); a
dictionary is trained with train_dictionary(16384, first_half); each second-half line
is compressed alone at level 3 with it into a magicless frame (dict id and content size
written, no checksum). A category too small to train is compressed without a dictionary
(reported as dict=none). Prints a table; --csv/--json write the rows.
"""
import argparse
import csv
import json
import os
import sys

import zstandard as zstd

DICT_BYTES = 16384
LEVEL = 3


def read_lines(path):
    """The file's lines as bytes, without '\\n' and one trailing '\\r'."""
    with open(path, "rb") as f:
        data = f.read()
    lines = data.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    return [l[:-1] if l.endswith(b"\r") else l for l in lines]


def split_halves(lines):
    half = len(lines) // 2
    return lines[:half], lines[half:]


def reference_category(path, dict_bytes=DICT_BYTES, level=LEVEL):
    """One category's reference row (dict with raw, compressed, ratio, ...)."""
    first, second = split_halves(read_lines(path))
    dictionary, note = None, ""
    try:
        dictionary = zstd.train_dictionary(dict_bytes, first)
    except zstd.ZstdError as e:
        note = "too small to train (%s): no dictionary" % str(e).strip()
    params = zstd.ZstdCompressionParameters.from_level(
        level, format=zstd.FORMAT_ZSTD1_MAGICLESS, write_dict_id=True,
        write_content_size=True, write_checksum=False)
    cctx = zstd.ZstdCompressor(compression_params=params, dict_data=dictionary)
    raw = sum(len(l) for l in second)
    compressed = sum(len(cctx.compress(l)) for l in second)
    return {
        "category": os.path.splitext(os.path.basename(path))[0],
        "records": len(second),
        "raw_bytes": raw,
        "compressed_bytes": compressed,
        "ratio": raw / compressed if compressed else 0.0,
        "dict_bytes": len(dictionary.as_bytes()) if dictionary else 0,
        "note": note,
    }


def reference(directory, dict_bytes=DICT_BYTES, level=LEVEL):
    """Rows for every *.log in directory (sorted) plus a 'TOTAL' row."""
    names = sorted(n for n in os.listdir(directory) if n.endswith(".log"))
    rows = [reference_category(os.path.join(directory, n), dict_bytes, level)
            for n in names]
    raw = sum(r["raw_bytes"] for r in rows)
    comp = sum(r["compressed_bytes"] for r in rows)
    rows.append({"category": "TOTAL", "records": sum(r["records"] for r in rows),
                 "raw_bytes": raw, "compressed_bytes": comp,
                 "ratio": raw / comp if comp else 0.0,
                 "dict_bytes": sum(r["dict_bytes"] for r in rows), "note": ""})
    return rows


FIELDS = ["category", "records", "raw_bytes", "compressed_bytes", "ratio",
          "dict_bytes", "note"]


def print_table(rows, out=sys.stdout):
    out.write("%-12s %8s %11s %11s %7s %6s  %s\n" % (
        "category", "records", "raw", "compressed", "ratio", "dict", "note"))
    for r in rows:
        out.write("%-12s %8d %11d %11d %7.3f %6d  %s\n" % (
            r["category"], r["records"], r["raw_bytes"], r["compressed_bytes"],
            r["ratio"], r["dict_bytes"], r["note"]))


def write_csv(rows, path):
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=FIELDS)
        w.writeheader()
        w.writerows(rows)


def write_json(rows, path):
    with open(path, "w") as f:
        json.dump(rows, f, indent=2)
        f.write("\n")


def default_dir():
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    return os.path.join(root, "..", "shared", "data", "loghub")


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("directory", nargs="?", default=default_dir())
    p.add_argument("--dict_bytes", type=int, default=DICT_BYTES)
    p.add_argument("--level", type=int, default=LEVEL)
    p.add_argument("--csv")
    p.add_argument("--json")
    a = p.parse_args(argv)
    rows = reference(a.directory, a.dict_bytes, a.level)
    print_table(rows)
    if a.csv:
        write_csv(rows, a.csv)
    if a.json:
        write_json(rows, a.json)
    return 0


if __name__ == "__main__":
    sys.exit(main())
