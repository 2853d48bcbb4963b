#!/usr/bin/env bash
# wal_bound.sh BIN_DIR LABEL COPIES: one record+dict load of COPIES x 20,000 loghub records
# (dictlog-bench load, one loader) into a fresh dictlogd from BIN_DIR, with the total
# size of the data directory's WAL files sampled every 0.5 s; prints the load's seconds,
# the WALs' peak and final MB and the SST MB. Data under /tmp/wal_bound/LABEL.
#   for b in A B; do bash wal_bound.sh /tmp/bin$b $b 300; done   # 6,000,000 records
set -euo pipefail
bin=$1 label=$2 copies=$3
source "$(dirname "$0")/server_lib.sh"
pid=
trap '[[ -n "$pid" ]] && kill -KILL "$pid" 2>/dev/null || true' EXIT
out=/tmp/wal_bound/$label
db=$out/server/db
start_record_dict "$out"
server=$pid
( while kill -0 "$server" 2>/dev/null; do cat "$db"/*.log 2>/dev/null | wc -c; sleep 0.5; done ) \
  > "$out/wal_bytes" &
sampler=$!
t0=$(now)
"$bin/dictlog-bench" load --server=127.0.0.1:$port --dir=/work/shared/data/loghub \
  --copies="$copies" --ids_out="$out/ids" > "$out/load.log" 2>&1
t1=$(now)
stop
kill "$sampler" 2>/dev/null || true
mb() { awk '{printf "%.1f", $1 / 1048576}'; }
echo "$label load_s $(secs "$t0" "$t1") wal_peak_MB $(sort -n "$out/wal_bytes" | tail -1 | mb)" \
  "wal_end_MB $(cat "$db"/*.log | wc -c | mb) sst_MB $(du -cm "$db"/*.sst | tail -1 | cut -f1)"
