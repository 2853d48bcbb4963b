#!/usr/bin/env bash
# profile.sh NAME BIN_DIR STORAGE_OPTIONS COPIES: compare's record+dict steps by hand
# (load, wait for dictionaries, recompress every pool, restart) with perf on dictlogd
# during the load and during the final form. Outputs under $PROFILE_OUT/NAME (default
# /tmp/ingest3_prof; RESULTS.md's "Bulk-load trainer policy" used /tmp/trainer_prof).
set -euo pipefail
name=$1 bin=$2 options=$3 copies=$4; shift 4
out=${PROFILE_OUT:-/tmp/ingest3_prof}/$name
rm -rf "$out"; mkdir -p "$out"
echo "default_pool_options { $options }" > "$out/config.textproto"
pid=
trap '[[ -n "$pid" ]] && kill -KILL "$pid" 2>/dev/null || true' EXIT
start_server() {
  rm -f "$out/port"
  "$bin/dictlogd" --listen=127.0.0.1:0 --port_file="$out/port" --data_dir="$out/db" \
    --config="$out/config.textproto" --auto_train=true --recompress_records_per_second=10000000 \
    --block_cache_mb=31 "$@" >>"$out/server.log" 2>&1 &
  pid=$!
  for _ in $(seq 1 600); do [[ -s "$out/port" ]] && break; sleep 0.1; done
  port=$(cat "$out/port")
}
cpu() { read -r -a stat < "/proc/$pid/stat"; echo $(( stat[13] + stat[14] )); }
start_server "$@"
perf record -F 499 -g -p "$pid" -o "$out/perf_load.data" >"$out/perf_load.log" 2>&1 &
perf_pid=$!
t0=$(date +%s.%N); c0=$(cpu)
"$bin/dictlog-bench" load --server=127.0.0.1:$port --dir=/work/shared/data/loghub --copies="$copies" \
  --ids_out="$out/ids" >"$out/load.log" 2>&1
t1=$(date +%s.%N); c1=$(cpu)
kill -INT "$perf_pid"; wait "$perf_pid" || true
perf record -F 499 -g -p "$pid" -o "$out/perf_final.data" >"$out/perf_final.log" 2>&1 &
perf_pid=$!
while "$bin/dictlog" --server=127.0.0.1:$port --format=json pools | grep -q '"active_dictionary_id":0'; do sleep 0.5; done
t2=$(date +%s.%N); c2=$(cpu)
for p in $("$bin/dictlog" --server=127.0.0.1:$port --format=json pools | python3 -c 'import json,sys
for l in sys.stdin:
  d=json.loads(l)
  if "pool" in d: print(d["pool"])'); do
  s=$(date +%s.%N)
  "$bin/dictlog" --server=127.0.0.1:$port recompress --pool=$p > "$out/recompress_$p.log" 2>&1
  echo "recompress $p $(echo "$(date +%s.%N) - $s" | bc) s: $(tail -1 "$out/recompress_$p.log")" >> "$out/phases"
done
t3=$(date +%s.%N); c3=$(cpu)
kill -INT "$perf_pid"; wait "$perf_pid" || true
"$bin/dictlog" --server=127.0.0.1:$port --format=json pools > "$out/pools.json"
kill -TERM "$pid"; wait "$pid" || true; pid=
t4=$(date +%s.%N)
start_server "$@"
t5=$(date +%s.%N)
kill -TERM "$pid"; wait "$pid" || true; pid=
tck=$(getconf CLK_TCK)
{
echo "load s $(echo "$t1 - $t0" | bc) server cpu s $(echo "($c1 - $c0)/$tck" | bc -l | cut -c1-6)"
echo "wait dicts s $(echo "$t2 - $t1" | bc) server cpu s $(echo "($c2 - $c1)/$tck" | bc -l | cut -c1-6)"
echo "recompress s $(echo "$t3 - $t2" | bc) server cpu s $(echo "($c3 - $c2)/$tck" | bc -l | cut -c1-6)"
echo "stop s $(echo "$t4 - $t3" | bc) start s $(echo "$t5 - $t4" | bc)"
echo "final form s $(echo "$t5 - $t1" | bc)"
echo "sst bytes $(find "$out/db" -name '*.sst' -printf '%s\n' | awk '{s+=$1} END {print s}')"
echo "stored bytes $(python3 -c 'import json,sys
print(sum(json.loads(l).get("stored_bytes",0) for l in open(sys.argv[1])))' "$out/pools.json")"
uptime
} | tee "$out/summary"
cat "$out/phases"
