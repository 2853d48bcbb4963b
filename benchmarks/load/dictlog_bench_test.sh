#!/usr/bin/env bash
# Smoke test of dictlog-bench: the real dictlogd on 127.0.0.1 port 0, `load` of the
# loghub files, then `read --duration=2s` with Get and with MultiGet (Zipf), each
# writing --json; python3 checks ops > 0, no errors, ordered percentiles. Also: usage
# errors exit 2. Not a timed test: it checks that the tool works, not how fast.
set -euo pipefail

work="${TEST_TMPDIR}/bench"
rm -rf "$work" && mkdir -p "$work"
source "${TEST_SRCDIR}/${TEST_WORKSPACE:-dictlog}/tests/e2e/server_lib.sh"
bench="$runfiles/benchmarks/dictlog-bench"

start_server

"$bench" load --server="$server" --dir="$logs" --copies=2 --ids_out="$work/ids" \
  >"$work/load.out"
cat "$work/load.out"
lines=$(cat "$logs"/*.log | wc -l)
ids=$(wc -l <"$work/ids")
# Two copies of every line (a file without a final newline has one more line).
(( ids >= 2 * lines )) || fail "expected at least $((2 * lines)) ids, got $ids"
grep -q "ids in $work/ids" "$work/load.out" || fail "load must print where the ids are"
[[ $(sort "$work/ids" | uniq -d | wc -l) -eq 0 ]] || fail "duplicate ids"

check_json() {
  /usr/bin/python3 - "$1" "$2" <<'PY'
import json, sys
report = json.load(open(sys.argv[1]))
want_records = int(sys.argv[2])
lat = report["latency_us"]
assert report["ops"] > 0, report
assert report["errors"] == 0 and report["errors_by_code"] == {}, report
assert report["records"] == report["ops"] * want_records, report
assert report["ops_per_s"] > 0 and report["raw_mb_per_s"] > 0, report
assert 0 < lat["p50"] <= lat["p90"] <= lat["p99"] <= lat["p999"] <= lat["max"], lat
assert lat["count"] == report["ops"] - report["appends"], report
print("ok:", sys.argv[1], report["ops"], "ops", report["records_per_s"], "records/s")
PY
}

"$bench" read --server="$server" --ids="$work/ids" --duration=2s --concurrency=8 \
  --op=get --json="$work/get.json" 2>"$work/get.err"
cat "$work/get.err"
grep -q "ops/s" "$work/get.err" || fail "no progress line on stderr"
check_json "$work/get.json" 1

"$bench" read --server="$server" --ids="$work/ids" --duration=2s --concurrency=8 \
  --op=multiget --batch=64 --dist=zipf:0.99 --json="$work/multiget.json"
check_json "$work/multiget.json" 64

# --max_ops bounds the run.
"$bench" read --server="$server" --ids="$work/ids" --max_ops=100 --concurrency=4 \
  --json="$work/max.json" >/dev/null 2>&1
/usr/bin/python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); assert r["ops"]==100, r' \
  "$work/max.json" || fail "--max_ops=100 must make exactly 100 calls"

# --mix: appends of single records, reported apart; they land in their own category.
"$bench" read --server="$server" --ids="$work/ids" --max_ops=400 --concurrency=4 \
  --mix=read:80,append:20 --append_category=bench-mix --json="$work/mix.json" >/dev/null 2>&1
/usr/bin/python3 -c 'import json,sys; r=json.load(open(sys.argv[1]));
assert r["ops"] == 400 and 20 < r["appends"] < 160 and r["errors"] == 0, r
assert r["append_latency_us"]["count"] == r["appends"], r
assert r["latency_us"]["count"] == 400 - r["appends"], r' "$work/mix.json" ||
  fail "--mix: $(cat "$work/mix.json")"
[[ -n "$("$dictlog" --server="$server" scan --category=bench-mix --limit=1)" ]] ||
  fail "--mix appended nothing to bench-mix"

# Missing ids are counted by code, not fatal.
printf 'HDFS/1\nHDFS/999999999\n' >"$work/some_missing"
"$bench" read --server="$server" --ids="$work/some_missing" --max_ops=50 --concurrency=2 \
  --json="$work/missing.json" >/dev/null 2>&1
/usr/bin/python3 -c 'import json,sys; r=json.load(open(sys.argv[1]));
assert r["errors"] > 0 and set(r["errors_by_code"]) == {"NOT_FOUND"}, r' \
  "$work/missing.json" || fail "NOT_FOUND must be counted by code"

set +e
"$bench" read --server="$server" --ids="$work/ids" --op=scan 2>"$work/err"; code=$?
[[ $code -eq 2 ]] || fail "bad --op: exit $code"
grep -q -- "--op must be get or multiget" "$work/err" || fail "bad --op message: $(cat "$work/err")"
"$bench" read --server="$server" --ids="$work/ids" --dist=zipf:x >/dev/null 2>&1
[[ $? -eq 2 ]] || fail "bad --dist must be a usage error"
"$bench" frobnicate >/dev/null 2>&1
[[ $? -eq 2 ]] || fail "unknown command must be a usage error"
"$bench" read --server="$server" --frobnicate >/dev/null 2>&1
[[ $? -eq 2 ]] || fail "an unknown flag must be a usage error"
"$bench" read --server="$server" --concurrency=many >/dev/null 2>&1
[[ $? -eq 2 ]] || fail "a malformed flag value must be a usage error"
set -e
"$bench" --help >"$work/help"  # Exits 0.
grep -q -- "--concurrency" "$work/help" || fail "--help lists the flags"
grep -q "dictlog-bench read --server" "$work/help" || fail "--help shows the usage"
"$bench" --version | grep -q "^dictlog-bench (dictlog .*): gRPC 1\." || fail "--version"

# A leading ~/ in a path flag is the home directory.
mkdir -p "$work/home"
printf 'HDFS/1\n' >"$work/home/one.ids"
HOME="$work/home" "$bench" read --server="$server" '--ids=~/one.ids' --max_ops=5 \
  --concurrency=1 '--json=~/one.json' >/dev/null 2>&1 || fail "--ids=~/one.ids"
[[ -s "$work/home/one.json" ]] || fail "--json=~/one.json not written to \$HOME"

stop_server
echo "dictlog_bench_test: all checks passed"
