#!/usr/bin/env bash
# Smoke test of frames_bench: one copy of loghub per storage mode, 1 s per case, two
# client threads; checks the CSV's six cases, that no read failed, and that frames, and
# packed frames more so, are fewer bytes than payloads in record mode.
set -euo pipefail
runfiles="${TEST_SRCDIR}/${TEST_WORKSPACE}"
csv="$TEST_TMPDIR/frames_bench.csv"
"$runfiles/benchmarks/frames_bench" --dictlogd="$runfiles/server/daemon/dictlogd" \
  --dir="$runfiles/../loghub" --copies=1 --duration=1s --threads=2 \
  --work_dir="$TEST_TMPDIR/data" --csv="$csv" --dictionary_wait=30s
fail() { echo "frames_bench_test: $*" >&2; exit 1; }
[[ $(wc -l <"$csv") -eq 7 ]] || fail "expected a header and six rows in $csv"
for c in "record,server" "record,client" "record,client-packed" "block,server" \
    "block,client" "block,client-packed"; do
  grep -q "^$c," "$csv" || fail "no row $c"
done
# Every row: 20,000 records per mode, some records/s, no errors (last column).
awk -F, 'NR > 1 && ($3 != 20000 || $6 <= 0 || $10 != 0) { exit 1 }' "$csv" ||
  fail "a case read nothing or failed: $(cat "$csv")"
# Client-side decoding sends fewer bytes per record in record mode.
awk -F, '$1 == "record" && $2 == "server" { s = $9 } $1 == "record" && $2 == "client" { c = $9 }
  $1 == "record" && $2 == "client-packed" { p = $9 }
  END { exit !(c < s && p < c) }' "$csv" ||
  fail "frames (packed: more so) were not smaller than payloads: $(cat "$csv")"
echo "frames_bench_test: OK"
