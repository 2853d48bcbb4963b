#!/usr/bin/env bash
# cluster.sh: a local Kafka (KRaft) cluster on 127.0.0.1 for dictlog's cluster mode
# (docs/cluster.md): combined broker+controller nodes, each a JVM with a small heap,
# on free loopback ports, all state under --dir. Everything it starts it records by pid
# in DIR/NODE/pid and stops by that pid only. The jars come from `make kafka`.
#
#   cluster.sh up     --dir=DIR [--brokers=3] [--nodes=0] [--replicas=2] [--timeout=180]
#                     formats and starts the brokers, then --nodes dictlogd nodes in
#                     cluster mode against them (--cluster_nodes=dictlogd-1,...,
#                     --cluster_replicas=REPLICAS, --advertise_address=its own), waits
#                     until each serves, prints one line per process:
#                     `kafka-N 127.0.0.1:PORT`, `dictlogd-N 127.0.0.1:PORT`
#   cluster.sh kill   --dir=DIR --node=NAME [--signal=KILL|TERM|STOP|CONT]
#   cluster.sh start  --dir=DIR --node=NAME    (again, with its existing storage)
#   cluster.sh status --dir=DIR                `NAME ADDRESS running|stopped [pid P]`
#   cluster.sh down   --dir=DIR                TERM, then KILL after --timeout (30 s)
#
# Environment: KAFKA_LIB (the jars; default deploy/local-cluster/kafka/lib beside this
# script), KAFKA_JVM_OPTS (default "-Xmx384m -Xms64m -XX:+UseSerialGC"), DICTLOGD (the
# binary; default bin/dictlogd of the checkout, from `make build`), DICTLOGD_FLAGS
# (more flags for every node). Exit 0 ok, 1 failure, 2 usage.
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
kafka_lib="${KAFKA_LIB:-$here/kafka/lib}"
jvm_opts="${KAFKA_JVM_OPTS:--Xmx384m -Xms64m -XX:+UseSerialGC}"
dictlogd="${DICTLOGD:-$here/../../bin/dictlogd}"

usage() { sed -n '2,22p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2; exit 2; }
die() { echo "cluster.sh: $*" >&2; exit 1; }

command="${1:-}"; [[ -n "$command" ]] || usage; shift
dir="" brokers=3 nodes=0 replicas=2 node="" signal=KILL timeout=""
for arg in "$@"; do
  case "$arg" in
    --dir=*) dir="${arg#*=}" ;;
    --brokers=*) brokers="${arg#*=}" ;;
    --nodes=*) nodes="${arg#*=}" ;;
    --replicas=*) replicas="${arg#*=}" ;;
    --node=*) node="${arg#*=}" ;;
    --signal=*) signal="${arg#*=}" ;;
    --timeout=*) timeout="${arg#*=}" ;;
    *) echo "cluster.sh: unknown argument $arg" >&2; usage ;;
  esac
done
[[ -n "$dir" ]] || { echo "cluster.sh: --dir is required" >&2; usage; }
[[ "$brokers" =~ ^[1-9]$ ]] || { echo "cluster.sh: --brokers must be 1..9" >&2; exit 2; }
[[ "$nodes" =~ ^[0-9]$ ]] || { echo "cluster.sh: --nodes must be 0..9" >&2; exit 2; }
[[ -z "$timeout" || "$timeout" =~ ^[0-9]+$ ]] || { echo "cluster.sh: bad --timeout" >&2; exit 2; }

# Free loopback ports, one a line (the kernel's choice; released before use).
free_ports() {
  python3 -c 'import socket,sys
socks=[socket.socket() for _ in range(int(sys.argv[1]))]
for s in socks: s.bind(("127.0.0.1",0))
print("\n".join(str(s.getsockname()[1]) for s in socks))' "$1"
}

# A Kafka cluster id: 16 random bytes, URL-safe base64 without padding, not starting
# with '-' (what `kafka-storage random-uuid` prints), without starting a JVM.
random_cluster_id() {
  python3 -c 'import base64,os
while True:
    s=base64.urlsafe_b64encode(os.urandom(16)).decode().rstrip("=")
    if not s.startswith("-"): print(s); break'
}

