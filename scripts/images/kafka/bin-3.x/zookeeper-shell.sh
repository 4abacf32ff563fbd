#!/bin/sh
# zookeeper-shell.sh HOST:PORT[/chroot] [command …] (Kafka 3.x only: ZooKeeper is gone in 4), as
# upstream: ZooKeeper's own shell with Kafka's TLS options; it logs in with the JAAS file
# KAFKA_OPTS names.
[ $# -ge 1 ] || { echo "USAGE: $0 zookeeper_host:port[/path] [-zk-tls-config-file file] [args...]" >&2; exit 1; }
exec "$(dirname "$0")/kafka-run-class.sh" org.apache.zookeeper.ZooKeeperMainWithTlsSupportForKafka -server "$@"
