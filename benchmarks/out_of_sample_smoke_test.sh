#!/bin/bash
# Smoke test of zstd_reference.py and out_of_sample.py: two small synthetic categories
# (one large enough to train, one not), real dictlogd/dictlog; checks both write rows.
set -euo pipefail
T="${TEST_TMPDIR:-$(mktemp -d)}"
# Run from the runfiles root (bazel test): server/daemon/dictlogd, client/cli/dictlog.
mkdir -p "$T/in"
for i in $(seq 1 3000); do
  printf 'INFO 2026-11-24 17:%02d:%02d node-%d block blk_%d served to 10.0.%d.%d\r\n' \
    $((i % 60)) $((i % 60)) $((i % 7)) $((i * 7919)) $((i % 5)) $((i % 200))
done > "$T/in/Big.log"
for i in $(seq 1 40); do printf 'small line %d\r\n' "$i"; done > "$T/in/Small.log"
/usr/bin/python3 benchmarks/zstd_reference.py "$T/in" --csv "$T/ref.csv" --json "$T/ref.json"
grep -q '^Big,1500,' "$T/ref.csv"
grep -q '^Small,20,' "$T/ref.csv"
/usr/bin/python3 benchmarks/out_of_sample.py "$T/in" --bin_dir="$PWD" --out_dir="$T/out"
grep -q '^Big,1500,' "$T/out/out_of_sample.csv"
grep -q '^Small,20,' "$T/out/out_of_sample.csv"
grep -q '^TOTAL,' "$T/out/out_of_sample.csv"
echo PASS
