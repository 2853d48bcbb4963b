#!/usr/bin/env bash
# What append times (ADR 0015) cost on disk: loads loghub into a dictlogd without and
# one with the time index, at a given batch size, and prints the live SST bytes of
# each store after a restart (which writes the memtables into table files) and the
# ratio.
#   benchmarks/append_time_cost.sh BEFORE_DIR AFTER_DIR LOGHUB_DIR BATCH [dictlogd flags...]
# BEFORE_DIR and AFTER_DIR hold a dictlogd; AFTER_DIR also dictlog-bench. One line per
# build: "label batch raw_bytes sst_bytes sst_ratio". Loopback only; every server is
# stopped by its pid.
set -euo pipefail
before="$1"; after="$2"; loghub="$3"; batch="$4"; shift 4
work="$(mktemp -d)"
server_pid=
trap '[[ -n "$server_pid" ]] && kill -KILL "$server_pid" 2>/dev/null; rm -rf "$work"' EXIT

raw=$(cat "$loghub"/*.log | tr -d '\r' | wc -c)
lines=$(cat "$loghub"/*.log | wc -l)
for label in before after; do
  dir="$before"; [[ "$label" == after ]] && dir="$after"
  data="$work/$label"
  start() {
    rm -f "$work/port.$label"
    "$dir/dictlogd" --listen=127.0.0.1:0 --data_dir="$data" --port_file="$work/port.$label" \
      "$@" >>"$work/$label.log" 2>&1 &
    server_pid=$!
    for _ in $(seq 1 300); do [[ -s "$work/port.$label" ]] && break; sleep 0.1; done
  }
  stop() { kill -TERM "$server_pid"; wait "$server_pid"; server_pid=; }
  start "$@"
  "$after/dictlog-bench" load --server="127.0.0.1:$(cat "$work/port.$label")" \
    --dir="$loghub" --batch_records="$batch" --ids_out="$work/ids.$label" >/dev/null 2>&1
  stop
  start "$@"  # Opening replays the write-ahead log into table files (as compare.py).
  stop
  sst=$(find "$data" -name '*.sst' -printf '%s\n' | awk '{s += $1} END {print s}')
  # Raw payload bytes: the files' bytes less one newline per line (and the \r dropped).
  awk -v l="$label" -v b="$batch" -v r="$((raw - lines))" -v s="$sst" \
    'BEGIN {printf "%s batch=%s raw_bytes=%d sst_bytes=%d sst_ratio=%.4f\n", l, b, r, s, r / s}'
done
