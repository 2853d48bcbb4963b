#!/bin/bash
# The crash test's short setting (10 kill/restart cycles), run by `bazel test //...`.
# The binary prints the seed; rerun a failure with
#   bazel-bin/tests/reliability/crash_test --seed=N
set -euo pipefail
exec "$TEST_SRCDIR/$TEST_WORKSPACE/tests/reliability/crash_test" --cycles=10 --max_seconds=200 "$@"
