#!/usr/bin/env bash
# `bazel run -c opt //benchmarks/compare -- --dir=... [--mode=quick|full] [--out=DIR]`:
# runs compare.py with the binaries of this build (dictlogd, dictlog, dictlog-bench,
# compare_server) from the runfiles, in the directory bazel run was called from.
# python3 from PATH draws the charts if it has matplotlib.
set -euo pipefail
here="${RUNFILES_DIR:-$0.runfiles}/${TEST_WORKSPACE:-dictlog}"
[[ -d "$here" ]] || here="$(cd "$(dirname "$0")" && pwd)/compare.runfiles/dictlog"
here="$(cd "$here" && pwd)"
cd "${BUILD_WORKING_DIRECTORY:-.}"
exec "${PYTHON:-python3}" "$here/benchmarks/compare/compare.py" \
  --dictlogd="$here/server/daemon/dictlogd" \
  --dictlog="$here/client/cli/dictlog" \
  --bench="$here/benchmarks/dictlog-bench" \
  --compare_server="$here/benchmarks/compare/compare_server" \
  "$@"
