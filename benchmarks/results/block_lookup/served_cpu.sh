#!/usr/bin/env bash
# served_cpu.sh DIR BIN OP DIST SECS: dictlogd (BIN/dictlogd) on the store that ingest3/profile.sh left in
# DIR/db (ids in DIR/ids); a 3 s warm-up, then `dictlog-bench read --op=OP --dist=DIST` for SECS;
# prints records/s and the server CPU per record read (from /proc). 127.0.0.1 only;
# the server is stopped by its pid. Used by RESULTS.md "Block mode: blocks read again kept decompressed"
# and "Forward seeks to indexed blocks". EXTRA: dictlogd's flags beyond the store's
# (default --block_cache_mb=31).
set -euo pipefail
out=$1 bin=$2 op=$3 dist=$4 secs=$5
rm -f $out/port
$bin/dictlogd --listen=127.0.0.1:0 --port_file=$out/port --data_dir=$out/db --config=$out/config.textproto --auto_train=true ${EXTRA:---block_cache_mb=31} >> $out/server_read.log 2>&1 &
pid=$!
trap 'kill -KILL $pid 2>/dev/null || true' EXIT
for _ in $(seq 1 600); do [[ -s $out/port ]] && break; sleep 0.1; done
port=$(cat $out/port)
$bin/dictlog-bench read --server=127.0.0.1:$port --ids=$out/ids --op=$op --dist=$dist --batch=64 --duration=3s --concurrency=32 --connections=4 >/dev/null 2>&1
read -r -a s0 < /proc/$pid/stat
$bin/dictlog-bench read --server=127.0.0.1:$port --ids=$out/ids --op=$op --dist=$dist --batch=64 --duration=${secs}s --concurrency=32 --connections=4 --json=$out/rd.json >/dev/null 2>&1
read -r -a s1 < /proc/$pid/stat
kill -TERM $pid; wait $pid || true
python3 - $out/rd.json $(( s1[13]+s1[14]-s0[13]-s0[14] )) <<'PY'
import json,sys
r=json.load(open(sys.argv[1])); cpu=int(sys.argv[2])/100
print("rec/s %.0f  server us/record %.2f" % (r["records_per_s"], cpu*1e6/r["records"]))
PY
