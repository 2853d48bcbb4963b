#!/usr/bin/env bash
# cluster.sh and librdkafka against real Kafka brokers (issue 22's groundwork): brings up
# 3 KRaft brokers on loopback, creates a topic with replication.factor=3 and
# min.insync.replicas=2, produces 3000 messages with an idempotent acks=all producer
# (tools/kafka_check), kill -9s the partition's leader after 1000 acknowledgements, and
# checks that all 3000 are acknowledged, a new leader took over, every acknowledged
# message is read back exactly once, the killed broker rejoins with `start`, and `down`
# stops every process by pid. About 1-2 minutes on 2 busy cores.
set -euo pipefail
runfiles="${TEST_SRCDIR}/${TEST_WORKSPACE:-dictlog}"
cluster="$runfiles/deploy/local-cluster/cluster.sh"
check="$runfiles/tools/kafka_check/kafka_check"
work="$(mktemp -d "${TEST_TMPDIR:-/tmp}/cluster.XXXXXX")"
dir="$work/cluster"
# C1 only: the brokers start in about half the CPU time.
export KAFKA_JVM_OPTS="-Xmx384m -Xms64m -XX:+UseSerialGC -XX:TieredStopAtLevel=1"

fail() { echo "FAIL: $*" >&2; exit 1; }
ls "$runfiles"/deploy/local-cluster/kafka/lib/kafka_2.13-*.jar >/dev/null 2>&1 ||
  fail "no Kafka jars: run \`make kafka\` (make test does)"

producer_pid=
cleanup() {
  [[ -n "$producer_pid" ]] && kill -KILL "$producer_pid" 2>/dev/null
  [[ -f "$dir/cluster.env" ]] && "$cluster" down --dir="$dir" --timeout=20
  return 0
}
trap cleanup EXIT

"$cluster" up --dir="$dir" --brokers=3 --timeout=240 >"$work/up.out" ||
  fail "cluster.sh up"
cat "$work/up.out"
[[ "$(grep -c '^kafka-[123] 127\.0\.0\.1:[0-9]*$' "$work/up.out")" == 3 ]] ||
  fail "up did not print three kafka-N 127.0.0.1:PORT lines"
bootstrap="$(cut -d' ' -f2 "$work/up.out" | paste -sd,)"
kc() { "$check" --bootstrap="$bootstrap" --topic=check "$@"; }

kc --replication_factor=3 --min_insync_replicas=2 --timeout_ms=60000 create-topic
leader="$(kc --wait_in_sync --timeout_ms=60000 leader)"
echo "leader: kafka-$leader"

mkdir "$work/pause"
kc --count=3000 --pause_after=1000 --pause_dir="$work/pause" --acked="$work/acked" \
  --timeout_ms=90000 produce >"$work/produce.out" 2>"$work/produce.err" &
producer_pid=$!
for _ in $(seq 1 1200); do
  [[ -e "$work/pause/paused" ]] && break
  kill -0 "$producer_pid" 2>/dev/null || break
  sleep 0.1
done
[[ -e "$work/pause/paused" ]] || { cat "$work/produce.err"; fail "producer did not reach 1000 acks"; }

"$cluster" kill --dir="$dir" --node="kafka-$leader" --signal=KILL
status="$("$cluster" status --dir="$dir")"  # not piped into grep -q: pipefail + SIGPIPE
grep -q "^kafka-$leader .* stopped$" <<<"$status" || fail "status does not show kafka-$leader stopped"
touch "$work/pause/resume"
wait "$producer_pid" || { cat "$work/produce.err"; fail "producer failed"; }
producer_pid=
cat "$work/produce.out"
grep -qx "acked 3000 failed 0" "$work/produce.out" || fail "not every message acknowledged"

new_leader="$(kc --timeout_ms=60000 leader)"
[[ "$new_leader" != "$leader" ]] || fail "kafka-$leader is still reported as leader"
echo "new leader: kafka-$new_leader"

kc --timeout_ms=60000 consume >"$work/consumed"
sort "$work/consumed" >"$work/consumed.sorted"
sort "$work/acked" >"$work/acked.sorted"
dups="$(uniq -d "$work/consumed.sorted" | wc -l)"
missing="$(comm -23 "$work/acked.sorted" "$work/consumed.sorted" | wc -l)"
echo "acknowledged $(wc -l <"$work/acked"), read back $(wc -l <"$work/consumed"), duplicates $dups, missing $missing"
[[ "$dups" == 0 ]] || fail "$dups messages read back more than once"
[[ "$missing" == 0 ]] || fail "$missing acknowledged messages not read back"
[[ "$(wc -l <"$work/acked")" == 3000 ]] || fail "acked file incomplete"

"$cluster" start --dir="$dir" --node="kafka-$leader" --timeout=240 ||
  fail "restarting kafka-$leader"
kc --wait_in_sync --timeout_ms=120000 leader >/dev/null || fail "kafka-$leader did not rejoin"

pids="$(cat "$dir"/kafka-*/pid)"
"$cluster" down --dir="$dir" --timeout=30 || fail "down"
for pid in $pids; do  # gone, or a zombie its (non-test) parent has not reaped yet
  state="$(awk '{print $3}' "/proc/$pid/stat" 2>/dev/null || true)"
  [[ -z "$state" || "$state" == Z ]] || fail "pid $pid survived down (state $state)"
done
status="$("$cluster" status --dir="$dir")"
[[ "$(grep -c ' stopped$' <<<"$status")" == 3 ]] || fail "status after down: $status"
echo PASS