java_cmd() {  # NODE_DIR CLASS ARGS... (exec: in the background, $! is java's pid)
  local node_dir="$1"; shift
  # shellcheck disable=SC2086
  exec java $jvm_opts -Dkafka.logs.dir="$node_dir" \
    -Dlog4j2.configurationFile="$node_dir/log4j2.properties" -cp "$kafka_lib/*" "$@"
}

write_log_config() {  # NODE_DIR
  cat >"$1/log4j2.properties" <<'EOF'
rootLogger.level = INFO
rootLogger.appenderRef.file.ref = FILE
appender.file.type = File
appender.file.name = FILE
appender.file.fileName = ${sys:kafka.logs.dir}/server.log
appender.file.layout.type = PatternLayout
appender.file.layout.pattern = [%d] %p %m (%c)%n
EOF
}

# server.properties of node N (1-based) given the broker and controller ports.
write_properties() {  # N BROKER_PORT VOTERS
  local n="$1" port="$2" voters="$3" node_dir="$dir/kafka-$1"
  local controller_port="${voters#*"$n"@127.0.0.1:}"; controller_port="${controller_port%%,*}"
  local rf=$(( brokers < 3 ? brokers : 3 )) isr=$(( brokers < 2 ? 1 : 2 ))
  cat >"$node_dir/server.properties" <<EOF
process.roles=broker,controller
node.id=$n
controller.quorum.voters=$voters
listeners=PLAINTEXT://127.0.0.1:$port,CONTROLLER://127.0.0.1:$controller_port
advertised.listeners=PLAINTEXT://127.0.0.1:$port
controller.listener.names=CONTROLLER
inter.broker.listener.name=PLAINTEXT
listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT
log.dirs=$node_dir/data
auto.create.topics.enable=false
unclean.leader.election.enable=false
default.replication.factor=$rf
min.insync.replicas=$isr
offsets.topic.replication.factor=$rf
transaction.state.log.replication.factor=$rf
transaction.state.log.min.isr=$isr
group.initial.rebalance.delay.ms=0
broker.session.timeout.ms=4000
broker.heartbeat.interval.ms=500
num.network.threads=2
num.io.threads=2
background.threads=2
EOF
  echo "127.0.0.1:$port" >"$node_dir/address"
}

node_pid() {  # NAME -> pid if that process is ours and alive
  local pid_file="$dir/$1/pid" pid marker="$dir/$1/server.properties"
  [[ "$1" == dictlogd-* ]] && marker="--data_dir=$dir/$1/data"
  [[ -s "$pid_file" ]] || return 1
  pid="$(cat "$pid_file")"
  # Only a live process started with this node's configuration (no reused pids).
  grep -qxF -- "$marker" < <(tr '\0' '\n' 2>/dev/null <"/proc/$pid/cmdline") || return 1
  echo "$pid"
}

# dictlogd node N: its port (kept across restarts) and the brokers it talks to.
write_dictlogd_config() {  # N PORT BOOTSTRAP
  local node_dir="$dir/dictlogd-$1"
  mkdir -p "$node_dir"
  echo "127.0.0.1:$2" >"$node_dir/address"
  echo "$3" >"$node_dir/bootstrap"
}

start_dictlogd() {  # NAME
  local node_dir="$dir/$1"
  [[ -x "$dictlogd" ]] || die "no dictlogd binary at $dictlogd (make build, or set DICTLOGD)"
  stat -c %s "$node_dir/console.log" 2>/dev/null >"$node_dir/log_offset" || echo 0 >"$node_dir/log_offset"
  # shellcheck disable=SC2086
  "$dictlogd" --listen="$(cat "$node_dir/address")" --data_dir="$node_dir/data" \
    --kafka_bootstrap="$(cat "$node_dir/bootstrap")" --node_name="$1" \
    --cluster_nodes="$(cat "$dir/cluster_nodes" 2>/dev/null)" \
    --cluster_replicas="$(cat "$dir/cluster_replicas" 2>/dev/null || echo 2)" \
    --advertise_address="$(cat "$node_dir/address")" \
    --kafka_replication_factor=$(( brokers_of_cluster < 3 ? brokers_of_cluster : 3 )) \
    ${DICTLOGD_FLAGS:-} >>"$node_dir/console.log" 2>&1 </dev/null &
  echo $! >"$node_dir/pid"
}

