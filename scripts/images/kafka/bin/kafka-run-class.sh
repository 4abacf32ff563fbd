#!/bin/sh
# Runs a Kafka main class on the image's JRE, like upstream's kafka-run-class.sh: the classpath
# is every jar in /opt/kafka/libs in name order, and KAFKA_HEAP_OPTS, KAFKA_JVM_PERFORMANCE_OPTS,
# KAFKA_LOG4J_OPTS and KAFKA_OPTS are passed to java in upstream's order.
[ $# -ge 1 ] || { echo "USAGE: $0 classname [opts]" >&2; exit 1; }
base_dir=$(cd "$(dirname "$0")/.." && pwd)
CLASSPATH=""
for jar in "$base_dir"/libs/*.jar; do CLASSPATH="${CLASSPATH:+$CLASSPATH:}$jar"; done
: "${KAFKA_HEAP_OPTS:=-Xmx256M}"
: "${KAFKA_JVM_PERFORMANCE_OPTS:=-server -XX:+UseG1GC -XX:MaxGCPauseMillis=20 -XX:InitiatingHeapOccupancyPercent=35 -XX:+ExplicitGCInvokesConcurrent -Djava.awt.headless=true}"
# The class archive the image was built with (scripts/images/build.sh, as the public image has
# its kafka.jsa): brokers and tools map the classes they load from it instead of parsing and
# verifying them at each start. It holds for this classpath only; the JVM skips it otherwise.
if [ -z "${KAFKA_CDS_OPTS+set}" ] && [ -f "$base_dir/kafka.jsa" ]; then
  KAFKA_CDS_OPTS="-XX:SharedArchiveFile=$base_dir/kafka.jsa -Xlog:cds=off"
fi
# Tools log as the image's release does: log4j2 (4.x) or log4j 1 through reload4j (3.x).
if [ -f "$base_dir/config/tools-log4j2.yaml" ]; then
  : "${KAFKA_LOG4J_OPTS:=-Dlog4j2.configurationFile=$base_dir/config/tools-log4j2.yaml}"
else
  : "${KAFKA_LOG4J_OPTS:=-Dlog4j.configuration=file:$base_dir/config/tools-log4j.properties}"
fi
# Word splitting of the option variables is intended, as upstream.
# shellcheck disable=SC2086
exec "${JAVA_HOME:-/usr/lib/jvm/java-17-openjdk-amd64}/bin/java" $KAFKA_HEAP_OPTS \
  $KAFKA_JVM_PERFORMANCE_OPTS ${KAFKA_CDS_OPTS:-} $KAFKA_LOG4J_OPTS -cp "$CLASSPATH" $KAFKA_OPTS "$@"
