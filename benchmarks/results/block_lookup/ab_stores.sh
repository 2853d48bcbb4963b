#!/usr/bin/env bash
# ab_stores.sh DIR_A DIR_B BIN OP DIST SECS ROUNDS: served_cpu.sh (beside this script) on two
# stores with one binary, alternating which store runs first (A B, then B A, ...). Prints
# one line a run: round, store, records/s and server CPU a record. Used by RESULTS.md
# "MultiGet looks in blocks first" (the blocks family at 1 KiB table blocks).
set -euo pipefail
a=$1 b=$2 bin=$3 op=$4 dist=$5 secs=$6 rounds=$7
s=$(dirname "$0")/served_cpu.sh
for r in $(seq $rounds); do
  if (( r % 2 == 1 )); then order="A B"; else order="B A"; fi
  for t in $order; do
    dir=$a; [[ $t == B ]] && dir=$b
    echo "round $r $t $(bash $s $dir $bin $op $dist $secs)"
  done
done
