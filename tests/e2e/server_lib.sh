# Shared by the end-to-end shell tests (source it): runs the real dictlogd on
# 127.0.0.1 port 0 with a data dir under $work, and stops it.
#   work=...; source server_lib.sh; start_server; ...; stop_server
# Sets $server (host:port) and $server_pid; extra_flags=(...) are passed to dictlogd.
runfiles="${TEST_SRCDIR}/${TEST_WORKSPACE:-dictlog}"
dictlogd="$runfiles/server/daemon/dictlogd"
dictlog="$runfiles/client/cli/dictlog"
logs="${TEST_SRCDIR}/loghub"
extra_flags=()

fail() { echo "FAIL: $*" >&2; exit 1; }

start_server() {
  rm -f "$work/port"
  "$dictlogd" --listen=127.0.0.1:0 --data_dir="$work/data" --port_file="$work/port" \
    "${extra_flags[@]}" >>"$work/server.log" 2>&1 &
  server_pid=$!
  for _ in $(seq 1 300); do
    [[ -s "$work/port" ]] && break
    sleep 0.1
  done
  [[ -s "$work/port" ]] || { cat "$work/server.log"; fail "dictlogd did not start"; }
  server="127.0.0.1:$(cat "$work/port")"
}

# SIGTERM; dictlogd must drain and exit 0.
stop_server() {
  kill -TERM "$server_pid"
  wait "$server_pid" || fail "dictlogd exited non-zero on SIGTERM"
  server_pid=
}

trap '[[ -n "${server_pid:-}" ]] && kill -KILL "$server_pid" 2>/dev/null || true' EXIT
