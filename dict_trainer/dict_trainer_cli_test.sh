#!/usr/bin/env bash
# The dict_trainer CLI end to end on generated log lines: a file and a directory as
# input, the dictionary it writes checked with the zstd CLI (compress and decompress a
# line with it), the table on stdout, and the exit codes (0 ok, 1 too little data,
# 2 usage errors).
set -euo pipefail

runfiles="${TEST_SRCDIR}/${TEST_WORKSPACE:-dictlog}"
trainer="$runfiles/dict_trainer/dict_trainer"
zstd=/usr/bin/zstd
work="${TEST_TMPDIR}/dict_trainer_cli"
rm -rf "$work" && mkdir -p "$work"

fail() { echo "FAIL: $*" >&2; exit 1; }

# Runs the trainer with "$@"; sets $code, stdout in $work/stdout, stderr in $work/stderr.
run() {
  code=0
  "$trainer" "$@" >"$work/stdout" 2>"$work/stderr" || code=$?
}

expect_code() {
  [[ $code -eq $1 ]] || { cat "$work/stderr" >&2; fail "$2: exit $code, want $1"; }
}

expect_in() {  # expect_in FILE TEXT
  grep -qF -- "$2" "$1" || { cat "$1" >&2; fail "'$2' not in $(basename "$1")"; }
}

# Log-like lines: repeated structure, varied numbers.
awk 'BEGIN {
  srand(7);
  split("INFO WARN ERROR DEBUG", level, " ");
  split("dfs.DataNode sshd kernel nova.compute mapred.JobTracker", component, " ");
  for (i = 0; i < 6000; i++) {
    printf "2024-03-%02d %02d:%02d:%02d,%03d %s %s: block blk_%d served to " \
      "10.%d.%d.%d:%d in %d ms\n",
      1 + int(rand() * 28), int(rand() * 24), int(rand() * 60), int(rand() * 60),
      int(rand() * 1000), level[1 + int(rand() * 4)], component[1 + int(rand() * 5)],
      int(rand() * 10000000), int(rand() * 256), int(rand() * 256), int(rand() * 256),
      50000 + int(rand() * 20), int(rand() * 5000);
  }
}' >"$work/app.log"
[[ $(wc -l <"$work/app.log") -eq 6000 ]] || fail "generator wrote no 6000 lines"

# 1. A file: exit 0, the table on stdout, a valid zstd dictionary with our id.
run --out="$work/file.dict" --size=8192 --id=40000 "$work/app.log"
expect_code 0 "training on a file"
expect_in "$work/stdout" "dictionary  $work/file.dict  id 40000  "
expect_in "$work/stdout" "trained on "
expect_in "$work/stdout" \
  "records  raw_bytes  stored_bytes  ratio   compress_MB/s  decompress_MB/s"
expect_in "$work/stdout" "no dictionary"
expect_in "$work/stdout" "candidate "
expect_in "$work/stdout" "gain: +"
expect_in "$work/stderr" "read 1/1 files, 6000 records"
expect_in "$work/stderr" "evaluate"
grep -q '^no dictionary  *600 ' "$work/stdout" || fail "600 held-out records expected"
[[ -s "$work/file.dict" && ! -e "$work/file.dict.tmp" ]] || fail "file.dict not written"
[[ $(stat -c %s "$work/file.dict") -le 8192 ]] || fail "dictionary larger than --size"

sed -n 4242p "$work/app.log" >"$work/line.txt"
"$zstd" -q -D "$work/file.dict" "$work/line.txt" -o "$work/line.zst" ||
  fail "zstd cannot compress with the dictionary"
"$zstd" -q -d -D "$work/file.dict" "$work/line.zst" -o "$work/line.out" ||
  fail "zstd cannot decompress with the dictionary"
cmp "$work/line.txt" "$work/line.out" || fail "round trip through zstd -D differs"
"$zstd" -lv "$work/line.zst" 2>&1 | grep -q "DictID: 40000" ||
  fail "the frame does not name dictionary 40000"

