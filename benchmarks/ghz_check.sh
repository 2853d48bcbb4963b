#!/usr/bin/env bash
# Checks that ghz (an independent gRPC load tester, Go module proxy, pinned v0.120.0)
# drives dictlogd through server reflection: starts dictlogd from ./bin on 127.0.0.1
# port 0, appends HDFS.log, runs ghz against Get and MultiGet for a few seconds each,
# and fails unless nearly every call is OK. Prints ghz's summary line for each.
#   make build && benchmarks/ghz_check.sh [--duration=3s]
set -euo pipefail
duration=3s
for arg in "$@"; do
  case "$arg" in
    --duration=*) duration="${arg#*=}" ;;
    *) echo "usage: $0 [--duration=3s]" >&2; exit 2 ;;
  esac
done
root=$(cd "$(dirname "$0")/.." && pwd)
ghz="$(go env GOPATH)/bin/ghz"
if [[ ! -x "$ghz" ]]; then
  echo "installing ghz v0.120.0 from the Go module proxy"
  go install github.com/bojand/ghz/cmd/ghz@v0.120.0
fi
[[ -x "$root/bin/dictlogd" && -x "$root/bin/dictlog" ]] || { echo "run make build first" >&2; exit 1; }
work=$(mktemp -d)
"$root/bin/dictlogd" --listen=127.0.0.1:0 --port_file="$work/port" --data_dir="$work/data" \
  >"$work/server.log" 2>&1 &
pid=$!
trap 'kill "$pid" 2>/dev/null || true; rm -rf "$work"' EXIT
for _ in $(seq 1 100); do [[ -s "$work/port" ]] && break; sleep 0.1; done
server="127.0.0.1:$(cat "$work/port")"
"$root/bin/dictlog" --server="$server" append --category=HDFS \
  "$root/../shared/data/loghub/HDFS.log" >/dev/null

run() {  # name, method, data
  "$ghz" --insecure --call "$2" -d "$3" --duration "$duration" --concurrency 16 \
    --connections 2 -O json "$server" >"$work/$1.json"
  python3 - "$work/$1.json" "$1" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
codes = r.get("statusCodeDistribution", {})
ok = codes.get("OK", 0)
p = {d["percentage"]: d["latency"] / 1e6 for d in r.get("latencyDistribution") or []}
print(f"ghz {sys.argv[2]}: {r['count']} calls, {r['rps']:.0f}/s, p50 {p.get(50, 0):.2f} ms, "
      f"p99 {p.get(99, 0):.2f} ms, codes {codes}")
# Calls cut off when the duration ends may report UNAVAILABLE/CANCELLED; no more.
if ok == 0 or r["count"] - ok > 64:
    sys.exit(f"ghz {sys.argv[2]}: too few OK calls")
PY
}
run get dictlog.v1.LogStore/Get '{"id":"HDFS/{{randomInt 1 2000}}"}'
run multiget dictlog.v1.LogStore/MultiGet \
  '{"ids":["HDFS/{{randomInt 1 2000}}","HDFS/{{randomInt 1 2000}}","HDFS/{{randomInt 1 2000}}","HDFS/{{randomInt 1 2000}}"]}'
echo "ghz_check: ok"
