#!/usr/bin/env bash
# End to end: Prometheus metrics. The real dictlogd with --metrics_listen on 127.0.0.1
# port 0; loghub traffic through the CLI (appends, reads, a failed read, training,
# re-compression, verify); the scrape's values must match the traffic, and the whole
# exposition must pass `promtool check metrics` (Debian package prometheus). Scrapes
# carry the bearer token of --metrics_token_file; one without it is refused (401).
set -euo pipefail

work="${TEST_TMPDIR}/metrics"
rm -rf "$work" && mkdir -p "$work"
source "${TEST_SRCDIR}/${TEST_WORKSPACE:-dictlog}/tests/e2e/server_lib.sh"
command -v promtool >/dev/null || fail "promtool not found: apt-get install prometheus"

# The raw response to GET /metrics with header line $1 (bash /dev/tcp: no HTTP client
# needed).
request() {
  exec 3<>"/dev/tcp/127.0.0.1/$(cat "$work/metrics_port")"
  printf 'GET /metrics HTTP/1.1\r\nHost: localhost\r\n%s\r\n' "$1" >&3
  cat <&3
  exec 3<&-
}
# GET /metrics with the token; the body only.
scrape() {
  local response
  response=$(request "Authorization: Bearer $(cat "$work/metrics_token")"$'\r\n')
  [[ "$response" == "HTTP/1.1 200 OK"* ]] || fail "scrape: ${response:0:200}"
  printf '%s\n' "$response" | sed '1,/^\r$/d'
}
# The value of the sample whose name and labels are exactly $2, in scrape file $1.
value() {
  awk -v key="$2" 'substr($0, 1, length(key) + 1) == key " " { print $NF; found = 1 }
                   END { if (!found) print "absent" }' "$1"
}
expect() {  # expect FILE SAMPLE OP NUMBER (OP: -eq, -gt, -ge)
  local got
  got=$(value "$1" "$2")
  [[ "$got" != absent ]] || fail "$2 absent from the scrape"
  # Compare as integers when the value is one, else with awk.
  awk -v a="$got" -v b="$4" -v op="$3" 'BEGIN {
        ok = (op == "-eq" && a == b) || (op == "-gt" && a > b) || (op == "-ge" && a >= b);
        exit !ok }' || fail "$2 is $got, expected $3 $4"
}

head -c 24 /dev/urandom | base64 >"$work/metrics_token"
extra_flags=(--metrics_listen=127.0.0.1:0 "--metrics_port_file=$work/metrics_port"
             "--metrics_token_file=$work/metrics_token" --auto_train=false)
start_server
unauthorized=$(request "")
[[ "$unauthorized" == "HTTP/1.1 401 Unauthorized"* ]] ||
  fail "scrape without the token: ${unauthorized:0:200}"
[[ "$unauthorized" != *dictlog_* ]] || fail "metrics served without the token"
scrape >"$work/before"
promtool check metrics <"$work/before" || fail "promtool rejects the idle server's metrics"
expect "$work/before" dictlog_store_open -eq 1
expect "$work/before" dictlog_appended_records_total -eq 0

"$dictlog" --server="$server" pool create Apache --storage_mode=block --block_bytes=2048 \
  >/dev/null
records=0
bytes=0
for category in HDFS Apache OpenSSH; do
  "$dictlog" --server="$server" append --category=$category "$logs/$category.log" \
    >"$work/$category.ids"
  records=$((records + $(wc -l <"$work/$category.ids")))
  # Payload bytes: the file without its line ends.
  bytes=$((bytes + $(tr -d '\n' <"$logs/$category.log" | wc -c)))
done
head -n 100 "$work/HDFS.ids" | xargs "$dictlog" --server="$server" get >/dev/null
"$dictlog" --server="$server" pool show NoSuchPool >/dev/null 2>&1 && fail "absent pool shown"
"$dictlog" --server="$server" scan --category=OpenSSH --limit=50 >/dev/null
"$dictlog" --server="$server" dict train --pool=HDFS --activate >/dev/null
"$dictlog" --server="$server" recompress --pool=HDFS >/dev/null
"$dictlog" --server="$server" verify >/dev/null
hdfs_records=$(wc -l <"$work/HDFS.ids")

