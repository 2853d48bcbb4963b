#!/usr/bin/env bash
# readab.sh DIR BIN OP SECONDS: one read run of dictlog-bench on a stopped store; prints records/s.
set -euo pipefail
dir=$1 bin=$2 op=$3 secs=$4
rm -f "$dir/port_ab"
"$bin/dictlogd" --listen=127.0.0.1:0 --port_file="$dir/port_ab" --data_dir="$dir/db" \
  --config="$dir/config.textproto" --auto_train=true --block_cache_mb=31 --shutdown_notice_seconds=0 >>"$dir/ab.log" 2>&1 &
pid=$!
trap 'kill -KILL $pid 2>/dev/null || true' EXIT
for _ in $(seq 1 600); do [[ -s "$dir/port_ab" ]] && break; sleep 0.1; done
port=$(cat "$dir/port_ab")
"$bin/dictlog-bench" read --server=127.0.0.1:$port --ids="$dir/ids" --op=$op --batch=64 --dist=uniform \
  --duration=3s --concurrency=32 --connections=4 >/dev/null 2>&1
"$bin/dictlog-bench" read --server=127.0.0.1:$port --ids="$dir/ids" --op=$op --batch=64 --dist=uniform \
  --duration=${secs}s --concurrency=32 --connections=4 --json="$dir/ab.json" >/dev/null 2>&1
kill -TERM $pid; wait $pid || true; trap - EXIT
python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print(r["records_per_s"], r["errors"])' "$dir/ab.json"
