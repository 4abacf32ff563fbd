#!/bin/sh
# zkServer.sh start-foreground [config], as upstream's for a container's main process: the
# config is $ZOOCFGDIR/zoo.cfg, or the argument (a bare name is looked up in $ZOOCFGDIR). The
# classpath is $ZOOCFGDIR first (logback finds the logback.xml there, as upstream's does), then
# every jar in lib/. The heap defaults to ZK_SERVER_HEAP MB (1000);
# SERVER_JVMFLAGS then JVMFLAGS follow, so a later -Xmx in them wins.
base_dir=$(cd "$(dirname "$0")/.." && pwd)
: "${ZOOCFGDIR:=$base_dir/conf}"
: "${ZOO_LOG_DIR:=$base_dir/logs}"
: "${ZK_SERVER_HEAP:=1000}"
if [ "$1" != "start-foreground" ]; then
  echo "USAGE: $0 start-foreground [config] (only the foreground: a container's main process)" >&2
  exit 1
fi
config="${2:-zoo.cfg}"
case "$config" in */*) ;; *) config="$ZOOCFGDIR/$config" ;; esac
# Word splitting of the flag variables is intended, as upstream.
# shellcheck disable=SC2086
exec "${JAVA_HOME:-/usr/lib/jvm/java-17-openjdk-amd64}/bin/java" \
  "-Dzookeeper.log.dir=$ZOO_LOG_DIR" -XX:+HeapDumpOnOutOfMemoryError -XX:OnOutOfMemoryError='kill -9 %p' \
  -cp "$ZOOCFGDIR:$base_dir/lib/*" "-Xmx${ZK_SERVER_HEAP}m" $SERVER_JVMFLAGS $JVMFLAGS \
  org.apache.zookeeper.server.quorum.QuorumPeerMain "$config"
