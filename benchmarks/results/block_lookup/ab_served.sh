#!/usr/bin/env bash
# ab_served.sh DIR BIN_A BIN_B OP DIST SECS ROUNDS: served_cpu.sh (beside this script) on the
# store in DIR with BIN_A's and BIN_B's dictlogd, alternating which runs first (A B, then
# B A, ...): the order of a pair alone moved server CPU a record by about 10% on this host
# (RESULTS.md "Forward seeks to indexed blocks"). With DIR_B set, B runs on the store in
# DIR_B instead (two stores; BIN_A = BIN_B for one binary). Prints one line a run: round,
# A or B, records/s and server CPU a record. Used by RESULTS.md "A MultiGet's interrupt
# asked between chunks only" and "MultiGet looks in blocks first".
set -euo pipefail
dir=$1 a=$2 b=$3 op=$4 dist=$5 secs=$6 rounds=$7
dir_b=${DIR_B:-$dir}
s=$(dirname "$0")/served_cpu.sh
for r in $(seq $rounds); do
  if (( r % 2 == 1 )); then order="A B"; else order="B A"; fi
  for t in $order; do
    bin=$a store=$dir
    [[ $t == B ]] && bin=$b store=$dir_b
    echo "round $r $t $(bash $s $store $bin $op $dist $secs)"
  done
done
