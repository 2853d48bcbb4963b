#!/usr/bin/env bash
# readprof.sh DIR BIN OP SECONDS: dictlogd (BIN/dictlogd) on a store that ingest3/profile.sh left in DIR/db
# (ids in DIR/ids), a 3 s warm-up, then `dictlog-bench read --op=OP` for SECONDS with
# perf on dictlogd (DIR/perf_OP.data) and the read report in DIR/read_OP.json, whose
# records/s it prints last. PERF=0: the same without perf (read A/Bs).
set -euo pipefail
out=$1 bin=$2 op=$3 secs=$4
pid= perf_pid=
# Whatever is still running when the script ends (a failed read included) is stopped.
trap '[[ -n "$perf_pid" ]] && kill -INT "$perf_pid" 2>/dev/null; [[ -n "$pid" ]] && kill -KILL "$pid" 2>/dev/null; true' EXIT
read_for() {  # read_for DURATION [FLAG...]
  local duration=$1; shift
  "$bin/dictlog-bench" read --server=127.0.0.1:$port --ids="$out/ids" --op="$op" --batch=64 \
    --duration="$duration" --concurrency=32 --connections=4 "$@"
}
rm -f "$out/port"
"$bin/dictlogd" --listen=127.0.0.1:0 --port_file="$out/port" --data_dir="$out/db" \
  --config="$out/config.textproto" --auto_train=true --block_cache_mb=31 >>"$out/server_read.log" 2>&1 &
pid=$!
for _ in $(seq 1 600); do [[ -s "$out/port" ]] && break; sleep 0.1; done
port=$(cat "$out/port")
read_for 3s >/dev/null 2>&1
if [[ "${PERF:-1}" != 0 ]]; then
  perf record -F 999 -g -p "$pid" -o "$out/perf_$op.data" >"$out/perf_$op.log" 2>&1 &
  perf_pid=$!
fi
read_for "${secs}s" --json="$out/read_$op.json" 2>&1 | tail -3
if [[ -n "$perf_pid" ]]; then kill -INT "$perf_pid"; wait "$perf_pid" || true; perf_pid=; fi
kill -TERM "$pid"; wait "$pid" || true; pid=
python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); print("records/s", r["records_per_s"], "errors", r["errors"])' \
  "$out/read_$op.json"
