#!/bin/bash
# usage: readtune_prof.sh DICTLOGD TAG [env...]  : frames_bench record mode, perf per case
set -u
BIN=$1; TAG=$2; shift 2
OUT=/tmp/readtune_prof/$TAG; mkdir -p $OUT
cd /work/wt-readtune
env "$@" bazel-out/k8-opt/bin/benchmarks/frames_bench --dictlogd=$BIN --dir=/work/shared/data/loghub \
  --copies=${COPIES:-100} --duration=${DUR:-10s} --threads=8 --modes=record --work_dir=/tmp/readtune_fb_$TAG \
  --csv=$OUT/frames.csv > $OUT/fb.log 2>&1 &
FB=$!
while ! grep -q "pid" $OUT/fb.log 2>/dev/null; do sleep 1; if ! kill -0 $FB 2>/dev/null; then echo died; cat $OUT/fb.log; exit 1; fi; done
PID=$(grep -o "pid [0-9]*" $OUT/fb.log | awk '{print $2}')
for c in "server" "client-packed"; do
  while ! grep -q "timing record $c" $OUT/fb.log; do sleep 0.5; if ! kill -0 $FB 2>/dev/null; then break 2; fi; done
  sleep 1
  if [ "${PERF:-1}" = 1 ]; then perf record -F 499 -g -p $PID -o $OUT/perf_$c.data -- sleep 6 > /dev/null 2>&1; fi
done
wait $FB
cat $OUT/fb.log | tail -5
