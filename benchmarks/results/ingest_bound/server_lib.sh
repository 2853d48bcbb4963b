# server_lib.sh: what the ingest_bound scripts share, sourced (not run). The caller sets
# $bin (dictlogd, dictlog, dictlog-bench, compare_server) and an EXIT trap that kills
# $pid. Every server listens on 127.0.0.1 port 0 and is stopped by its pid.
now() { date +%s.%N; }
secs() { echo "$2 - $1" | bc | cut -c1-5; }
start() {  # start DIR BINARY ARGS...: the server's port in $port, its pid in $pid
  local dir=$1; shift
  rm -rf "$dir"; mkdir -p "$dir"
  "$@" --port_file="$dir/port" >"$dir/log" 2>&1 &
  pid=$!
  for _ in $(seq 400); do [[ -s "$dir/port" ]] && break; sleep 0.05; done
  port=$(cat "$dir/port")
}
stop() { kill -TERM "$pid"; wait "$pid" || true; pid=; }
cli() { "$bin/dictlog" --server=127.0.0.1:$port "$@"; }
# final_form: record+dict's stored form as compare's scale mode leaves it: waits until
# every pool has a dictionary, then `recompress` of every pool, then `dictlog flush`.
final_form() {
  while cli --format=json pools | grep -q '"active_dictionary_id":0'; do sleep 0.2; done
  for p in $(cli --format=json pools | python3 -c 'import json,sys
for l in sys.stdin:
  d = json.loads(l)
  if "pool" in d: print(d["pool"])'); do cli recompress --pool="$p" >/dev/null; done
  cli flush >/dev/null
}
# start_record_dict OUT [ENV=VALUE...]: `start` of a record+dict dictlogd ($bin) with
# automatic training, a 31 MB block cache and its data in OUT/server/db (the
# environment given, if any); the ingest A/B scripts' server.
start_record_dict() {
  local out=$1; shift
  mkdir -p "$out"
  echo "default_pool_options { }" > "$out/config.textproto"
  start "$out/server" env "$@" "$bin/dictlogd" --listen=127.0.0.1:0 --data_dir="$out/server/db" \
    --config="$out/config.textproto" --auto_train=true --block_cache_mb=31
}
