#!/usr/bin/env bash
# concurrent_loaders.sh BIN_DIR LOADERS [ROUNDS]: record+dict's and rocksdb_dict's ingest
# of 2,000,000 loghub records by LOADERS `dictlog-bench load` processes at once (each
# --copies=100/LOADERS: the same copies, so every server gets the same 2,000,000 records),
# against compare's scale mode, whose one loader keeps one call in flight. Per round,
# alternating which server goes first, each on 127.0.0.1 port 0 and stopped by its pid:
#   record+dict   dictlogd; the loads, wait for every pool's dictionary, recompress every
#                 pool, dictlog flush (compare's final form);
#   rocksdb_dict  compare_server; the loads, then SIGUSR1 (flush, full compaction).
# Prints a line a server and round: load, final form, ingest seconds and the server's CPU
# seconds (from /proc). RESULTS.md "Ingest with loaders at once".
# BIN_DIR holds dictlogd, dictlog, dictlog-bench and compare_server (bazel -c opt).
set -euo pipefail
bin=$1 loaders=$2 rounds=${3:-3}
copies=$(( 100 / loaders ))
logs=/work/shared/data/loghub
work=$(mktemp -d /tmp/concurrent_loaders.XXXX)
pid=
trap '[[ -n "$pid" ]] && kill -KILL "$pid" 2>/dev/null; rm -rf "$work"' EXIT
source "$(dirname "$0")/server_lib.sh"
cpu() { local s; read -r -a s < "/proc/$pid/stat"; echo "$(( s[13] + s[14] ))"; }
cpu_secs() { echo "($2 - $1) / $(getconf CLK_TCK)" | bc -l | cut -c1-5; }
load() {  # LOADERS loads at once; fails if any fails
  local loader_pids=()
  for l in $(seq "$loaders"); do
    "$bin/dictlog-bench" load --server=127.0.0.1:$port --dir=$logs --copies=$copies \
      --ids_out="$1/ids.$l" >"$1/load.$l.log" 2>&1 &
    loader_pids+=($!)
  done
  for p in "${loader_pids[@]}"; do wait "$p"; done
}
report() {  # NAME START LOADED END CPU0 CPU1
  echo "round $round $1: load $(secs "$2" "$3") s, final form $(secs "$3" "$4") s," \
       "ingest $(secs "$2" "$4") s, server cpu $(cpu_secs "$5" "$6") s"
}
record() {
  local dir=$work/record
  start "$dir" "$bin/dictlogd" --listen=127.0.0.1:0 --data_dir="$dir/db" \
    --recompress_records_per_second=10000000 --block_cache_mb=31 --shutdown_notice_seconds=0
  local c0 s m e c1; c0=$(cpu); s=$(now); load "$dir"; m=$(now)
  final_form; e=$(now); c1=$(cpu)
  stop
  report "record+dict" "$s" "$m" "$e" "$c0" "$c1"
}
rocksdb() {
  local dir=$work/rocksdb
  start "$dir" "$bin/compare_server" --backend=rocksdb_dict --data_dir="$dir/db" \
    --block_cache_mb=31 --stats_out="$dir/stats.json"
  local c0 s m e c1; c0=$(cpu); s=$(now); load "$dir"; m=$(now)
  kill -USR1 "$pid"; while [[ ! -s "$dir/stats.json" ]]; do sleep 0.05; done; e=$(now); c1=$(cpu)
  stop
  report "rocksdb_dict" "$s" "$m" "$e" "$c0" "$c1"
}
echo "$loaders loaders x --copies=$copies; $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg)"
for round in $(seq "$rounds"); do
  if (( round % 2 == 1 )); then record; rocksdb; else rocksdb; record; fi
done
