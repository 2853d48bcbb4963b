#!/usr/bin/env bash
# End to end through the CLI binaries: dictlogd refuses plaintext off loopback and a
# bad tokens file (without printing tokens); `dictlog` with --tls_ca, --tls_cert,
# --tls_key and --token_file talks to a dictlogd serving mutual TLS with tokens, and
# gets exit status 1 with the gRPC code when the token is missing or too weak;
# `dictlog health` (the Kubernetes probe) passes over TLS without a token, checks the
# certificate's name (--tls_server_name) and fails once the server is gone.
# Certificates are made here with openssl (Debian package openssl).
set -euo pipefail

work="${TEST_TMPDIR}/security_cli"
rm -rf "$work" && mkdir -p "$work"
source "${TEST_SRCDIR}/${TEST_WORKSPACE:-dictlog}/tests/e2e/server_lib.sh"

# --- startup refusals (nothing is bound: the checks come first) ---
if "$dictlogd" --listen=0.0.0.0:0 --data_dir="$work/refused" >"$work/out" 2>&1; then
  fail "dictlogd served plaintext on 0.0.0.0 without --insecure"
fi
grep -q "refusing to serve plaintext on the non-loopback address 0.0.0.0:0" "$work/out" ||
  { cat "$work/out"; fail "no clear refusal message"; }
[[ ! -e "$work/refused" ]] || fail "the store was opened although the server refused"

printf 'secret-token-0123456789 superuser\n' >"$work/bad_tokens"
if "$dictlogd" --data_dir="$work/refused" --tokens_file="$work/bad_tokens" \
  >"$work/out" 2>&1; then
  fail "dictlogd started with a bad tokens file"
fi
grep -q 'line 1: unknown role' "$work/out" || { cat "$work/out"; fail "bad message"; }
if grep -q "secret-token" "$work/out"; then fail "a token was printed"; fi
# A token where the role goes (fields swapped) is not printed either.
printf 'reader secret-token-0123456789\n' >"$work/bad_tokens"
if "$dictlogd" --data_dir="$work/refused" --tokens_file="$work/bad_tokens" \
  >"$work/out" 2>&1; then
  fail "dictlogd started with a bad tokens file"
fi
grep -q 'line 1: ' "$work/out" || { cat "$work/out"; fail "bad message"; }
if grep -q "secret-token" "$work/out"; then fail "a token was printed: $(cat "$work/out")"; fi

# --- mutual TLS + tokens ---
pki="$work/pki"
mkdir -p "$pki"
key_opts=(-newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 1)
openssl req -x509 "${key_opts[@]}" -keyout "$pki/ca.key" -out "$pki/ca.pem" \
  -subj /CN=test-ca 2>/dev/null
leaf() {  # leaf NAME EXTENSIONS
  openssl req "${key_opts[@]}" -keyout "$pki/$1.key" -out "$pki/$1.csr" -subj "/CN=$1" \
    2>/dev/null
  printf '%b\n' "$2" >"$pki/$1.ext"
  openssl x509 -req -days 1 -in "$pki/$1.csr" -CA "$pki/ca.pem" -CAkey "$pki/ca.key" \
    -set_serial "$RANDOM" -extfile "$pki/$1.ext" -out "$pki/$1.pem" 2>/dev/null
}
leaf server 'subjectAltName=IP:127.0.0.1,DNS:localhost\nextendedKeyUsage=serverAuth'
leaf client 'extendedKeyUsage=clientAuth'

printf 'writer-token-0123456789 writer\nreader-token-0123456789 reader\n' >"$work/tokens"
printf 'writer-token-0123456789\n' >"$work/writer.token"
printf 'reader-token-0123456789\n' >"$work/reader.token"
extra_flags=(--tls_cert="$pki/server.pem" --tls_key="$pki/server.key"
  --tls_client_ca="$pki/ca.pem" --tokens_file="$work/tokens")
start_server
grep -q "mutual TLS, bearer tokens" "$work/server.log" || fail "startup line"

