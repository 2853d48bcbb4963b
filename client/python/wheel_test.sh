#!/usr/bin/env bash
# The Python client as a user installs it: builds the wheel from a copy of the
# checkout's client/python and proto/ with pip (build dependencies, grpcio-tools among
# them, from PyPI; the stubs are generated from proto/ during the build), installs it
# into fresh virtual environments made by Debian's `python3 -m venv`, once with the
# newest dependencies pip picks and once with exactly the lowest versions
# pyproject.toml allows, and runs client_test and roundtrip_test with each, against the
# real dictlogd. Needs PyPI; reads nothing else outside the repository (pip runs
# --isolated: no pip.conf, no PIP_* variables). PIP_CACHE_DIR (--test_env) is used as
# pip's cache if set and writable; otherwise the cache is fresh under TEST_TMPDIR.
set -euo pipefail
runfiles="${TEST_SRCDIR}/${TEST_WORKSPACE:-dictlog}"
python="${DICTLOG_PYTHON:-/usr/bin/python3}"
work="${TEST_TMPDIR}/wheel"
rm -rf "$work" && mkdir -p "$work/src/client" "$work/src/proto" "$work/tests"
export PYTHONDONTWRITEBYTECODE=1
export DICTLOGD="$runfiles/server/daemon/dictlogd" LOGHUB="${TEST_SRCDIR}/loghub"
fail() { echo "FAIL: $*" >&2; exit 1; }

# The source tree as in a checkout: client/python (no generated stubs) and proto/.
cp -rL "$runfiles/client/python" "$work/src/client/python"
cp -L "$runfiles/proto/dictlog.proto" "$work/src/proto/"
[[ ! -e "$work/src/client/python/dictlog_client/dictlog_pb2.py" ]] ||
  fail "generated stubs in the source copy"
# The tests run from a directory without the package, so they import the installed one.
cp -L "$runfiles/client/python/client_test.py" "$runfiles/client/python/roundtrip_test.py" \
  "$work/tests/"

pip_flags=(--isolated --no-input --disable-pip-version-check
           "--cache-dir=${PIP_CACHE_DIR:-$work/pip-cache}")
step() { echo "--- ${SECONDS}s: $*"; }
step "build the wheel"
# The first venv builds the wheel, then installs it with the newest dependencies.
"$python" -m venv "$work/newest" || fail "python3 -m venv failed (apt-get install python3-venv)"
"$work/newest/bin/pip" "${pip_flags[@]}" wheel --no-deps -w "$work/dist" \
  "$work/src/client/python" || fail "pip wheel failed"
wheel=$(ls "$work"/dist/dictlog_client-*-py3-none-any.whl)
"$python" - "$wheel" <<'PY' || fail "the wheel lacks files"
import sys, zipfile
names = set(zipfile.ZipFile(sys.argv[1]).namelist())
for name in ("client", "errors", "dictlog_pb2", "dictlog_pb2_grpc"):
    assert f"dictlog_client/{name}.py" in names, (name, sorted(names))
assert {"dictlog_client/py.typed", "dictlog_client/dictlog_pb2.pyi"} <= names, sorted(names)
PY

# The lowest versions the wheel's requirements allow ("x>=1.2" -> "x==1.2").
lowest=$("$python" - "$work/src/client/python/pyproject.toml" <<'PY'
import re, sys, tomllib
with open(sys.argv[1], "rb") as f:
    dependencies = tomllib.load(f)["project"]["dependencies"]
for dependency in dependencies:
    name, version = re.match(r"([A-Za-z0-9_.-]+)\s*>=\s*([^,\s]+)", dependency).groups()
    print(f"{name}=={version}")
PY
)

run_tests() {  # run_tests VENV_NAME [EXTRA_REQUIREMENT...]
  local venv="$work/$1"
  shift
  step "install the wheel into venv $(basename "$venv") $*"
  [[ -d "$venv" ]] || "$python" -m venv "$venv"
  "$venv/bin/pip" "${pip_flags[@]}" install "$wheel" "$@" || fail "pip install failed"
  "$venv/bin/pip" "${pip_flags[@]}" check || fail "pip check failed"
  "$venv/bin/pip" "${pip_flags[@]}" list
  step "client_test and roundtrip_test in venv $(basename "$venv")"
  (cd "$work/tests" && "$venv/bin/python" -c '
import sys, dictlog_client
assert dictlog_client.__file__.startswith(sys.prefix), dictlog_client.__file__' &&
    TEST_TMPDIR="$work" "$venv/bin/python" -m unittest client_test roundtrip_test) ||
    fail "tests failed in $venv"
}
run_tests newest
# shellcheck disable=SC2086  # one requirement a word
run_tests lowest $lowest
step PASS
