#!/bin/sh
# kafka.sh: the entry point of the Kafka image (deploy/Dockerfile.kafka) in the
# StatefulSet deploy/k8s/cluster/kafka.yaml: one KRaft node (broker and controller).
#
#   kafka.sh format   writes this pod's server.properties, then formats its storage
#                     with the cluster id, unless already formatted (the init container)
#   kafka.sh serve    writes this pod's server.properties, then runs the broker (exec)
#
# This pod's properties are node.id (the ordinal of POD_NAME, kafka-N: N) and
# advertised.listeners (the pod's DNS name), followed by the shared server.properties
# of the ConfigMap, whose later lines win. Environment: POD_NAME, POD_NAMESPACE,
# KAFKA_CONFIG (the mounted ConfigMap: server.properties, cluster.id,
# log4j2.properties; default /etc/kafka), KAFKA_STATE (the volume; default
# /var/lib/kafka), KAFKA_LIB (default /opt/kafka/lib), KAFKA_SERVICE (the headless
# Service; default kafka-headless), KAFKA_HEAP_OPTS (default -Xms1g -Xmx1g).
set -eu

config="${KAFKA_CONFIG:-/etc/kafka}"
state="${KAFKA_STATE:-/var/lib/kafka}"
lib="${KAFKA_LIB:-/opt/kafka/lib}"
service="${KAFKA_SERVICE:-kafka-headless}"
heap="${KAFKA_HEAP_OPTS:--Xms1g -Xmx1g}"

case "${1:-}" in
  format|serve) ;;
  *) echo "usage: kafka.sh format|serve" >&2; exit 2 ;;
esac
: "${POD_NAME:?POD_NAME is not set}" "${POD_NAMESPACE:?POD_NAMESPACE is not set}"
ordinal="${POD_NAME##*-}"
case "$ordinal" in
  ''|*[!0-9]*) echo "kafka.sh: POD_NAME $POD_NAME does not end in -N" >&2; exit 2 ;;
esac

properties="$state/server.properties"
{
  echo "node.id=$ordinal"
  echo "advertised.listeners=PLAINTEXT://$POD_NAME.$service.$POD_NAMESPACE.svc:9092"
  cat "$config/server.properties"
} >"$properties.new"
mv "$properties.new" "$properties"

java_run() {
  # shellcheck disable=SC2086
  exec java $heap -Dlog4j2.configurationFile="$config/log4j2.properties" \
    -cp "$lib/*" "$@"
}

if [ "$1" = format ]; then
  # --ignore-formatted: a formatted volume (a restart) is left as it is.
  java_run kafka.tools.StorageTool format --ignore-formatted \
    -t "$(cat "$config/cluster.id")" -c "$properties"
fi
java_run kafka.Kafka "$properties"
