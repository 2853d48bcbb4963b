#!/usr/bin/env bash
# End to end through the CLI: `dictlog flush` writes the memtables to table files and
# prints their bytes; `dictlog backup --out=DIR` on the real dictlogd, then a
# second dictlogd on the copy returns every record byte for byte (`dictlog scan`) and
# `dictlog verify` finds nothing corrupt; bad directories give the documented exit
# codes (2 usage, 1 refused by the server, also outside --backup_root) and touch
# nothing.
set -euo pipefail

work="${TEST_TMPDIR}/backup_cli"
rm -rf "$work" && mkdir -p "$work"
work="$(realpath "$work")"  # The server reports the resolved directory.
source "${TEST_SRCDIR}/${TEST_WORKSPACE:-dictlog}/tests/e2e/server_lib.sh"

extra_flags=(--backup_root="$work")
start_server
"$dictlog" --server="$server" pool create Spark --storage_mode=block --block_bytes=4096 \
  >/dev/null
for category in HDFS Spark; do
  "$dictlog" --server="$server" append --category=$category "$logs/$category.log" >/dev/null
  # Records are the lines without '\n' (nor the '\r' of the file's CRLF line ends).
  sed -e 's/\r$//' "$logs/$category.log" | sed -e '$a\' >"$work/$category.expected"
done
"$dictlog" --server="$server" dict train --pool=HDFS --activate >/dev/null

# `dictlog flush`: the memtables become table files, whose bytes it prints.
sst_bytes() { find "$work/data" -name '*.sst' -printf '%s\n' | awk '{s += $1} END {print s + 0}'; }
before=$(sst_bytes)
"$dictlog" --server="$server" flush >"$work/flush.out"
grep -q "^flushed: [1-9][0-9]* bytes of table files$" "$work/flush.out" ||
  fail "flush output: $(cat "$work/flush.out")"
flushed=$(awk '{print $2}' "$work/flush.out")
after=$(sst_bytes)
(( after > before )) || fail "no table file written by flush: $before -> $after bytes"
# The bytes flush prints are the live table files'. A compaction the flush started may
# still hold its inputs and outputs both, and deleted files leave the directory a moment
# later, so the two agree once the store is still: flush again until they do (bounded).
for (( try = 0; try < 50 && flushed != after; try++ )); do
  sleep 0.2
  flushed=$("$dictlog" --server="$server" flush | awk '{print $2}')
  after=$(sst_bytes)
done
[[ $flushed == "$after" ]] || fail "flush says $flushed bytes, the directory holds $after"
"$dictlog" --server="$server" --format=json flush | grep -q '^{"table_file_bytes":[1-9][0-9]*}$' ||
  fail "flush --format=json"
status=0
"$dictlog" --server="$server" flush extra 2>/dev/null || status=$?
[[ $status == 2 ]] || fail "flush with an argument: exit $status, expected 2"

"$dictlog" --server="$server" backup --out="$work/copy" >"$work/backup.out"
grep -q "^backup in $work/copy: [1-9][0-9]* files, [1-9][0-9]* bytes, sequence [1-9]" \
  "$work/backup.out" || fail "backup output: $(cat "$work/backup.out")"

status=0
"$dictlog" --server="$server" backup --out=relative/dir 2>/dev/null || status=$?
[[ $status == 2 ]] || fail "relative --out: exit $status, expected 2"
status=0
"$dictlog" --server="$server" backup 2>/dev/null || status=$?
[[ $status == 2 ]] || fail "no --out: exit $status, expected 2"
status=0
"$dictlog" --server="$server" backup --out="$work/copy" 2>"$work/again.err" || status=$?
[[ $status == 1 ]] || fail "backup into a non-empty directory: exit $status, expected 1"
grep -qi "exists" "$work/again.err" || fail "no ALREADY_EXISTS message: $(cat "$work/again.err")"
mkdir -p "$work/outside"
status=0
"$dictlog" --server="$server" backup --out="$work/../outside-copy" 2>"$work/outside.err" ||
  status=$?
[[ $status == 1 ]] || fail "backup outside --backup_root: exit $status, expected 1"
grep -q "PERMISSION_DENIED.*--backup_root" "$work/outside.err" ||
  fail "no PERMISSION_DENIED message: $(cat "$work/outside.err")"
[[ ! -e "$work/../outside-copy" ]] || fail "a backup outside --backup_root was written"
stop_server

# Restore: a server on the copy.
rm -rf "$work/data"
mv "$work/copy" "$work/data"
start_server
for category in HDFS Spark; do
  "$dictlog" --server="$server" scan --category=$category >"$work/$category.scan"
  cmp "$work/$category.expected" "$work/$category.scan" ||
    fail "restored $category differs from the loghub file"
done
"$dictlog" --server="$server" verify >"$work/verify.out"
grep -q ": 0 corrupt" "$work/verify.out" || fail "verify: $(cat "$work/verify.out")"
"$dictlog" --server="$server" pools >"$work/pools.out"
grep -q "^HDFS .*(full)\|^HDFS .*(compact)" "$work/pools.out" ||
  fail "HDFS lost its dictionary: $(cat "$work/pools.out")"
stop_server
echo PASS