start_node() {  # NAME
  local node_dir="$dir/$1"
  [[ -f "$node_dir/address" ]] || die "no such node: $1"
  if node_pid "$1" >/dev/null; then die "$1 is already running"; fi
  if [[ "$1" == dictlogd-* ]]; then start_dictlogd "$1"; return; fi
  # wait_serving reads the log from here on.
  stat -c %s "$node_dir/server.log" 2>/dev/null >"$node_dir/log_offset" || echo 0 >"$node_dir/log_offset"
  java_cmd "$node_dir" kafka.Kafka "$node_dir/server.properties" \
    >>"$node_dir/console.log" 2>&1 </dev/null &
  echo $! >"$node_dir/pid"
}

# Waits until the node logs that it started (a broker) or serves (dictlogd) and its
# port accepts connections.
wait_serving() {  # NAME DEADLINE(epoch s)
  local node_dir="$dir/$1" address port log=server.log ready="Kafka Server started"
  [[ "$1" == dictlogd-* ]] && log=console.log ready="dictlogd: serving on port"
  address="$(cat "$node_dir/address")"; port="${address##*:}"
  while (( $(date +%s) < $2 )); do
    # The pid we just started (its cmdline is the shell's until it has exec'ed).
    kill -0 "$(cat "$node_dir/pid")" 2>/dev/null ||
      { tail -20 "$node_dir/$log" >&2; die "$1 exited"; }
    if tail -c "+$(( $(cat "$node_dir/log_offset") + 1 ))" "$node_dir/$log" 2>/dev/null |
      grep -q "$ready" &&
      (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
      return 0
    fi
    sleep 0.2
  done
  die "$1 did not serve within the timeout (see $node_dir/server.log)"
}

cmd_up() {
  [[ -n "$(ls "$kafka_lib"/kafka_2.13-*.jar 2>/dev/null)" ]] ||
    die "no Kafka jars in $kafka_lib: run \`make kafka\`"
  [[ ! -e "$dir/cluster.env" ]] || die "$dir already holds a cluster (down it, or use start)"
  mkdir -p "$dir"; dir="$(cd "$dir" && pwd)"
  local ports voters="" n
  mapfile -t ports < <(free_ports $(( 2 * brokers )))
  for (( n = 1; n <= brokers; n++ )); do
    voters+="${voters:+,}$n@127.0.0.1:${ports[$(( brokers + n - 1 ))]}"
  done
  local cluster_id pids=()
  cluster_id="$(random_cluster_id)"
  echo "brokers=$brokers cluster_id=$cluster_id" >"$dir/cluster.env"
  brokers_of_cluster=$brokers
  for (( n = 1; n <= brokers; n++ )); do  # the formats run side by side: JVM start-up
    mkdir -p "$dir/kafka-$n"; write_log_config "$dir/kafka-$n"
    write_properties "$n" "${ports[$(( n - 1 ))]}" "$voters"
    (jvm_opts="$jvm_opts -XX:TieredStopAtLevel=1"; java_cmd "$dir/kafka-$n" \
      kafka.tools.StorageTool format -t "$cluster_id" -c "$dir/kafka-$n/server.properties") \
      >>"$dir/kafka-$n/format.log" 2>&1 &
    pids+=($!)
  done
  for (( n = 1; n <= brokers; n++ )); do
    wait "${pids[$(( n - 1 ))]}" || die "formatting kafka-$n failed (see $dir/kafka-$n/format.log)"
  done
  for (( n = 1; n <= brokers; n++ )); do start_node "kafka-$n"; done
  local deadline=$(( $(date +%s) + ${timeout:-180} ))
  for (( n = 1; n <= brokers; n++ )); do wait_serving "kafka-$n" "$deadline"; done
  for (( n = 1; n <= brokers; n++ )); do echo "kafka-$n $(cat "$dir/kafka-$n/address")"; done
  (( nodes > 0 )) || return 0
  local bootstrap node_ports
  bootstrap="$(for (( n = 1; n <= brokers; n++ )); do cat "$dir/kafka-$n/address"; done | paste -sd,)"
  mapfile -t node_ports < <(free_ports "$nodes")
  # Every node's name, the same list for all: one node per pool trains (docs/cluster.md).
  for (( n = 1; n <= nodes; n++ )); do echo "dictlogd-$n"; done | paste -sd, >"$dir/cluster_nodes"
  # Copies of each partition among them (0: every node holds every partition).
  echo "$replicas" >"$dir/cluster_replicas"
  for (( n = 1; n <= nodes; n++ )); do
    write_dictlogd_config "$n" "${node_ports[$(( n - 1 ))]}" "$bootstrap"
    start_node "dictlogd-$n"
  done
  for (( n = 1; n <= nodes; n++ )); do wait_serving "dictlogd-$n" "$deadline"; done
  for (( n = 1; n <= nodes; n++ )); do echo "dictlogd-$n $(cat "$dir/dictlogd-$n/address")"; done
}

# dictlogd nodes first: `down` stops them before the brokers they write to.
all_nodes() {
  local d
  for d in "$dir"/dictlogd-*/ "$dir"/kafka-*/; do [[ -d "$d" ]] && basename "$d"; done
  return 0
}

# Waits until NAME's process is gone; 1 if it is still there at the deadline.
wait_gone() {  # NAME DEADLINE(epoch s)
  while node_pid "$1" >/dev/null; do
    (( $(date +%s) < $2 )) || return 1
    sleep 0.1
  done
}

cmd_kill() {
  [[ -n "$node" ]] || { echo "cluster.sh: --node is required" >&2; exit 2; }
  [[ "$signal" =~ ^(KILL|TERM|STOP|CONT)$ ]] || { echo "cluster.sh: bad --signal" >&2; exit 2; }
  local pid; pid="$(node_pid "$node")" || die "$node is not running"
  kill -s "$signal" "$pid"
  if [[ "$signal" == KILL || "$signal" == TERM ]]; then
    wait_gone "$node" $(( $(date +%s) + ${timeout:-30} )) || die "$node did not exit"
  fi
}

cmd_start() {
  [[ -n "$node" ]] || { echo "cluster.sh: --node is required" >&2; exit 2; }
  start_node "$node"
  wait_serving "$node" $(( $(date +%s) + ${timeout:-180} ))
  echo "$node $(cat "$dir/$node/address")"
}

cmd_status() {
  local name pid
  for name in $(all_nodes); do
    if pid="$(node_pid "$name")"; then
      echo "$name $(cat "$dir/$name/address") running pid $pid"
    else
      echo "$name $(cat "$dir/$name/address") stopped"
    fi
  done
}

stop_nodes() {  # NAME... : TERM, wait, KILL after the deadline; 1 if one survives
  local name pid deadline=$(( $(date +%s) + ${timeout:-30} )) status=0
  for name in "$@"; do
    if pid="$(node_pid "$name")"; then kill -CONT "$pid"; kill -TERM "$pid"; fi
  done
  for name in "$@"; do
    wait_gone "$name" "$deadline" && continue
    pid="$(node_pid "$name")" && kill -KILL "$pid" && echo "cluster.sh: killed $name" >&2
    wait_gone "$name" $(( $(date +%s) + 10 )) || { echo "cluster.sh: $name survives" >&2; status=1; }
  done
  return "$status"
}

cmd_down() {
  local status=0
  # shellcheck disable=SC2046
  stop_nodes $(all_nodes | grep '^dictlogd-') || status=1
  # shellcheck disable=SC2046
  stop_nodes $(all_nodes | grep '^kafka-') || status=1
  return "$status"
}

[[ "$command" == up || -f "$dir/cluster.env" ]] || die "$dir holds no cluster (run up)"
brokers_of_cluster="$brokers"
if [[ -f "$dir/cluster.env" ]]; then
  brokers_of_cluster="$(sed -n 's/^brokers=\([0-9]*\).*/\1/p' "$dir/cluster.env")"
fi
case "$command" in
  up) cmd_up ;;
  kill) cmd_kill ;;
  start) cmd_start ;;
  status) cmd_status ;;
  down) cmd_down ;;
  *) echo "cluster.sh: unknown command $command" >&2; usage ;;
esac
