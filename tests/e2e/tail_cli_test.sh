#!/usr/bin/env bash
# End to end `dictlog tail -f`: the real dictlogd on 127.0.0.1 port 0; records stored
# after --after_id and records appended while tail runs are printed once each, in
# order; Ctrl-C (SIGINT) ends tail with exit 0; a server's SIGTERM ends a running tail
# (exit 1, "shutting down") without holding up the server's shutdown. Every process
# is stopped by its pid.
set -euo pipefail

work="${TEST_TMPDIR}/tail"
rm -rf "$work" && mkdir -p "$work"
source "${TEST_SRCDIR}/${TEST_WORKSPACE:-dictlog}/tests/e2e/server_lib.sh"

tail_pid=
trap '[[ -n "${server_pid:-}" ]] && kill -KILL "$server_pid" 2>/dev/null || true;
      [[ -n "${tail_pid:-}" ]] && kill -KILL "$tail_pid" 2>/dev/null || true' EXIT

# Waits (30 s at most) until file $1 has $2 lines.
wait_for_lines() {
  for _ in $(seq 1 300); do
    [[ -f "$1" && $(wc -l <"$1") -ge $2 ]] && return 0
    sleep 0.1
  done
  fail "$1 has $(wc -l <"$1" 2>/dev/null || echo 0) lines, not $2"
}

append() { printf '%s\n' "$@" | "$dictlog" --server="$server" append --category=web >/dev/null; }

start_server
append "line 1" "line 2" "line 3"

# Usage: -f is required; one target.
set +e
"$dictlog" --server="$server" tail --category=web >/dev/null 2>&1; code=$?
set -e
[[ $code -eq 2 ]] || fail "tail without -f exited $code, not 2"
set +e
"$dictlog" --server="$server" tail -f >/dev/null 2>&1; code=$?
set -e
[[ $code -eq 2 ]] || fail "tail -f without a target exited $code, not 2"

# Catch up after web/1, then live.
"$dictlog" --server="$server" tail -f --category=web --after_id=web/1 \
  >"$work/tail.out" 2>"$work/tail.err" &
tail_pid=$!
wait_for_lines "$work/tail.out" 2
append "line 4" "line 5"
append "line 6"
wait_for_lines "$work/tail.out" 5
printf 'line %s\n' 2 3 4 5 6 >"$work/expected"
cmp "$work/expected" "$work/tail.out" || fail "tail printed $(cat "$work/tail.out")"
kill -INT "$tail_pid"
wait "$tail_pid" || fail "tail exited $? on SIGINT, not 0"
tail_pid=

# JSON from now; the server's shutdown ends it.
"$dictlog" --server="$server" tail -f --pool=web --format=json \
  >"$work/json.out" 2>"$work/json.err" &
tail_pid=$!
# From now: only what is appended once the stream runs. Append until a line arrives.
for _ in $(seq 1 300); do
  append "live"
  [[ -s "$work/json.out" ]] && break
  sleep 0.1
done
grep -q '"payload":"live"' "$work/json.out" || fail "tail --format=json printed $(cat "$work/json.out")"
grep -q '"append_time_unix_ms":' "$work/json.out" || fail "no append time in $(cat "$work/json.out")"
start=$SECONDS
stop_server
(( SECONDS - start < 8 )) || fail "dictlogd took $((SECONDS - start)) s to stop with a follower"
set +e
wait "$tail_pid"; code=$?
set -e
tail_pid=
[[ $code -eq 1 ]] || fail "tail exited $code when the server shut down, not 1"
grep -q "shutting down" "$work/json.err" || fail "tail said: $(cat "$work/json.err")"
echo PASS
