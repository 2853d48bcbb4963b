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
