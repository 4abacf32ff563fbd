#!/usr/bin/env bash
# Kafka runtime jars from Maven Central into $KAFKASTACK_CACHE/kafka/<version>/lib, once per version,
# for a 3.x version also ZooKeeper's own runtime (logback included) at the version that Kafka
# release was built with into $KAFKASTACK_CACHE/zookeeper/<version>/lib,
# and the Prometheus JMX exporter agent into $KAFKASTACK_CACHE/jmx-agent/<version>/ (the Kafka
# image bakes it in; the kafka tier's brokers load it as the manifests' KAFKA_OPTS say).
# Usage: fetch.sh [VERSION ...]   (default: both pinned lines, 4.x KRaft and 3.9 ZooKeeper mode)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cache="${KAFKASTACK_CACHE:-$HOME/.cache/kafkastack}/kafka"
# The newest agent on Maven Central (later ones are on GitHub only); infra/image_config.py
# names the same version and checksum for the init container that downloads it.
JMX_AGENT_VERSION=1.0.1
JMX_AGENT_SHA256=7d61f737fd661610ccc14aea79764faa1ea94a340cbc8f0029b3d2edea3d80c1
MAVEN_CENTRAL=https://repo1.maven.org/maven2

agent_dir="$(dirname "$cache")/jmx-agent/$JMX_AGENT_VERSION"
agent="$agent_dir/jmx_prometheus_javaagent.jar"
if ! echo "$JMX_AGENT_SHA256  $agent" | sha256sum -c --status - 2>/dev/null; then
  echo "kafkastack: fetching the Prometheus JMX agent $JMX_AGENT_VERSION from Maven Central" >&2
  mkdir -p "$agent_dir"
  curl -fsSL -o "$agent.part" \
    "$MAVEN_CENTRAL/io/prometheus/jmx/jmx_prometheus_javaagent/$JMX_AGENT_VERSION/jmx_prometheus_javaagent-$JMX_AGENT_VERSION.jar"
  # A jar whose checksum differs from the pinned one never takes the final name.
  echo "$JMX_AGENT_SHA256  $agent.part" | sha256sum -c --quiet -
  mv "$agent.part" "$agent"
fi
versions=("$@")
[ ${#versions[@]} -gt 0 ] || versions=(4.3.1 3.9.1)
for v in "${versions[@]}"; do
  lib="$cache/$v/lib"
  # The stamp names the pom's hash, so a change to the pom refetches.
  stamp="$(sha256sum "$here/pom.xml" | cut -c1-16)"
  [ "$(cat "$cache/$v/.complete" 2>/dev/null)" = "$stamp" ] && continue
  profile="-Pkafka4"; [[ "$v" == 3.* ]] && profile="-Pkafka3"
  echo "kafkastack: fetching Kafka $v jars from Maven Central" >&2
  # The stamp goes first: an interrupted fetch must never look complete.
  rm -f "$cache/$v/.complete"; rm -rf "$lib"; mkdir -p "$lib"
  # -C: a jar whose checksum does not match Maven Central's fails the fetch.
  mvn -B -q -C -f "$here/pom.xml" $profile -Dkafka.version="$v" \
    dependency:copy-dependencies -DincludeScope=runtime -DoutputDirectory="$lib"
  ls "$lib"/kafka_2.13-"$v".jar >/dev/null
  echo "$stamp" > "$cache/$v/.complete"
done

# ZooKeeper mode: the ensemble runs ZooKeeper's own jars, logging through logback as its release
# does (zookeeper-pom.xml), at the version the Kafka 3.x release was built with.
for v in "${versions[@]}"; do
  [[ "$v" == 3.* ]] || continue
  zk_jar="$(cd "$cache/$v/lib" && ls zookeeper-[0-9]*.jar)"
  zk="${zk_jar#zookeeper-}"; zk="${zk%.jar}"
  zk_dir="$(dirname "$cache")/zookeeper/$zk"
  stamp="$(sha256sum "$here/zookeeper-pom.xml" | cut -c1-16)"
  [ "$(cat "$zk_dir/.complete" 2>/dev/null)" = "$stamp" ] && continue
  echo "kafkastack: fetching ZooKeeper $zk jars from Maven Central" >&2
  rm -f "$zk_dir/.complete"; rm -rf "$zk_dir/lib"; mkdir -p "$zk_dir/lib"
  mvn -B -q -C -f "$here/zookeeper-pom.xml" -Dzookeeper.version="$zk" \
    dependency:copy-dependencies -DincludeScope=runtime -DoutputDirectory="$zk_dir/lib"
  ls "$zk_dir/lib"/zookeeper-"$zk".jar "$zk_dir"/lib/logback-classic-*.jar >/dev/null
  echo "$stamp" > "$zk_dir/.complete"
done
