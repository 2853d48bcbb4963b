#!/usr/bin/env bash
# End to end `dictlog tail -f`: the real dictlogd on 127.0.0.1 port 0; records stored
# after --after_id and records appended while tail runs are printed once each, in
# order; Ctrl-C (SIGINT) ends tail with exit 0; a server's SIGTERM ends a running tail
# (exit 1, "shutting down") without holding up the server's shutdown. Every process
# is stopped by its pid. With a one-record buffer, every appended batch makes the
# stream fall behind (ABORTED): tail resumes after its last line and prints every
# record once, in order; the server counts the streams that fell behind.
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

# A one-record buffer: each batch overflows it; tail resumes by itself.
head -c 24 /dev/urandom | base64 >"$work/metrics_token"
extra_flags=(--follow_buffer_records=1 --metrics_listen=127.0.0.1:0
             "--metrics_port_file=$work/metrics_port" "--metrics_token_file=$work/metrics_token")
start_server
"$dictlog" --server="$server" tail -f --category=burst --from_start \
  >"$work/burst.out" 2>"$work/burst.err" &
tail_pid=$!
seq 1 1500 >"$work/burst.expected"
for part in 1 501 1001; do
  seq "$part" $((part + 499)) | "$dictlog" --server="$server" append --category=burst >/dev/null
done
wait_for_lines "$work/burst.out" 1500
cmp "$work/burst.expected" "$work/burst.out" || fail "tail after falling behind: $(diff "$work/burst.expected" "$work/burst.out" | head)"
kill -TERM "$tail_pid"
wait "$tail_pid" || fail "tail exited $? on SIGTERM, not 0"
tail_pid=
exec 3<>"/dev/tcp/127.0.0.1/$(cat "$work/metrics_port")"
printf 'GET /metrics HTTP/1.1\r\nHost: localhost\r\nAuthorization: Bearer %s\r\n\r\n' \
  "$(cat "$work/metrics_token")" >&3
cat <&3 >"$work/metrics"
exec 3<&-
grep -Eq '^dictlog_follow_fell_behind_total [1-9]' "$work/metrics" ||
  fail "no stream fell behind: $(grep dictlog_follow "$work/metrics")"
grep -Eq '^dictlog_follow_records_sent_total 1500$' "$work/metrics" ||
  fail "records sent: $(grep dictlog_follow "$work/metrics")"
stop_server
echo PASS
