#!/usr/bin/env bash
# Runs compare_report_test.py with Debian's python3 (py_test would pick the one on PATH).
set -euo pipefail
exec /usr/bin/python3 "${TEST_SRCDIR}/${TEST_WORKSPACE:-dictlog}/benchmarks/compare/compare_report_test.py" -v
