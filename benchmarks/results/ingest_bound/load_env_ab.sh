#!/usr/bin/env bash
# load_env_ab.sh BIN_DIR LABEL [ENV=VALUE...]: one record+dict load of 2,000,000 loghub
# records (dictlog-bench load --copies=100, one loader) into a fresh dictlogd started
# with the given environment (e.g. a tcmalloc setting); prints the load's seconds and
# dictlogd's CPU seconds over it. Alternate labels for an A/B:
#   for r in 1 2 3; do load_env_ab.sh BIN base; load_env_ab.sh BIN tc TCMALLOC_...=...; done
# Data under /tmp/load_env_ab/LABEL.
set -euo pipefail
bin=$1 label=$2; shift 2
source "$(dirname "$0")/server_lib.sh"
pid=
trap '[[ -n "$pid" ]] && kill -KILL "$pid" 2>/dev/null || true' EXIT
out=/tmp/load_env_ab/$label
start_record_dict "$out" "$@"
cpu() { read -r -a stat < "/proc/$pid/stat"; echo $(( stat[13] + stat[14] )); }
c0=$(cpu); t0=$(now)
"$bin/dictlog-bench" load --server=127.0.0.1:$port --dir=/work/shared/data/loghub --copies=100 \
  --ids_out="$out/ids" > "$out/load.log" 2>&1
t1=$(now); c1=$(cpu)
stop
echo "$label load_s $(secs "$t0" "$t1") cpu_s $(echo "($c1 - $c0)/$(getconf CLK_TCK)" | bc -l | cut -c1-6)"
