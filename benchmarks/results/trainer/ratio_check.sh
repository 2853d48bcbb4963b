#!/usr/bin/env bash
# ratio_check.sh DB: on a copy of main's record+dict scale store, re-encodes four pools
# with their first dictionary (instead of the growth one) and prints stored bytes of both.
set -euo pipefail
db=$1 bin=/tmp/trainer_before out=/tmp/trainer_prof/ratio_check
rm -rf $out; mkdir -p $out
"$bin/dictlogd" --listen=127.0.0.1:0 --port_file=$out/port --data_dir=$db --auto_train=false \
  --recompress_records_per_second=10000000 --block_cache_mb=31 > $out/server.log 2>&1 &
pid=$!
trap 'kill -TERM $pid 2>/dev/null || true' EXIT
for _ in $(seq 1 600); do [[ -s $out/port ]] && break; sleep 0.1; done
s=127.0.0.1:$(cat $out/port)
"$bin/dictlog" --server=$s --format=json pools > $out/pools_before.json
"$bin/dictlog" --server=$s --format=json dict list > $out/dicts.json
for pair in HealthApp:32773 Linux:32774 OpenSSH:32775 Spark:32776; do
  p=${pair%%:*} id=${pair##*:}
  "$bin/dictlog" --server=$s dict activate --pool=$p --id=$id
  "$bin/dictlog" --server=$s recompress --pool=$p | tail -1
done
"$bin/dictlog" --server=$s --format=json pools > $out/pools_after.json
