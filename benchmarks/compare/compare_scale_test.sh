#!/usr/bin/env bash
# Smoke test of the comparison driver's scale mode (issue 19; not timed: it checks the
# code paths, not the speed): two loghub files, one copy, the block cache an eighth of
# the raw data (1 MiB at this size), uniform and Zipf(0.99) reads, reads with the OS
# page cache dropped (then refilled), ingest end to end, peak RSS, and issue 19's
# targets in the JSON.
# RocksDB's own dictionaries with 16 KiB blocks and dictlog's 16 KiB blocks + pool
# dictionaries beside record mode and the null handler; servers on 127.0.0.1 port 0.
set -euo pipefail
runfiles="${TEST_SRCDIR}/${TEST_WORKSPACE:-dictlog}"
work="${TEST_TMPDIR}/compare_scale"
rm -rf "$work" && mkdir -p "$work"
fail() { echo "FAIL: $*" >&2; exit 1; }

PYTHON=/usr/bin/python3 "$runfiles/benchmarks/compare/compare" \
  --dir="${TEST_SRCDIR}/loghub" --files=HDFS,Spark --mode=scale --copies=1 --duration=1s \
  --paired=2 --paired_duration=1s \
  --concurrency=4 --configs=record+dict,block16k+dict,rocksdb_dict16k,rocksdb_plain,null \
  --out="$work/out" >"$work/stdout" 2>"$work/stderr" ||
  { cat "$work/stderr"; fail "compare --mode=scale failed"; }
cat "$work/stdout"
grep -q "\[compare .*\] block cache 1 MiB (raw [0-9]* bytes / 8)" "$work/stderr" ||
  fail "no block cache line: $(grep 'block cache' "$work/stderr")"
grep -q "^| config | SST ratio | Get ops/s | MultiGet(64) rec/s | Zipf Get ops/s" \
  "$work/stdout" || fail "no scale table"
grep -q "^| Get ops/s record+dict / null | 2 | " "$work/stdout" || fail "no paired reads row"
grep -q "^| Get ops/s rocksdb_plain / null | 2 | [0-9.]* | [0-9.]*-[0-9.]* | - | bound |" \
  "$work/stdout" || fail "no paired bound row"
grep -q "\[compare .*\] paired get: record+dict and null, pair 2/2" "$work/stderr" ||
  fail "no paired progress line"
# After the page-cache-dropped reads every server's files are read back into memory,
# so the next round's reads start as the first did.
grep -q "\[compare .*\] record+dict: page cache refilled ([1-9][0-9]* bytes read)" \
  "$work/stderr" || fail "no page cache refill: $(grep refill "$work/stderr")"

/usr/bin/python3 - "$work/out" <<'PY'
import json, os, sys
out = sys.argv[1]
summary = json.load(open(os.path.join(out, "compare.json")))
assert summary["mode"] == "scale" and summary["block_cache_mb"] == 1, summary["block_cache_mb"]
assert summary["dists"] == "uniform,zipf:0.99" and summary["page_cache"] == "drop", summary
conditions = summary["scale_conditions"]
assert conditions["met"] is False and conditions["records"] < 2000000, conditions
by = {r["config"]: r for r in summary["rows"]}
assert list(by) == ["record+dict", "block16k+dict", "rocksdb_dict16k", "rocksdb_plain",
                   "null"], list(by)
for name, r in by.items():
    assert r["get_errors"] == 0 and r["multiget_errors"] == 0, r
    assert r["zipf_get_ops_s"] > 0 and r["zipf_multiget_records_s"] > 0, r
    assert r["ingest_s"] >= r["load_s"] > 0 and r["finalize_s"] >= 0, r
    assert abs(r["ingest_records_s"] - r["records"] / r["ingest_s"]) < 0.1 * r["ingest_records_s"], r
    assert 10 << 20 < r["peak_rss_bytes"] < 4 << 30, r
    if name == "null":
        assert r["nocache_get_ops_s"] == "", r  # nothing stored: no page cache to drop
    else:
        assert r["nocache_get_ops_s"] > 0 and r["nocache_multiget_records_s"] > 0, r
assert by["block16k+dict"]["block_bytes"] == 16384 and by["block16k+dict"]["dictionary_bytes"] > 0
rocks = summary["compare_server"]["rocksdb_dict16k"]
assert rocks["compression"] == "ZSTD" and "max_dict_bytes=16384" in rocks["compression_options"]
targets = {t["target"]: t for t in summary["targets"]}
measured = ["sst_block16k_dict_vs_rocksdb_dict16k", "get_vs_null", "peak_rss:record+dict",
            "peak_rss:block16k+dict"]
for name in measured:
    assert targets[name]["measured"] > 0 and targets[name]["pass"] in (True, False), targets[name]
for name in ("sst_block4k_dict_vs_rocksdb_dict", "multiget_block2k_dict_vs_rocksdb_dict",
             "multiget_record_dict_vs_rocksdb_dict", "ingest_record_dict_vs_rocksdb_dict",
             "ingest_block4k_dict_vs_rocksdb_dict"):
    assert targets[name]["measured"] is None and targets[name]["pass"] is None, targets[name]
assert "peak_rss:rocksdb_dict16k" not in targets
# Paired reads: only those whose two configurations ran: the Get target (record+dict,
# null) and two bounds (record+dict and null against rocksdb_plain).
paired = summary["paired"]
assert [p["target"] for p in paired] == [
    "get_vs_null", "bound_multiget_record_dict_vs_rocksdb_plain",
    "bound_get_rocksdb_plain_vs_null"], paired
assert summary["paired_duration"] == "1s", summary["paired_duration"]
for p in paired:
    assert len(p["ratios"]) == 2 and min(p["a_values"] + p["b_values"]) > 0, p
    assert p["low"] <= p["median"] <= p["high"], p
assert paired[0]["pass"] in (True, False), paired[0]
assert paired[1]["needed"] is None and paired[1]["pass"] is None, paired[1]
print("ok: scale mode,", len(by), "configurations")
PY
echo "compare_scale_test: all checks passed"
