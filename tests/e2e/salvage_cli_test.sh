#!/usr/bin/env bash
# End to end through the real binaries: a store whose records table has one damaged
# byte is salvaged (`dictlogd --salvage_from`) into a new directory; a dictlogd on the
# salvaged store serves every record but the lost ones byte for byte, answers the lost
# ones DATA_LOSS (exit 1), and `dictlog verify` lists the lost id range apart from
# corrupt records (exit 0: a known loss, not new damage).
set -euo pipefail

work="${TEST_TMPDIR}/salvage_cli"
rm -rf "$work" && mkdir -p "$work"
source "${TEST_SRCDIR}/${TEST_WORKSPACE:-dictlog}/tests/e2e/server_lib.sh"

start_server
"$dictlog" --server="$server" append --category=HDFS "$logs/HDFS.log" >/dev/null
"$dictlog" --server="$server" flush >/dev/null
stop_server
sed -e 's/\r$//' "$logs/HDFS.log" >"$work/HDFS.expected"  # Records: lines without CRLF.

# One byte flipped a third into the largest table file (the records family's): inside
# a data block, before the index and properties blocks at the file's end.
table=$(find "$work/data" -name '*.sst' -printf '%s %p\n' | sort -n | tail -1 | cut -d' ' -f2)
python3 - "$table" <<'EOF'
import os, sys
path = sys.argv[1]
at = os.path.getsize(path) // 3
with open(path, "r+b") as f:
    f.seek(at)
    byte = f.read(1)[0]
    f.seek(at)
    f.write(bytes([byte ^ 0x5A]))
EOF

"$dictlogd" --salvage_from="$work/data" --data_dir="$work/salvaged" >"$work/salvage.out" 2>&1 ||
  { cat "$work/salvage.out"; fail "salvage failed"; }
grep -q "^  lost: HDFS/" "$work/salvage.out" || fail "no lost range: $(cat "$work/salvage.out")"
mv "$work/data" "$work/damaged"
mv "$work/salvaged" "$work/data"
start_server

"$dictlog" --server="$server" verify >"$work/verify.out" ||
  fail "verify exited $? on a salvaged store: $(cat "$work/verify.out")"
line=$(grep -P '^lost\tHDFS/[0-9]+ to HDFS/[0-9]+\t' "$work/verify.out") ||
  fail "verify lists no lost range: $(cat "$work/verify.out")"
grep -q ": 0 corrupt; 1 id range(s) lost in a salvage (known, not corrupt)$" \
  "$work/verify.out" || fail "verify summary: $(cat "$work/verify.out")"
first=$(echo "$line" | sed -E 's/^lost\tHDFS\/([0-9]+) to .*/\1/')
last=$(echo "$line" | sed -E 's/^lost\tHDFS\/[0-9]+ to HDFS\/([0-9]+)\t.*/\1/')
(( first <= last )) || fail "lost range $first..$last"

# Every seq in the range reads DATA_LOSS; the records on both sides read back as loaded.
for seq in "$first" "$last"; do
  status=0
  "$dictlog" --server="$server" get "HDFS/$seq" >/dev/null 2>"$work/get.err" || status=$?
  [[ $status == 1 ]] || fail "get HDFS/$seq in the lost range: exit $status, expected 1"
  grep -q "DATA_LOSS" "$work/get.err" || fail "get HDFS/$seq: $(cat "$work/get.err")"
done
total=$(wc -l <"$work/HDFS.expected")
for seq in $((first - 1)) $((last + 1)); do
  (( seq >= 1 && seq <= total )) || continue
  "$dictlog" --server="$server" get "HDFS/$seq" >"$work/got" || fail "get HDFS/$seq failed"
  sed -n "${seq}p" "$work/HDFS.expected" | cmp -s - "$work/got" ||
    fail "HDFS/$seq differs: $(cat "$work/got")"
done
stop_server
