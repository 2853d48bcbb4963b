#!/usr/bin/env bash
# wal_bound.sh BIN_DIR LABEL COPIES: one record+dict load of COPIES x 20,000 loghub records
# (dictlog-bench load, one loader) into a fresh dictlogd from BIN_DIR, with the total
# size of the data directory's WAL files sampled every 0.5 s; prints the load's seconds,
# the WALs' peak and final MB and the SST MB. Data under /tmp/wal_bound/LABEL.
#   for b in A B; do bash wal_bound.sh /tmp/bin$b $b 300; done   # 6,000,000 records
set -euo pipefail
bin=$1 label=$2 copies=$3
out=/tmp/wal_bound/$label
rm -rf "$out"; mkdir -p "$out"
echo "default_pool_options { }" > "$out/config.textproto"
"$bin/dictlogd" --listen=127.0.0.1:0 --port_file="$out/port" --data_dir="$out/db" \
  --config="$out/config.textproto" --auto_train=true --block_cache_mb=31 > "$out/server.log" 2>&1 &
pid=$!
trap 'kill -KILL "$pid" 2>/dev/null || true' EXIT
for _ in $(seq 1 600); do [[ -s "$out/port" ]] && break; sleep 0.1; done
port=$(cat "$out/port")
( while kill -0 "$pid" 2>/dev/null; do cat "$out"/db/*.log 2>/dev/null | wc -c; sleep 0.5; done ) \
  > "$out/wal_bytes" &
sampler=$!
t0=$(date +%s.%N)
"$bin/dictlog-bench" load --server=127.0.0.1:$port --dir=/work/shared/data/loghub \
  --copies="$copies" --ids_out="$out/ids" > "$out/load.log" 2>&1
t1=$(date +%s.%N)
kill -TERM "$pid"; wait "$pid" || true
kill "$sampler" 2>/dev/null || true
mb() { awk '{printf "%.1f", $1 / 1048576}'; }
echo "$label load_s $(echo "$t1 - $t0" | bc) wal_peak_MB $(sort -n "$out/wal_bytes" | tail -1 | mb)" \
  "wal_end_MB $(cat "$out"/db/*.log | wc -c | mb) sst_MB $(du -cm "$out"/db/*.sst | tail -1 | cut -f1)"
