#!/usr/bin/env bash
# Bazel wrapper of security_test.py: runs it with Debian's python3 (DICTLOG_PYTHON
# overrides) on the package from runfiles and the real dictlogd, as roundtrip_test.sh.
set -euo pipefail
runfiles="${TEST_SRCDIR}/${TEST_WORKSPACE:-dictlog}"
python="${DICTLOG_PYTHON:-/usr/bin/python3}"
export PYTHONPATH="$runfiles/client/python" PYTHONDONTWRITEBYTECODE=1
export DICTLOGD="$runfiles/server/service/dictlogd" LOGHUB="${TEST_SRCDIR}/loghub"
# As a module from the runfiles directory: running the script by path would put its
# symlink's target, the source tree (without generated stubs), first on sys.path.
cd "$runfiles/client/python"
exec "$python" -m security_test
