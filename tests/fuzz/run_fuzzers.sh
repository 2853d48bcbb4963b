#!/usr/bin/env bash
# Builds the libFuzzer targets with clang-14 (ASan + UBSan) in a Bazel output base of
# their own, so the normal gcc build is left alone, then fuzzes each target for a set
# time starting from the checked-in corpus and prints executions, coverage and crashes.
# Crash inputs go to $WORK/crashes/<target>/ (copy them to tests/fuzz/crashes/<target>/
# once fixed). See tests/fuzz/README.md.
#
# Usage: tests/fuzz/run_fuzzers.sh [--seconds=60] [--targets=a,b] [--work=DIR] [--minimize]
#   --minimize   afterwards, merge what was found into tests/fuzz/corpus/<target>
#                (libFuzzer -merge=1 -use_counters=0: the fewest inputs that cover
#                every edge reached, hit counts ignored, which keeps the corpus small)
set -euo pipefail

SECONDS_PER_TARGET=60
TARGETS="record_decode,block_content,service,dictionary_import"
WORK="${TMPDIR:-/tmp}/dictlog-fuzz-work"
MINIMIZE=0
for arg in "$@"; do
  case "$arg" in
    --seconds=*) SECONDS_PER_TARGET="${arg#*=}" ;;
    --targets=*) TARGETS="${arg#*=}" ;;
    --work=*) WORK="${arg#*=}" ;;
    --minimize) MINIMIZE=1 ;;
    *) echo "unknown argument: $arg" >&2; exit 2 ;;
  esac
done

cd "$(dirname "$0")/../.."
ROOT="$PWD"
OUTPUT_BASE="${DICTLOG_FUZZ_OUTPUT_BASE:-$HOME/.cache/dictlog-fuzz}"
BAZEL=(bazel --output_base="$OUTPUT_BASE")

"${BAZEL[@]}" build --config=fuzz //tests/fuzz:fuzzers
BIN="$("${BAZEL[@]}" info --config=fuzz bazel-bin 2>/dev/null)/tests/fuzz"

export DICTLOG_FUZZ_DATA="$ROOT/tests/fuzz/data"
export ASAN_OPTIONS="abort_on_error=1"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
mkdir -p "$WORK"
status=0
printf '%-18s %8s %12s %9s %7s %7s %7s %8s\n' target seconds executions exec/s cov ft corpus crashes
for target in ${TARGETS//,/ }; do
  corpus="$WORK/corpus/$target"
  crashes="$WORK/crashes/$target"
  mkdir -p "$corpus" "$crashes"
  log="$WORK/$target.log"
  # The engine targets keep a store across inputs, so nearly every input allocates more
  # than it frees, and libFuzzer would run a whole-heap leak scan after each (90% of
  # the time). Leaks are checked on the codec targets.
  leaks=1
  case "$target" in service | dictionary_import) leaks=0 ;; esac
  # New inputs go to the first directory; the checked-in corpus is only read.
  "$BIN/$target" -max_total_time="$SECONDS_PER_TARGET" -print_final_stats=1 \
    -timeout=10 -rss_limit_mb=4096 -detect_leaks="$leaks" -artifact_prefix="$crashes/" \
    "$corpus" "tests/fuzz/corpus/$target" >"$log" 2>&1 || true
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -n 1)
  cov=$(grep -oE 'cov: [0-9]+' "$log" | tail -n 1 | cut -d' ' -f2)
  ft=$(grep -oE 'ft: [0-9]+' "$log" | tail -n 1 | cut -d' ' -f2)
  found=$(find "$crashes" -type f | wc -l)
  size=$(grep -oE 'corp: [0-9]+' "$log" | tail -n 1 | cut -d' ' -f2)
  printf '%-18s %8s %12s %9s %7s %7s %7s %8s\n' "$target" "$SECONDS_PER_TARGET" \
    "${execs:-?}" "$(( ${execs:-0} / SECONDS_PER_TARGET ))" "${cov:-?}" "${ft:-?}" \
    "${size:-?}" "$found"
  if [ "$found" -ne 0 ] || ! grep -q '^stat::number_of_executed_units' "$log"; then
    echo "  $target: crash or early exit; see $log and $crashes" >&2
    status=1
  fi
  if [ "$MINIMIZE" = 1 ]; then
    merged="$WORK/merged/$target"
    rm -rf "$merged" && mkdir -p "$merged"
    "$BIN/$target" -merge=1 -use_counters=0 -detect_leaks=0 "$merged" "tests/fuzz/corpus/$target" "$corpus" \
      >"$WORK/$target.merge.log" 2>&1
    rm -rf "tests/fuzz/corpus/$target" && cp -r "$merged" "tests/fuzz/corpus/$target"
    echo "  $target: corpus minimized to $(ls "tests/fuzz/corpus/$target" | wc -l) files"
  fi
done
exit "$status"
