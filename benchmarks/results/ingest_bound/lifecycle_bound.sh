#!/usr/bin/env bash
# lifecycle_bound.sh BIN_DIR [ROUNDS]: what record+dict's ingest costs beyond its append
# path. Per round, one after another on this machine (RESULTS.md "What bounds record+dict
# ingest now"), each on 127.0.0.1 port 0 and stopped by its pid:
#   record+dict   dictlogd as compare's scale mode runs it: 100 copies of loghub, wait for
#                 every pool's dictionary, recompress every pool, dictlog flush;
#   rocksdb_dict  compare_server: the same load, then SIGUSR1 (flush, full compaction);
#   imported      dictlogd --auto_train=false with the record+dict run's final dictionaries
#                 imported and active before the load: no training, nothing stored raw,
#                 nothing to re-encode; the load, then dictlog flush.
# BIN_DIR holds dictlogd, dictlog, dictlog-bench and compare_server (bazel -c opt).
set -euo pipefail
bin=$1 rounds=${2:-3}
logs=/work/shared/data/loghub
work=$(mktemp -d /tmp/lifecycle_bound.XXXX)
pid=
trap '[[ -n "$pid" ]] && kill -KILL "$pid" 2>/dev/null; rm -rf "$work"' EXIT
source "$(dirname "$0")/server_lib.sh"
load() { "$bin/dictlog-bench" load --server=127.0.0.1:$port --dir=$logs --copies=100 \
           --ids_out="$1/ids" >/dev/null 2>&1; }
pools() { cli --format=json pools | python3 -c 'import json,sys
for l in sys.stdin:
  d = json.loads(l)
  if "pool" in d: print(d["pool"], d["active_dictionary_id"])'; }
for round in $(seq "$rounds"); do
  dir=$work/record; start "$dir" "$bin/dictlogd" --listen=127.0.0.1:0 --data_dir="$dir/db" \
    --recompress_records_per_second=10000000 --block_cache_mb=31 --shutdown_notice_seconds=0
  s=$(now); load "$dir"; m=$(now)
  final_form; e=$(now)
  mkdir -p "$work/dicts"; pools >"$work/active"
  while read -r p id; do cli dict export --id="$id" --out="$work/dicts/$p.dict" >/dev/null 2>&1; done <"$work/active"
  stop
  echo "round $round record+dict: load $(secs "$s" "$m") s, final form $(secs "$m" "$e") s, ingest $(secs "$s" "$e") s"
  dir=$work/rocksdb; start "$dir" "$bin/compare_server" --backend=rocksdb_dict --data_dir="$dir/db" \
    --block_cache_mb=31 --stats_out="$dir/stats.json"
  s=$(now); load "$dir"; m=$(now)
  kill -USR1 "$pid"; while [[ ! -s "$dir/stats.json" ]]; do sleep 0.05; done; e=$(now)
  stop
  echo "round $round rocksdb_dict: load $(secs "$s" "$m") s, final form $(secs "$m" "$e") s, ingest $(secs "$s" "$e") s"
  dir=$work/imported; start "$dir" "$bin/dictlogd" --listen=127.0.0.1:0 --data_dir="$dir/db" \
    --auto_train=false --block_cache_mb=31 --shutdown_notice_seconds=0
  while read -r p id; do
    cli pool create "$p" >/dev/null
    cli dict import --pool="$p" --activate "$work/dicts/$p.dict" >/dev/null 2>&1
  done <"$work/active"
  s=$(now); load "$dir"; m=$(now); cli flush >/dev/null; e=$(now)
  stop
  echo "round $round imported: load $(secs "$s" "$m") s, final form $(secs "$m" "$e") s, ingest $(secs "$s" "$e") s"
done
