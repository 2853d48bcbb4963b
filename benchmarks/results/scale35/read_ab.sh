#!/usr/bin/env bash
# read_ab.sh BIN_A BIN_B ROUNDS: record+dict reads at compare's scale with two dictlogd
# builds, alternating which runs first (A B, then B A). Per run: dictlogd (BIN's, a
# 32 MiB block cache) on 127.0.0.1 port 0, 100 copies of loghub loaded, every pool's
# dictionary, `recompress` of every pool, `dictlog flush`; then dictlog-bench read,
# uniform ids, 32 calls in flight on 4 connections: MultiGet(64) 5 s to warm up, 10 s
# measured, then unary Get 10 s; prints records/s, ops/s and dictlogd's peak RSS. Each
# server is stopped by its pid. BIN dirs hold dictlogd, dictlog, dictlog-bench (-c opt).
set -euo pipefail
a=$1 b=$2 rounds=$3
logs=/work/shared/data/loghub
work=$(mktemp -d /tmp/read_ab.XXXX)
pid=
trap '[[ -n "$pid" ]] && kill -KILL "$pid" 2>/dev/null; rm -rf "$work"' EXIT
source "$(dirname "$0")/../ingest_bound/server_lib.sh"
one() {
  local bin=$1 tag=$2 dir=$work/run
  start "$dir" "$bin/dictlogd" --listen=127.0.0.1:0 --data_dir="$dir/db" \
    --recompress_records_per_second=10000000 --block_cache_mb=32 --shutdown_notice_seconds=0
  "$bin/dictlog-bench" load --server=127.0.0.1:$port --dir=$logs --copies=100 \
    --ids_out="$dir/ids" >/dev/null 2>&1
  final_form
  local read=("$bin/dictlog-bench" read --server=127.0.0.1:$port --ids="$dir/ids"
              --dist=uniform --concurrency=32 --connections=4)
  "${read[@]}" --op=multiget --batch=64 --duration=5s >/dev/null 2>&1
  "${read[@]}" --op=multiget --batch=64 --duration=10s >"$dir/multiget.txt" 2>&1
  "${read[@]}" --op=get --duration=10s >"$dir/get.txt" 2>&1
  echo "$tag multiget $(grep -o '[0-9]* records/s' "$dir/multiget.txt" | tail -1)" \
       "get $(grep -o '[0-9]* ops/s' "$dir/get.txt" | tail -1)" \
       "peak rss $(awk '/VmHWM/{print $2}' /proc/$pid/status) kB"
  stop
}
for r in $(seq "$rounds"); do
  if (( r % 2 == 1 )); then one "$a" A; one "$b" B; else one "$b" B; one "$a" A; fi
done
