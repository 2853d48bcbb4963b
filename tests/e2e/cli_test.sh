#!/usr/bin/env bash
# End to end through the CLI: the real dictlogd on 127.0.0.1 port 0, every loghub file
# appended with `dictlog append`, read back with `dictlog scan` and `dictlog get` and
# compared byte for byte, again after a restart; usage and server errors give the
# documented exit codes. Half the pools are created in block mode (2 KiB blocks). The
# server answers at most 64 KiB of payloads per MultiGet, so each `dictlog get` chunk
# (1,000 ids, ~150 KB) is answered over several calls: the client asks again for the
# ids past the budget.
set -euo pipefail

work="${TEST_TMPDIR}/cli"
rm -rf "$work" && mkdir -p "$work"
source "${TEST_SRCDIR}/${TEST_WORKSPACE:-dictlog}/tests/e2e/server_lib.sh"

# The CLI prints one record a line; eight loghub files lack a final newline. Their
# lines end with CRLF: records do not keep the '\r' (unless --keep_cr, below).
for file in "$logs"/*.log; do
  sed -e 's/\r$//' "$file" | sed -e '$a\' >"$work/$(basename "$file" .log).expected"
done
grep -q $'\r$' "$logs/HDFS.log" || fail "the loghub files were expected to end lines with CRLF"

check_all() {
  for file in "$logs"/*.log; do
    category=$(basename "$file" .log)
    expected="$work/$category.expected"
    "$dictlog" --server="$server" scan --category="$category" >"$work/$category.scan"
    cmp "$expected" "$work/$category.scan" || fail "scan of $category differs from $file"
    "$dictlog" --server="$server" scan --category="$category" --decode_locally \
      >"$work/$category.scan_local"
    cmp "$expected" "$work/$category.scan_local" ||
      fail "scan --decode_locally of $category differs from $file"
    # `get` with every acknowledged id returns the file's lines in order.
    xargs "$dictlog" --server="$server" get <"$work/$category.ids" >"$work/$category.get"
    cmp "$expected" "$work/$category.get" || fail "get of $category differs from $file"
    xargs "$dictlog" --server="$server" get --decode_locally <"$work/$category.ids" \
      >"$work/$category.local"
    cmp "$expected" "$work/$category.local" ||
      fail "get --decode_locally of $category differs from $file"
  done
}

extra_flags=(--max_response_bytes=65536 --retention_interval_seconds=1)
start_server

block_pools=()
i=0
for file in "$logs"/*.log; do
  category=$(basename "$file" .log)
  if (( i++ % 2 == 0 )); then
    "$dictlog" --server="$server" pool create "$category" --storage_mode=block \
      --block_bytes=2048 >/dev/null
    block_pools+=("$category")
  fi
done
[[ ${#block_pools[@]} -ge 5 ]] || fail "expected at least 5 block pools"

for file in "$logs"/*.log; do
  category=$(basename "$file" .log)
  "$dictlog" --server="$server" append --category="$category" --batch_records=300 \
    "$file" >"$work/$category.ids"
  [[ $(wc -l <"$work/$category.ids") -eq $(wc -l <"$work/$category.expected") ]] ||
    fail "$category: one id per line expected"
  [[ $(head -n1 "$work/$category.ids") == "$category/1" ]] || fail "first id of $category"
done
# stdin works too.
printf 'one\ntwo\n' | "$dictlog" --server="$server" append --category=stdin - >"$work/stdin.ids"
[[ $(cat "$work/stdin.ids") == $'stdin/1\nstdin/2' ]] || fail "append from stdin"

check_all
"$dictlog" --server="$server" pools | tee "$work/pools.txt"
grep -q '^HDFS .* 2000 ' "$work/pools.txt" || fail "pools table lacks HDFS with 2000 records"
# Through a file: grep -q stops reading at its match, and under pipefail the SIGPIPE
# of dictlog's next write (its JSON lines fill more than one write) failed the test.
"$dictlog" --server="$server" pools --format=json >"$work/pools.json"
grep -q '"pool":"Linux","records":2000' "$work/pools.json" || fail "pools json"
# A single node: `shards` says every call goes to it (cluster routing, docs/cluster.md).
"$dictlog" --server="$server" shards >"$work/shards.txt"
grep -qx "single node: every call goes to $server" "$work/shards.txt" || fail "shards"
for pool in "${block_pools[@]}"; do
  grep -q "^$pool .* block 2048 " "$work/pools.txt" || fail "pools table: $pool in block mode"
done
# --keep_cr keeps every byte of a line: the file round-trips exactly.
"$dictlog" --server="$server" append --category=HDFS-crlf --keep_cr "$logs/HDFS.log" \
  >"$work/crlf.ids"
"$dictlog" --server="$server" scan --category=HDFS-crlf | cmp - <(sed -e '$a\' "$logs/HDFS.log") ||
  fail "--keep_cr: records differ from the file's bytes"
printf 'a\r\nb\r\r\nc\rd\n' | "$dictlog" --server="$server" append --category=cr - >/dev/null
"$dictlog" --server="$server" scan --category=cr | cmp - <(printf 'a\nb\r\nc\rd\n') ||
  fail "one trailing \\r is stripped by default, nothing else"
json=$("$dictlog" --server="$server" get --format=json stdin/2)
[[ "$json" =~ ^\{\"id\":\"stdin/2\",\"category\":\"stdin\",\"append_time_unix_ms\":[0-9]{13},\"payload\":\"two\"\}$ ]] ||
  fail "get json: $json"

# Scans by append time: everything was appended within the last hour, nothing before.
since=$(date -u -d '-1 hour' +%Y-%m-%dT%H:%M:%SZ)
"$dictlog" --server="$server" scan --category=HDFS --since="$since" |
  cmp "$work/HDFS.expected" - || fail "scan --since=$since differs from HDFS.log"
"$dictlog" --server="$server" scan --category=HDFS --since=1h --until=0 |
  cmp "$work/HDFS.expected" - || fail "scan --since=1h --until=0 differs from HDFS.log"
[[ -z $("$dictlog" --server="$server" scan --pool=HDFS --until=1h) ]] ||
  fail "scan --until=1h: nothing is older than an hour"
set +e
"$dictlog" --server="$server" scan --pool=HDFS --since=yesterday >/dev/null 2>"$work/err"
[[ $? -eq 2 ]] || fail "--since=yesterday must be a usage error"
grep -q -- "--since" "$work/err" || fail "--since=yesterday message: $(cat "$work/err")"
"$dictlog" --server="$server" scan --pool=HDFS --since=0 --until=1h >/dev/null 2>"$work/err"
[[ $? -eq 1 ]] && grep -q INVALID_ARGUMENT "$work/err" || fail "since after until: $(cat "$work/err")"
set -e

# Deleting a pool: it says what went; its ids answer NOT_FOUND "deleted"; the name comes
# back with ids past the old ones.
printf 'a\nb\nc\n' | "$dictlog" --server="$server" append --category=doomed - >/dev/null
"$dictlog" --server="$server" pool delete doomed >"$work/delete.out"
grep -q "^deleted pool doomed: 3 records, .* starts at doomed/4$" "$work/delete.out" ||
  fail "pool delete: $(cat "$work/delete.out")"
if "$dictlog" --server="$server" get doomed/1 >/dev/null 2>"$work/err"; then
  fail "a deleted pool's record must not be found"
fi
grep -q "NOT_FOUND.*deleted" "$work/err" || fail "deleted record: $(cat "$work/err")"
[[ $(printf 'd\n' | "$dictlog" --server="$server" append --category=doomed -) == doomed/4 ]] ||
  fail "a pool created again continues past the deleted pool's ids"
if "$dictlog" --server="$server" pool delete never-was 2>"$work/err"; then
  fail "deleting an unknown pool must fail"
fi
grep -q NOT_FOUND "$work/err" || fail "unknown pool delete: $(cat "$work/err")"

# Retention: once a pool has --max_age, the server's pass (every second here) deletes
# what is older; its ids then answer NOT_FOUND "expired".
printf 'old1\nold2\n' | "$dictlog" --server="$server" append --category=aging - >/dev/null
"$dictlog" --server="$server" pool update aging --max_age=1s >/dev/null
for _ in $(seq 1 300); do
  "$dictlog" --server="$server" get aging/2 >/dev/null 2>"$work/err" || break
  sleep 0.1
done
grep -q "NOT_FOUND.*expired" "$work/err" || fail "retention did not expire aging/2: $(cat "$work/err")"
[[ -z $("$dictlog" --server="$server" scan --pool=aging) ]] || fail "aging still holds records"

"$dictlog" --server="$server" verify | tee "$work/verify.txt"
grep -q "^verified [0-9]* records in [0-9]* pools: 0 corrupt$" "$work/verify.txt" ||
  fail "verify of a clean store"

# Exit codes: 2 for usage errors, 1 for failed operations (with the status on stderr).
set +e
"$dictlog" --server="$server" append >/dev/null 2>&1; [[ $? -eq 2 ]] || fail "usage exit code"
"$dictlog" --server="$server" frobnicate >/dev/null 2>&1; [[ $? -eq 2 ]] || fail "unknown command"
# Server flags out of range: dictlogd refuses to start, naming the flag.
for flag in --grpc_idle_threads=0 --block_cache_mb=-1 --table_compression=snappy \
    --max_batch_records=0 --max_record_bytes=-1 --max_pools=-1 \
    --recompress_records_per_second=0 --records_block_bytes=255 \
    --records_block_bytes=65537; do
  "$dictlogd" --data_dir="$work/never" --listen=127.0.0.1:0 "$flag" 2>"$work/flag_err" \
    >/dev/null
  [[ $? -ne 0 ]] || fail "dictlogd $flag must not start"
  grep -q -- "${flag%%=*}" "$work/flag_err" || fail "dictlogd $flag: $(cat "$work/flag_err")"
done
"$dictlog" --server="$server" pool create x --storage_mode=blob >/dev/null 2>&1
[[ $? -eq 2 ]] || fail "bad --storage_mode must be a usage error"
"$dictlog" --server="$server" pool update "${block_pools[0]}" --storage_mode=record \
  2>"$work/mode_err" >/dev/null
[[ $? -eq 1 ]] || fail "changing storage_mode must fail"
grep -q FAILED_PRECONDITION "$work/mode_err" || fail "storage_mode change: $(cat "$work/mode_err")"
"$dictlog" --server="$server" get HDFS/999999 2>"$work/err"; code=$?
[[ $code -eq 1 ]] || fail "missing record exit code $code"
[[ $(grep -c NOT_FOUND "$work/err") -eq 1 ]] ||
  fail "a missing record's error is printed once: $(cat "$work/err")"
"$dictlog" --server="$server" get HDFS/1 HDFS/999998 HDFS/999999 2>"$work/err" >/dev/null
[[ $? -eq 1 && $(wc -l <"$work/err") -eq 2 ]] || fail "one line per missing id: $(cat "$work/err")"
"$dictlog" --server="$server" get HDFS/99999999999999999999 2>"$work/err"; code=$?
[[ $code -eq 1 ]] || fail "overflowing seq exit code $code"
grep -q "seq overflows" "$work/err" || fail "an overflowing seq says so: $(cat "$work/err")"
grep -q "leading zeros" "$work/err" && fail "not a leading-zeros problem: $(cat "$work/err")"

# Flag errors are usage errors (2); --help and --version succeed (0).
"$dictlog" --server="$server" scan --category=HDFS --limit=-1 >/dev/null 2>"$work/err"
[[ $? -eq 2 ]] || fail "--limit=-1 must exit 2"
grep -q -- "--limit=-1" "$work/err" || fail "--limit=-1 message: $(cat "$work/err")"
"$dictlog" --server="$server" --frobnicate pools >/dev/null 2>"$work/err"
[[ $? -eq 2 ]] || fail "an unknown flag must exit 2"
grep -q "unknown flag --frobnicate" "$work/err" || fail "unknown flag message: $(cat "$work/err")"
"$dictlog" --server="$server" --timeout_seconds pools >/dev/null 2>&1
[[ $? -eq 2 ]] || fail "a flag without its value must exit 2"
for binary in "$dictlog" "$dictlogd"; do
  "$binary" --help >"$work/help" 2>&1 || fail "$binary --help must exit 0"
  grep -q "Usage:" "$work/help" || fail "$binary --help: $(head -3 "$work/help")"
  "$binary" --frobnicate >/dev/null 2>&1
  [[ $? -eq 2 ]] || fail "$binary: an unknown flag must exit 2"
done
"$dictlog" --version >"$work/version" || fail "dictlog --version must exit 0"
grep -qx "dictlog (dictlog [0-9.]*): gRPC 1\.[0-9.]*" "$work/version" ||
  fail "dictlog --version: $(cat "$work/version")"
"$dictlogd" --version >"$work/version" || fail "dictlogd --version must exit 0"
grep -qx "dictlogd (dictlog [0-9.]*): zstd 1\.[0-9.]*, gRPC 1\.[0-9.]*, RocksDB [0-9.]*" \
  "$work/version" || fail "dictlogd --version: $(cat "$work/version")"
grep -q "^dictlogd: dictlogd (dictlog [0-9.]*): zstd" "$work/server.log" ||
  fail "dictlogd logs its versions at start"
set -e

# A leading ~/ in a path flag is the home directory (README's --token_file=~/...): the
# shell does not expand it after --flag=.
home="$work/home"
mkdir -p "$home"
printf 'some-token-0123456789\n' >"$home/.dictlog-token"
[[ $(HOME="$home" "$dictlog" --server="$server" '--token_file=~/.dictlog-token' get stdin/1) \
  == one ]] || fail "--token_file=~/.dictlog-token"
HOME="$home" "$dictlog" --server="$server" get --frame '--out=~/one.zst' stdin/1 2>/dev/null
[[ -s "$home/one.zst" ]] || fail "--out=~/one.zst not written to \$HOME"
# --out onto a path that is not a regular file writes into it, never renames over it (as
# root, `--out=/dev/null` once replaced the machine's /dev/null with a regular file).
mkfifo "$work/out.fifo"
timeout 60 cat "$work/out.fifo" >"$work/fifo.bytes" &
reader_pid=$!
"$dictlog" --server="$server" get --frame --out="$work/out.fifo" stdin/1 2>/dev/null ||
  fail "get --out=FIFO failed"
wait "$reader_pid" || fail "nothing was written into --out=FIFO"
[[ -p "$work/out.fifo" ]] || fail "--out=FIFO replaced the FIFO"
cmp -s "$work/fifo.bytes" "$home/one.zst" || fail "--out=FIFO did not receive the frame"
ln -s "$work/link-target.zst" "$work/out.link"
"$dictlog" --server="$server" get --frame --out="$work/out.link" stdin/1 2>/dev/null ||
  fail "get --out=SYMLINK (dangling) failed"
[[ -L "$work/out.link" ]] || fail "--out=SYMLINK replaced the symlink"
cmp -s "$work/link-target.zst" "$home/one.zst" || fail "--out=SYMLINK did not write its target"
HOME="$home" "$dictlogd" --listen=127.0.0.1:0 '--data_dir=~/store' '--port_file=~/port' \
  >"$work/home_server.log" 2>&1 &
home_pid=$!
for _ in $(seq 1 300); do [[ -s "$home/port" ]] && break; sleep 0.1; done
kill -TERM "$home_pid"; wait "$home_pid" || fail "dictlogd with ~/ paths: $(cat "$work/home_server.log")"
[[ -s "$home/port" && -d "$home/store" ]] || fail "dictlogd did not expand ~/ in its path flags"

stop_server
start_server
check_all
stop_server
echo "cli_test: all checks passed"
