#!/usr/bin/env bash
# after_zipf.sh DIR BIN CACHE_BYTES: the served_cpu.sh setup with --decoded_block_cache_bytes=CACHE_BYTES; Zipf(0.99)
# MultiGet for 5 s (fills the decoded block cache, as compare's Zipf reads do), then uniform
# MultiGet for 6 s, measured. Used by RESULTS.md "Scale mode, thirteenth run".
set -euo pipefail
out=$1 bin=$2 cache=$3
rm -f $out/port
$bin/dictlogd --listen=127.0.0.1:0 --port_file=$out/port --data_dir=$out/db --config=$out/config.textproto --auto_train=true --block_cache_mb=31 --decoded_block_cache_bytes=$cache >> $out/server_read.log 2>&1 &
pid=$!
trap 'kill -KILL $pid 2>/dev/null || true' EXIT
for _ in $(seq 1 600); do [[ -s $out/port ]] && break; sleep 0.1; done
port=$(cat $out/port)
$bin/dictlog-bench read --server=127.0.0.1:$port --ids=$out/ids --op=multiget --dist=zipf:0.99 --batch=64 --duration=5s --concurrency=32 --connections=4 >/dev/null 2>&1
read -r -a s0 < /proc/$pid/stat
$bin/dictlog-bench read --server=127.0.0.1:$port --ids=$out/ids --op=multiget --dist=uniform --batch=64 --duration=6s --concurrency=32 --connections=4 --json=$out/rd.json >/dev/null 2>&1
read -r -a s1 < /proc/$pid/stat
kill -TERM $pid; wait $pid || true
python3 - $out/rd.json $(( s1[13]+s1[14]-s0[13]-s0[14] )) <<'PY'
import json,sys
r=json.load(open(sys.argv[1])); cpu=int(sys.argv[2])/100
print("rec/s %.0f  server us/record %.2f" % (r["records_per_s"], cpu*1e6/r["records"]))
PY