scrape >"$work/after"
promtool check metrics <"$work/after" || fail "promtool rejects the metrics after traffic"
cp "$work/after" "${TEST_UNDECLARED_OUTPUTS_DIR:-$work}/metrics.txt" 2>/dev/null || true

store='service="dictlog.v1.LogStore"'
admin='service="dictlog.v1.Admin"'
expect "$work/after" dictlog_appended_records_total -eq "$records"
expect "$work/after" dictlog_appended_bytes_total -eq "$bytes"
# `get` of 100 ids (one MultiGet) and a scan of 50; Verify reads inside the engine
# and is not counted (reads count what LogStore calls return).
expect "$work/after" dictlog_read_records_total -eq 150
expect "$work/after" "dictlog_rpcs_total{$store,method=\"MultiGet\",code=\"OK\"}" -ge 1
expect "$work/after" "dictlog_rpcs_total{$admin,method=\"GetPool\",code=\"NOT_FOUND\"}" -eq 1
expect "$work/after" "dictlog_rpcs_total{$store,method=\"AppendBatch\",code=\"OK\"}" -ge 3
expect "$work/after" "dictlog_rpcs_total{$admin,method=\"TrainDictionary\",code=\"OK\"}" -eq 1
expect "$work/after" \
  "dictlog_rpc_duration_seconds_count{$store,method=\"Scan\",code=\"OK\"}" -eq 1
expect "$work/after" \
  "dictlog_rpc_duration_seconds_bucket{$store,method=\"Scan\",code=\"OK\",le=\"+Inf\"}" -eq 1
expect "$work/after" \
  "dictlog_rpc_duration_seconds_sum{$admin,method=\"TrainDictionary\",code=\"OK\"}" -gt 0
expect "$work/after" "dictlog_pool_records{pool=\"HDFS\"}" -eq "$hdfs_records"
expect "$work/after" "dictlog_pool_compression_ratio{pool=\"HDFS\"}" -gt 2
expect "$work/after" "dictlog_pool_stored_bytes{pool=\"Apache\"}" -gt 0
expect "$work/after" "dictlog_pool_reads_total{pool=\"HDFS\"}" -ge 100
expect "$work/after" "dictlog_pool_active_dictionary_id{pool=\"HDFS\"}" -gt 0
expect "$work/after" "dictlog_pool_dictionaries{pool=\"HDFS\"}" -eq 1
expect "$work/after" "dictlog_pool_dictionaries{pool=\"OpenSSH\"}" -eq 0
expect "$work/after" dictlog_dictionary_cache_hits_total -ge 1
expect "$work/after" dictlog_dictionary_cache_entries -ge 1
expect "$work/after" dictlog_dictionary_cache_pinned -ge 1
expect "$work/after" dictlog_dictionary_cache_bytes -gt 0
expect "$work/after" "dictlog_recompress_records_done{pool=\"HDFS\"}" -eq "$hdfs_records"
expect "$work/after" "dictlog_recompress_records_planned{pool=\"HDFS\"}" -eq "$hdfs_records"
expect "$work/after" "dictlog_recompress_running{pool=\"HDFS\"}" -eq 0
expect "$work/after" dictlog_rocksdb_num_running_compactions -ge 0
grep -q '^dictlog_rocksdb_total_sst_files_size{family="records"} ' "$work/after" ||
  fail "no RocksDB SST size for the records family"

# Anything but GET /metrics is refused.
exec 3<>"/dev/tcp/127.0.0.1/$(cat "$work/metrics_port")"
printf 'GET / HTTP/1.1\r\nAuthorization: Bearer %s\r\n\r\n' "$(cat "$work/metrics_token")" >&3
[[ "$(head -n 1 <&3)" == "HTTP/1.1 404 Not Found"* ]] || fail "GET / is not a 404"
exec 3<&-

stop_server
echo PASS