# 2. A directory (files sorted by name), against the first dictionary as baseline; no
#    --id: a random one at or above 32768, printed.
mkdir -p "$work/dir"
split -l 2000 -d "$work/app.log" "$work/dir/part-"
run --out="$work/dir.dict" --size=8192 --baseline="$work/file.dict" "$work/dir"
expect_code 0 "training on a directory"
expect_in "$work/stderr" "read 3/3 files, 6000 records"
expect_in "$work/stdout" "baseline $work/file.dict"
expect_in "$work/stdout" "candidate "
id=$(sed -n 's/^dictionary .* id \([0-9]*\) .*/\1/p' "$work/stdout")
[[ -n "$id" && $id -ge 32768 ]] || fail "random id '$id' not at or above 32768"
expect_in "$work/stderr" "dictionary id $id"
"$zstd" -q -D "$work/dir.dict" "$work/line.txt" -o "$work/line2.zst" ||
  fail "zstd cannot compress with the directory's dictionary"
"$zstd" -q -d -D "$work/dir.dict" "$work/line2.zst" -o "$work/line2.out" ||
  fail "zstd cannot decompress with the directory's dictionary"
cmp "$work/line.txt" "$work/line2.out" || fail "round trip with dir.dict differs"

# 2b. --compact: a dictionary stock zstd loads and uses both ways (issue 8).
run --out="$work/compact.dict" --size=8192 --id=40001 --compact "$work/app.log"
expect_code 0 "training a compact dictionary"
"$zstd" -q -D "$work/compact.dict" "$work/line.txt" -o "$work/line3.zst" ||
  fail "zstd cannot compress with the compact dictionary"
"$zstd" -q -d -D "$work/compact.dict" "$work/line3.zst" -o "$work/line3.out" ||
  fail "zstd cannot decompress with the compact dictionary"
cmp "$work/line.txt" "$work/line3.out" || fail "round trip with compact.dict differs"
"$zstd" -lv "$work/line3.zst" 2>&1 | grep -q "DictID: 40001" ||
  fail "the compact frame does not name dictionary 40001"

# 3. Too little data: exit 1 saying how much is needed; no dictionary written.
head -n 40 "$work/app.log" >"$work/small.log"
run --out="$work/small.dict" --id=40000 "$work/small.log"
expect_code 1 "too little data"
expect_in "$work/stderr" "FAILED_PRECONDITION"
expect_in "$work/stderr" "needs at least"
[[ ! -e "$work/small.dict" && ! -e "$work/small.dict.tmp" ]] || fail "small.dict written"

# 4. Usage errors: exit 2.
run "$work/app.log"
expect_code 2 "no --out"
expect_in "$work/stderr" "--out"
run --out="$work/x.dict"
expect_code 2 "no input"
run --out="$work/x.dict" "$work/absent.log"
expect_code 2 "missing input"
expect_in "$work/stderr" "absent.log"
run --out="$work/x.dict" --baseline="$work/app.log" "$work/app.log"
expect_code 2 "a baseline that is not a dictionary"
run --out="$work/x.dict" --id=5 "$work/app.log"
expect_code 2 "a reserved id"
[[ ! -e "$work/x.dict" ]] || fail "x.dict written on a usage error"

# Flag errors are usage errors too (issue 17).
run --out="$work/x.dict" --size=-1 "$work/app.log"
expect_code 2 "a negative --size"
expect_in "$work/stderr" "--size=-1"
run --out="$work/x.dict" --frobnicate "$work/app.log"
expect_code 2 "an unknown flag"
expect_in "$work/stderr" "unknown flag --frobnicate"

# 5. --help explains the usage, and exits 0; --version names dictlog's and zstd's.
run --help
expect_code 0 "--help"
expect_in "$work/stdout" "Usage: dict_trainer --out=FILE"
expect_in "$work/stdout" "Exit status"
run --version
expect_code 0 "--version"
expect_in "$work/stdout" "dict_trainer (dictlog "
expect_in "$work/stdout" "): zstd 1."

# 6. A leading ~/ in --out is the home directory (the shell leaves it after --out=).
mkdir -p "$work/home"
code=0
HOME="$work/home" "$trainer" '--out=~/app.dict' "$work/app.log" >"$work/stdout" \
  2>"$work/stderr" || code=$?
expect_code 0 "--out=~/app.dict"
[[ -s "$work/home/app.dict" ]] || fail "--out=~/app.dict not written to \$HOME"

echo PASS
