#!/usr/bin/env bash
set -euo pipefail
cd "$(dirname "$0")/../../.."  # the workspace; NEW = /tmp/trainer_new, BEFORE = /tmp/trainer_before
python3 benchmarks/compare/compare.py --dir=/work/shared/data/loghub --mode=scale \
  --configs=record+dict,block4k+dict,rocksdb_dict --dists=uniform --page_cache=keep \
  --duration=3s --dictlogd=/tmp/trainer_new/dictlogd --dictlog=/tmp/trainer_new/dictlog \
  --bench=/tmp/trainer_new/dictlog-bench --compare_server=/tmp/trainer_new/compare_server \
  --dictlogd_before=/tmp/trainer_before/dictlogd --out=/tmp/trainer_compare \
  --work_dir=/tmp/trainer-scale-work --keep_data
