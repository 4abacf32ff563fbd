#!/usr/bin/env bash
# Class-data sharing for Kafka's JVMs, as the public apache/kafka image has it (kafka.jsa): every
# start of a broker or a tool loads, parses and verifies thousands of classes; mapped from an
# archive instead, a KRaft node starts in 2.3 s instead of 3.9 s here (4.1 CPU-seconds instead
# of 6.7) and a tool on 1.15 CPU-seconds instead of 1.77 (bench/kafka_start.py). For each Kafka version whose jars
# scripts/kafka/fetch.sh fetched, this records which classes a broker and the tools the
# manifests and tests run load ($KAFKASTACK_CACHE/kafka/<version>/kafka.classlist) and dumps an
# archive of them for the jars in the cache (kafka.jsa beside lib/). The image build dumps its
# own from the same list for its own paths (scripts/images/build.sh).
#
# The recording runs a single KRaft node on loopback in a network namespace of its own (no port
# of the host is taken). The JVM uses an archive only for the classpath, jar sizes and times and
# JDK it was dumped for, and otherwise starts without it: the stamp names the JDK and the jars,
# so a JDK update records again. Needs root (the namespace).
# Usage: class-archive.sh [VERSION ...]   (default: both pinned lines)
set -euo pipefail
cache="${KAFKASTACK_CACHE:-$HOME/.cache/kafkastack}/kafka"
images="$(cd "$(dirname "$0")/../images/kafka" && pwd)"
versions=("$@")
[ ${#versions[@]} -gt 0 ] || versions=(4.3.1 3.9.1)
[ "$(id -u)" -eq 0 ] || { echo "class-archive.sh: needs root (a network namespace)" >&2; exit 1; }

# The jars in name order, as the image's kafka-run-class.sh lists them: the archive records the
# classpath, and the JVM's own `lib/*` expands in directory order, which differs between copies.
classpath() { local jars=("$1"/*.jar); local IFS=:; echo "${jars[*]}"; }

# Inside the namespace: $1 work dir, $2 classpath, $3 log option; the lists land in $1.
record() {
  local work="$1" cp="$2" log="$3" broker tool
  ip link set lo up
  # The stacks' nodes and tools talk TLS, and their clients log in with SCRAM: a listener of
  # that kind too, so the archive holds the JDK's TLS classes and Kafka's SASL ones (a tool's
  # describe over it took 1.74 CPU-seconds without them in the archive, 1.57 with). The key
  # and certificate come from the JRE's keytool: nothing beyond Java is needed.
  local secret=kafkastack-classes
  # Its words only when it fails (the broker would then die on a missing keystore, which says less).
  keys() {
    keytool "$@" >"$work/keytool.log" 2>&1 && return 0
    echo "class-archive.sh: keytool $1 failed:" >&2
    cat "$work/keytool.log" >&2
    return 1
  }
  keys -genkeypair -keystore "$work/server.p12" -storetype PKCS12 -storepass $secret \
    -alias node -keyalg RSA -keysize 2048 -validity 2 -dname CN=localhost \
    -ext SAN=ip:127.0.0.1 || return 1
  keys -exportcert -keystore "$work/server.p12" -storepass $secret -alias node -rfc \
    -file "$work/node.pem" || return 1
  keys -importcert -noprompt -keystore "$work/trust.p12" -storetype PKCS12 \
    -storepass $secret -alias node -file "$work/node.pem" || return 1
  local login="org.apache.kafka.common.security.scram.ScramLoginModule required"
  login="$login username=\"admin\" password=\"$secret\";"
  cat > "$work/server.properties" <<EOF
process.roles=broker,controller
node.id=1
controller.quorum.voters=1@127.0.0.1:9093
listeners=PLAINTEXT://127.0.0.1:9092,CONTROLLER://127.0.0.1:9093,SASL_SSL://127.0.0.1:9094
controller.listener.names=CONTROLLER
inter.broker.listener.name=PLAINTEXT
listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT,SASL_SSL:SASL_SSL
sasl.enabled.mechanisms=SCRAM-SHA-512
listener.name.sasl_ssl.scram-sha-512.sasl.jaas.config=$login
ssl.keystore.type=PKCS12
ssl.keystore.location=$work/server.p12
ssl.keystore.password=$secret
log.dirs=$work/data
offsets.topic.replication.factor=1
transaction.state.log.replication.factor=1
group.initial.rebalance.delay.ms=0
EOF
  cat > "$work/client.properties" <<EOF
security.protocol=SASL_SSL
sasl.mechanism=SCRAM-SHA-512
sasl.jaas.config=$login
ssl.truststore.type=PKCS12
ssl.truststore.location=$work/trust.p12
ssl.truststore.password=$secret
EOF
  java_run() { local list="$1"; shift; java -Xmx256m -XX:DumpLoadedClassList="$work/$list" $log -cp "$cp" "$@"; }
  java_run storage.lst kafka.tools.StorageTool format -t kafkastack-classes-0001 \
    -c "$work/server.properties" --add-scram "SCRAM-SHA-512=[name=admin,password=$secret]" \
    >/dev/null
  java -Xmx512m -XX:+UseG1GC -XX:DumpLoadedClassList="$work/broker.lst" $log -cp "$cp" \
    kafka.Kafka "$work/server.properties" >"$work/broker.log" 2>&1 &
  broker=$!
  for _ in $(seq 1 300); do
    [[ "$(ss -ltn)" == *"127.0.0.1:9092 "* ]] && break
    kill -0 "$broker" 2>/dev/null || { tail -20 "$work/broker.log" >&2; return 1; }
    sleep 0.2
  done
  local bs=(--bootstrap-server 127.0.0.1:9092) tls=(--bootstrap-server 127.0.0.1:9094)
  # Each tool as the manifests and tests call it; one that fails still recorded what it loaded.
  for tool in \
    "topics.lst org.apache.kafka.tools.TopicCommand ${bs[*]} --create --topic classes --partitions 3" \
    "topics.lst org.apache.kafka.tools.TopicCommand ${bs[*]} --describe --topic classes" \
    "configs.lst kafka.admin.ConfigCommand ${bs[*]} --entity-type brokers --entity-default --alter --add-config log.cleaner.threads=1" \
    "quorum.lst org.apache.kafka.tools.MetadataQuorumCommand ${bs[*]} describe --status" \
    "producer.lst org.apache.kafka.tools.VerifiableProducer ${bs[*]} --topic classes --max-messages 200 --acks -1" \
    "consumer.lst org.apache.kafka.tools.consumer.ConsoleConsumer ${bs[*]} --topic classes --from-beginning --max-messages 10" \
    "tls-topics.lst org.apache.kafka.tools.TopicCommand ${tls[*]} --command-config $work/client.properties --describe --topic classes" \
    "tls-producer.lst org.apache.kafka.tools.VerifiableProducer ${tls[*]} --producer.config $work/client.properties --topic classes --max-messages 20 --acks -1"; do
    # shellcheck disable=SC2086  # the words of each tool line are meant to split
    java_run $tool >/dev/null 2>&1 || echo "class-archive.sh: ${tool#* } ended non-zero; its classes are recorded so far" >&2
  done
  kill "$broker"; wait "$broker" || true
}

for v in "${versions[@]}"; do
  dir="$cache/$v"
  [ -f "$dir/.complete" ] || { echo "Kafka $v jars are missing: run scripts/kafka/fetch.sh $v" >&2; exit 1; }
  # The script's content, not its path: a checkout elsewhere records the same archive.
  stamp="$( (java -version 2>&1; cat "$dir/.complete"; sha256sum < "$0") | sha256sum | cut -c1-16)"
  [ "$(cat "$dir/class-archive.stamp" 2>/dev/null)" = "$stamp" ] && [ -f "$dir/kafka.jsa" ] && continue
  echo "kafkastack: recording Kafka $v's class archive" >&2
  rm -f "$dir/class-archive.stamp" "$dir/kafka.jsa"
  work="$(mktemp -d)"
  cp="$(classpath "$dir/lib")"
  log="-Dlog4j2.configurationFile=$images/config/log4j2.yaml"
  [[ "$v" == 3.* ]] && log="-Dlog4j.configuration=file:$images/config-3.x/log4j.properties"
  export -f record
  unshare --net bash -c 'record "$@"' _ "$work" "$cp" "$log"
  # One line per class, the first run's order; comments dropped.
  cat "$work"/*.lst | grep -v '^#' | awk '!seen[$0]++' > "$dir/kafka.classlist.part"
  java -Xshare:dump -XX:SharedClassListFile="$dir/kafka.classlist.part" \
    -XX:SharedArchiveFile="$dir/kafka.jsa.part" -Xlog:cds=off -cp "$cp" >/dev/null
  mv "$dir/kafka.classlist.part" "$dir/kafka.classlist"
  mv "$dir/kafka.jsa.part" "$dir/kafka.jsa"
  rm -rf "$work"
  echo "$stamp" > "$dir/class-archive.stamp"
  echo "kafkastack: Kafka $v: $(wc -l < "$dir/kafka.classlist") classes archived" >&2
done
