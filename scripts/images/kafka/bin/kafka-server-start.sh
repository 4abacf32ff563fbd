#!/bin/sh
# kafka-server-start.sh server.properties [--override property=value]*, as upstream (in the
# foreground: a container's main process; upstream's -daemon has no use here and is refused).
if [ $# -lt 1 ] || [ "$1" = "-daemon" ]; then
  echo "USAGE: $0 server.properties [--override property=value]*" >&2
  exit 1
fi
base_dir=$(cd "$(dirname "$0")/.." && pwd)
if [ -f "$base_dir/config/log4j2.yaml" ]; then
  : "${KAFKA_LOG4J_OPTS:=-Dlog4j2.configurationFile=$base_dir/config/log4j2.yaml}"
else
  : "${KAFKA_LOG4J_OPTS:=-Dlog4j.configuration=file:$base_dir/config/log4j.properties}"
fi
: "${KAFKA_HEAP_OPTS:=-Xmx1G -Xms1G}"
export KAFKA_LOG4J_OPTS KAFKA_HEAP_OPTS
exec "$base_dir/bin/kafka-run-class.sh" kafka.Kafka "$@"
