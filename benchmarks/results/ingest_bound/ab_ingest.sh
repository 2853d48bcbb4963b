#!/usr/bin/env bash
# ab_ingest.sh BIN_A BIN_B ROUNDS [dictlogd flags...]: record+dict's ingest as compare's
# scale mode measures it (100 copies of loghub, every pool's dictionary, `recompress` of
# every pool, `dictlog flush`) with BIN_A's and BIN_B's dictlogd (each dir holds dictlogd,
# dictlog and dictlog-bench, bazel -c opt), alternating which runs first (A B, then B A);
# prints per run: load, final form and ingest seconds, dictlogd's CPU seconds (from
# /proc), stored bytes, and the CPU seconds of its live threads by name (dictlogd names
# its own: operations.md "Where the CPU goes"; an ended re-encode job's are in the total
# only), and the automatic trainings the server logged (count, and their seconds).
# LOGS=DIR and COPIES=N load another corpus (default: loghub, 100 copies); KEEP=DIR keeps
# each run's server log and per-pool stats there (A-1.log, A-1.pools, ...). 127.0.0.1
# port 0; each server stopped by its pid. Used by RESULTS.md "RocksDB's memtable insert
# hint, measured again" and "Scale mode on logs loghub does not have".
set -euo pipefail
a=$1 b=$2 rounds=$3; shift 3
work=$(mktemp -d /tmp/ab_ingest.XXXX)
pid=
trap '[[ -n "$pid" ]] && kill -KILL "$pid" 2>/dev/null; rm -rf "$work"' EXIT
source "$(dirname "$0")/server_lib.sh"  # now, cli (of one()'s $bin and $port), final_form
one() {
  local bin=$1 tag=$2 dir=$work/run
  rm -rf "$dir"; mkdir -p "$dir"
  "$bin/dictlogd" --listen=127.0.0.1:0 --data_dir="$dir/db" --recompress_records_per_second=10000000 \
    --block_cache_mb=31 --shutdown_notice_seconds=0 --port_file="$dir/port" "$@" >"$dir/log" 2>&1 &
  pid=$!
  for _ in $(seq 400); do [[ -s "$dir/port" ]] && break; sleep 0.05; done
  local port; port=$(cat "$dir/port")
  local s m e
  s=$(now)
  "$bin/dictlog-bench" load --server=127.0.0.1:$port --dir="${LOGS:-/work/shared/data/loghub}" --copies="${COPIES:-100}" --ids_out="$dir/ids" >/dev/null 2>&1
  m=$(now)
  final_form
  e=$(now)
  local cpu; cpu=$(awk '{printf "%.2f", ($14+$15)/100}' /proc/$pid/stat)
  local stored; stored=$(cli --format=json pools | python3 -c 'import json,sys
print(sum(json.loads(l).get("stored_bytes",0) for l in sys.stdin))')
  local threads; threads=$(for t in /proc/$pid/task/*; do
      echo "$(cat "$t/comm") $(awk '{print $14+$15}' "$t/stat")"; done |
    awk '{c[$1]+=$2} END {for (k in c) if (c[k] >= 1) printf "%s=%.2f\n", k, c[k]/100}' |
    sort -t= -k2 -rn | tr '\n' ' ')
  if [[ -n "${KEEP:-}" ]]; then
    mkdir -p "$KEEP"; cli --format=json pools > "$KEEP/$tag-$r.pools"
  fi
  kill -TERM "$pid"; wait "$pid" || true; pid=
  [[ -n "${KEEP:-}" ]] && cp "$dir/log" "$KEEP/$tag-$r.log"
  local trainings; trainings=$(grep "trained .*dictionary" "$dir/log" |
    sed -nE 's/.*; ([0-9.]+) s\)$/\1/p' | awk '{n++; s+=$1} END {printf "%d %.2f", n, s}')
  printf "%s load %.2f final %.2f ingest %.2f cpu %s stored %s trainings %s threads %s\n" "$tag" "$(echo "$m - $s" | bc)" "$(echo "$e - $m" | bc)" "$(echo "$e - $s" | bc)" "$cpu" "$stored" "$trainings" "$threads"
}
for r in $(seq "$rounds"); do
  if (( r % 2 == 1 )); then one "$a" A "$@"; one "$b" B "$@"; else one "$b" B "$@"; one "$a" A "$@"; fi
done
