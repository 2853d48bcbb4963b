#!/usr/bin/env bash
# Smoke test of the comparison driver (not timed: it checks that it works, not how
# fast): quick mode over two loghub files with three configurations (dictlog record
# + dictionaries, RocksDB's own dictionaries, the null handler), each server started
# by the driver on 127.0.0.1 port 0, two interleaved read rounds. Checks the outputs
# are well-formed, every configuration read back what it loaded with no read errors,
# and the targets JSON.
set -euo pipefail
runfiles="${TEST_SRCDIR}/${TEST_WORKSPACE:-dictlog}"
work="${TEST_TMPDIR}/compare"
rm -rf "$work" && mkdir -p "$work"
fail() { echo "FAIL: $*" >&2; exit 1; }

PYTHON=/usr/bin/python3 "$runfiles/benchmarks/compare/compare" \
  --dir="${TEST_SRCDIR}/loghub" --files=HDFS,Spark --mode=quick --duration=1s --rounds=2 \
  --concurrency=4 --configs=record+dict,rocksdb_dict,rocksdb_plain,null --out="$work/out" \
  >"$work/stdout" 2>"$work/stderr" || { cat "$work/stderr"; fail "compare failed"; }
cat "$work/stdout"
grep -q "\[compare .*\] record+dict: waiting for dictionaries" "$work/stderr" ||
  fail "no progress lines on stderr"
# dictlogd's final form ends with Admin.Flush, not a restart.
grep -q "\[compare .*\] record+dict: flushed: [1-9][0-9]* bytes of table files" "$work/stderr" ||
  fail "no flush of dictlogd's memtables: $(grep record+dict "$work/stderr")"
grep -q "^| config | stored bytes | ratio |" "$work/stdout" || fail "no markdown table"
cmp -s "$work/stdout" "$work/out/compare.md" || fail "compare.md differs from stdout"

/usr/bin/python3 - "$work/out" "${TEST_SRCDIR}/loghub" <<'PY'
import csv, json, os, sys
out, logs = sys.argv[1], sys.argv[2]
records = sum(len(open(os.path.join(logs, f), "rb").read().rstrip(b"\n").split(b"\n"))
              for f in ("HDFS.log", "Spark.log"))
rows = list(csv.DictReader(open(os.path.join(out, "compare.csv"))))
assert [r["config"] for r in rows] == ["record+dict", "rocksdb_dict", "rocksdb_plain", "null"], rows
for r in rows:
    assert int(r["records"]) == records, r
    assert int(r["get_errors"]) == 0 and int(r["multiget_errors"]) == 0, r
    assert float(r["get_ops_s"]) > 0 and float(r["multiget_records_s"]) > 0, r
    assert int(r["verified_records"]) > 100, r
    assert int(r["rounds"]) == 2, r
    assert float(r["get_ops_s_min"]) <= float(r["get_ops_s"]) <= float(r["get_ops_s_max"]), r
summary = json.load(open(os.path.join(out, "compare.json")))
by = {r["config"]: r for r in summary["rows"]}
assert by["record+dict"]["dictionary_bytes"] > 0, by["record+dict"]
assert 1.5 < by["record+dict"]["ratio"] < 20, by["record+dict"]
assert 1.5 < by["rocksdb_dict"]["ratio"] < 20, by["rocksdb_dict"]
assert by["null"]["stored_bytes"] == 0 and by["null"]["ratio"] == 0, by["null"]
# On disk: dictlogd's SSTs hold keys, index and filters besides the values.
assert by["record+dict"]["sst_bytes"] > by["record+dict"]["stored_bytes"], by["record+dict"]
assert by["rocksdb_dict"]["sst_bytes"] == by["rocksdb_dict"]["stored_bytes"], by["rocksdb_dict"]
rocks = summary["compare_server"]["rocksdb_dict"]
assert rocks["backend"] == "rocksdb_dict" and summary["compare_server"]["null"]["backend"] == "null"
assert rocks["compression"] == "ZSTD" and "max_dict_bytes=16384" in rocks["compression_options"], rocks
assert "zstd_max_train_bytes=1600000" in rocks["compression_options"], rocks
# rocksdb_plain: the same backend with uncompressed blocks, stored at about raw size.
plain = summary["compare_server"]["rocksdb_plain"]
assert plain["compression"] == "NoCompression", plain
assert 0.5 < by["rocksdb_plain"]["ratio"] < 1.2, by["rocksdb_plain"]
bounds = {b["bound"]: b["factor"] for b in summary["lookup_bounds"]}
for name in ("get_ops_s:record+dict_vs_rocksdb_plain", "multiget_records_s:null_vs_rocksdb_plain"):
    assert bounds[name] > 0, summary["lookup_bounds"]
markdown = open(os.path.join(out, "compare.md")).read()
assert "| read rate against rocksdb_plain | factor |" in markdown, markdown
targets = {t["target"]: t for t in summary["targets"]}
for name in ("multiget_records_vs_get", "get_vs_null"):
    assert targets[name]["measured"] > 0 and targets[name]["pass"] in (True, False), targets[name]
assert targets["record_vs_block16k_get"]["measured"] is None, "block16k was not run"
assert [v["config"] for v in summary["versus_rocksdb"]] == ["record+dict"], summary
for chart in summary["charts"]:
    assert open(chart, "rb").read(8) == b"\x89PNG\r\n\x1a\n", chart
print("ok:", len(rows), "configurations,", records, "records each,",
      len(summary["charts"]), "charts")
PY

# Usage errors exit 2 and name the problem.
set +e
PYTHON=/usr/bin/python3 "$runfiles/benchmarks/compare/compare" --dir=/nonexistent \
  --configs=record,bogus >/dev/null 2>"$work/err"; code=$?
set -e
[[ $code -eq 2 ]] || fail "unknown --configs: exit $code"
grep -q "bogus" "$work/err" || fail "unknown --configs message: $(cat "$work/err")"
echo "compare_test: all checks passed"
