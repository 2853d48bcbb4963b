#!/usr/bin/env bash
# ab_served.sh DIR BIN_A BIN_B OP DIST SECS ROUNDS: served_cpu.sh (beside this script) on the
# store in DIR with BIN_A's and BIN_B's dictlogd, alternating which runs first (A B, then
# B A, ...): the order of a pair alone moved server CPU a record by about 10% on this host
# (RESULTS.md "Forward seeks to indexed blocks"). Prints one line a run: round, binary,
# records/s and server CPU a record. Used by RESULTS.md "A MultiGet's interrupt asked
# between chunks only".
set -euo pipefail
dir=$1 a=$2 b=$3 op=$4 dist=$5 secs=$6 rounds=$7
s=$(dirname "$0")/served_cpu.sh
for r in $(seq $rounds); do
  if (( r % 2 == 1 )); then order="A B"; else order="B A"; fi
  for t in $order; do
    bin=$a; [[ $t == B ]] && bin=$b
    echo "round $r $t $(bash $s $dir $bin $op $dist $secs)"
  done
done
