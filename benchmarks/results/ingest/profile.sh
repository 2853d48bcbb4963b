#!/usr/bin/env bash
# profile.sh NAME DICTLOGD BENCH STORAGE_OPTIONS COPIES: starts DICTLOGD on 127.0.0.1:0
# with default pool options STORAGE_OPTIONS, loads COPIES of loghub with dictlog-bench
# and samples the server with perf while it loads. Outputs under /tmp/ingest_prof/NAME.
set -euo pipefail
name=$1 dictlogd=$2 bench=$3 options=$4 copies=$5
out=/tmp/ingest_prof/$name
rm -rf "$out"; mkdir -p "$out"
echo "default_pool_options { $options }" > "$out/config.textproto"
"$dictlogd" --listen=127.0.0.1:0 --port_file="$out/port" --data_dir="$out/db" \
  --config="$out/config.textproto" --recompress_records_per_second=10000000 \
  --block_cache_mb=31 >"$out/server.log" 2>&1 &
pid=$!
for _ in $(seq 1 300); do [[ -s "$out/port" ]] && break; sleep 0.1; done
port=$(cat "$out/port")
perf record -F 499 -g -p "$pid" -o "$out/perf.data" >"$out/perf.log" 2>&1 &
perf_pid=$!
start=$(date +%s.%N)
/usr/bin/time -f "client cpu user %U s sys %S s" -o "$out/client_time" "$bench" load --server=127.0.0.1:$port --dir=/work/shared/data/loghub --copies="$copies" \
  --ids_out="$out/ids" >"$out/load.log" 2>&1
end=$(date +%s.%N)
read -r -a stat < "/proc/$pid/stat"
tck=$(getconf CLK_TCK)
echo "server cpu user $(echo "${stat[13]} / $tck" | bc -l | cut -c1-6) s sys $(echo "${stat[14]} / $tck" | bc -l | cut -c1-6) s" > "$out/server_time"
kill -INT "$perf_pid"; wait "$perf_pid" || true
kill -TERM "$pid"; wait "$pid" || true
echo "load seconds: $(echo "$end - $start" | bc)" | tee "$out/summary"
tail -1 "$out/load.log" | tee -a "$out/summary"
cat "$out/client_time" "$out/server_time" | tee -a "$out/summary"
