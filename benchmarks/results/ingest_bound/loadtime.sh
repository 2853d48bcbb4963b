#!/usr/bin/env bash
# Used by RESULTS.md "Record mode's load, per record" (2026-11-28). Servers on 127.0.0.1 port 0.
# loadtime.sh NAME ARGV...: start a server (port file), time dictlog-bench load --copies=100, stop it
set -euo pipefail
name=$1; shift
d=/tmp/lt/$name; rm -rf $d; mkdir -p $d
"$@" --port_file=$d/port > $d/server.log 2>&1 &
pid=$!
for _ in $(seq 1 300); do [[ -s $d/port ]] && break; sleep 0.1; done
port=$(cat $d/port)
read -r -a s0 < /proc/$pid/stat
t0=$(date +%s.%N)
/tmp/bin/dictlog-bench load --server=127.0.0.1:$port --dir=/work/shared/data/loghub --copies=100 --ids_out=$d/ids > $d/load.log 2>&1
t1=$(date +%s.%N)
read -r -a s1 < /proc/$pid/stat
kill -TERM $pid; wait $pid || true
echo "$name load $(echo "$t1 - $t0" | bc) s, server cpu $(( (s1[13]+s1[14]-s0[13]-s0[14]) ))0 ms"