tls=(--server="$server" --tls_ca="$pki/ca.pem" --tls_cert="$pki/client.pem"
  --tls_key="$pki/client.key" --timeout_seconds=20)
printf 'first line\nsecond line\n' >"$work/records"
"$dictlog" "${tls[@]}" --token_file="$work/writer.token" append --category=HDFS \
  "$work/records" >"$work/ids"
[[ $(wc -l <"$work/ids") == 2 ]] || fail "expected two ids"
"$dictlog" "${tls[@]}" --token_file="$work/reader.token" get $(cat "$work/ids") \
  >"$work/got"
cmp "$work/records" "$work/got" || fail "records differ over mTLS"

status=0
"$dictlog" "${tls[@]}" get $(head -1 "$work/ids") 2>"$work/err" || status=$?
[[ $status == 1 ]] || fail "missing token: exit $status, want 1"
grep -q UNAUTHENTICATED "$work/err" || { cat "$work/err"; fail "want UNAUTHENTICATED"; }

status=0
"$dictlog" "${tls[@]}" --token_file="$work/reader.token" append --category=HDFS \
  "$work/records" 2>"$work/err" >/dev/null || status=$?
[[ $status == 1 ]] || fail "reader append: exit $status, want 1"
grep -q PERMISSION_DENIED "$work/err" || { cat "$work/err"; fail "want PERMISSION_DENIED"; }

status=0
"$dictlog" --server="$server" --tls_cert="$pki/client.pem" pools 2>"$work/err" || status=$?
[[ $status == 2 ]] || fail "--tls_cert without --tls_key: exit $status, want 2"

# health: no token needed; the certificate's name is checked (here: the probe's way,
# 127.0.0.1 with --tls_server_name).
[[ "$("$dictlog" "${tls[@]}" health)" == SERVING ]] || fail "health over mTLS"
[[ "$("$dictlog" "${tls[@]}" --tls_server_name=localhost health)" == SERVING ]] ||
  fail "health with --tls_server_name=localhost"
status=0
"$dictlog" "${tls[@]}" --tls_server_name=other.example health >/dev/null 2>&1 || status=$?
[[ $status == 1 ]] || fail "health accepted a certificate for another name: exit $status"
status=0
"$dictlog" "${tls[@]}" health one two 2>/dev/null || status=$?
[[ $status == 2 ]] || fail "health with two arguments: exit $status, want 2"
status=0
# One argument is a health service: an unknown one fails (NOT_FOUND), exit 1.
"$dictlog" "${tls[@]}" health no.such.service 2>/dev/null || status=$?
[[ $status == 1 ]] || fail "health of an unknown service: exit $status, want 1"

stop_server
status=0
"$dictlog" "${tls[@]}" --timeout_seconds=2 health >/dev/null 2>&1 || status=$?
[[ $status == 1 ]] || fail "health of a stopped server: exit $status, want 1"

# health of a server still opening its store (NOT_SERVING): exit 1.
"$dictlogd" --listen=127.0.0.1:0 --data_dir="$work/opening" --open_delay_ms_for_test=60000 \
  >"$work/opening.log" 2>&1 &
opening_pid=$!
for _ in $(seq 1 300); do
  grep -q "listening on port" "$work/opening.log" && break
  sleep 0.1
done
port=$(sed -n 's/^dictlogd: listening on port \([0-9]*\),.*/\1/p' "$work/opening.log")
[[ -n "$port" ]] || { kill "$opening_pid"; fail "no port: $(cat "$work/opening.log")"; }
status=0
"$dictlog" --server="127.0.0.1:$port" health 2>"$work/err" || status=$?
kill -KILL "$opening_pid"
wait "$opening_pid" 2>/dev/null || true
[[ $status == 1 ]] || fail "health while opening: exit $status, want 1"
grep -q NOT_SERVING "$work/err" || fail "no NOT_SERVING: $(cat "$work/err")"
echo PASS
