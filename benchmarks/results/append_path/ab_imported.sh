#!/usr/bin/env bash
# ab_imported.sh DICTS BIN_A BIN_B ROUNDS: record+dict's append path alone, A against B.
# Each run: dictlogd --auto_train=false (127.0.0.1 port 0, stopped by its pid) with the
# dictionaries in DICTS (NAME.dict per pool, `dictlog dict export`) imported and active,
# then `dictlog-bench load` of 100 copies of loghub. No training, nothing stored raw,
# nothing to re-encode: only the appends. Prints load seconds and dictlogd's CPU seconds
# over the load; which binary runs first alternates (A B, then B A). Each BIN dir holds
# dictlogd, dictlog and dictlog-bench (bazel -c opt).
set -euo pipefail
dicts=$1 a=$2 b=$3 rounds=$4
work=$(mktemp -d /tmp/ab_imported.XXXX)
pid=
trap '[[ -n "$pid" ]] && kill -KILL "$pid" 2>/dev/null; rm -rf "$work"' EXIT
one() {
  local bin=$1 tag=$2 dir=$work/run
  rm -rf "$dir"; mkdir -p "$dir"
  "$bin/dictlogd" --listen=127.0.0.1:0 --data_dir="$dir/db" --auto_train=false \
    --block_cache_mb=31 --shutdown_notice_seconds=0 --port_file="$dir/port" >"$dir/log" 2>&1 &
  pid=$!
  for _ in $(seq 400); do [[ -s "$dir/port" ]] && break; sleep 0.05; done
  local port; port=$(cat "$dir/port")
  for f in "$dicts"/*.dict; do
    local p; p=$(basename "$f" .dict)
    "$bin/dictlog" --server=127.0.0.1:$port pool create "$p" >/dev/null 2>&1
    "$bin/dictlog" --server=127.0.0.1:$port dict import --pool="$p" --activate "$f" >/dev/null 2>&1
  done
  local c0 c1 s m
  c0=$(awk '{print $14+$15}' /proc/$pid/stat); s=$(date +%s.%N)
  "$bin/dictlog-bench" load --server=127.0.0.1:$port --dir=/work/shared/data/loghub --copies=100 \
    --ids_out="$dir/ids" >/dev/null 2>&1
  m=$(date +%s.%N); c1=$(awk '{print $14+$15}' /proc/$pid/stat)
  kill -TERM "$pid"; wait "$pid" || true; pid=
  printf "%s load %.2f s server cpu %.2f s\n" "$tag" "$(echo "$m - $s" | bc)" \
    "$(echo "($c1 - $c0) / $(getconf CLK_TCK)" | bc -l)"
}
for r in $(seq "$rounds"); do
  if (( r % 2 == 1 )); then one "$a" A; one "$b" B; else one "$b" B; one "$a" A; fi
done
