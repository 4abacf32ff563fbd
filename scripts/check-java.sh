#!/usr/bin/env bash
# Spark 4 and Kafka 4 both need Java 17 or newer; say so plainly instead of failing deep inside Spark.
set -euo pipefail
if ! command -v java >/dev/null 2>&1; then
  echo "kafkastack: Java 17+ is required (Spark and Kafka run on it). Install a JDK, e.g. 'apt-get install openjdk-17-jdk-headless'." >&2
  exit 1
fi
major=$(java -XshowSettings:properties -version 2>&1 | awk -F'= ' '/java.specification.version/ {print $2}')
if [ "${major%%.*}" -lt 17 ]; then
  echo "kafkastack: Java $major found, 17+ is required. Point JAVA_HOME/PATH at a JDK 17+." >&2
  exit 1
fi
