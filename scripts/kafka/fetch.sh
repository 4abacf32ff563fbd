#!/usr/bin/env bash
# Kafka runtime jars from Maven Central into $KAFKASTACK_CACHE/kafka/<version>/lib, once per version.
# Usage: fetch.sh [VERSION ...]   (default: both pinned lines, 4.x KRaft and 3.9 ZooKeeper mode)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
cache="${KAFKASTACK_CACHE:-$HOME/.cache/kafkastack}/kafka"
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
