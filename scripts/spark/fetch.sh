#!/usr/bin/env bash
# Spark's s3a connector (hadoop-aws + AWS SDK v2 modules) from Maven Central into
# $KAFKASTACK_CACHE/hadoop-aws/<hadoop version>/lib, once per version and pom.
# The Hadoop version is the one inside the pyspark wheel: s3a only works against the exact
# hadoop-client jars Spark runs with, so the pom's pin must match it.
# Usage: fetch.sh   (pyspark from the repo's .venv, else from python3)
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
repo="$(cd "$here/../.." && pwd)"
cache="${KAFKASTACK_CACHE:-$HOME/.cache/kafkastack}/hadoop-aws"

python="$repo/.venv/bin/python"; [ -x "$python" ] || python=python3
# find_spec locates the package without importing it (an import costs most of a warm run).
jars="$("$python" -c 'import importlib.util as u; print(u.find_spec("pyspark").submodule_search_locations[0])' 2>/dev/null)/jars" || {
  echo "kafkastack: no pyspark found by $python; run 'make venv'" >&2
  exit 1
}
api=("$jars"/hadoop-client-api-*.jar)
[ -f "${api[0]}" ] || { echo "kafkastack: no hadoop-client-api jar in $jars" >&2; exit 1; }
wheel_version="$(basename "${api[0]}" .jar)"; wheel_version="${wheel_version#hadoop-client-api-}"
pom_version="$(sed -n 's:.*<hadoop.version>\(.*\)</hadoop.version>.*:\1:p' "$here/pom.xml")"
if [ "$wheel_version" != "$pom_version" ]; then
  echo "kafkastack: pyspark ships Hadoop $wheel_version but scripts/spark/pom.xml pins hadoop-aws" \
    "$pom_version; set hadoop.version to $wheel_version (and awssdk.version to that Hadoop's" \
    "aws-java-sdk-v2.version)" >&2
  exit 1
fi

v="$wheel_version"
lib="$cache/$v/lib"
# The stamp names the pom's hash, so a change to the pom refetches.
stamp="$(sha256sum "$here/pom.xml" | cut -c1-16)"
[ "$(cat "$cache/$v/.complete" 2>/dev/null)" = "$stamp" ] && exit 0
echo "kafkastack: fetching hadoop-aws $v (s3a) jars from Maven Central" >&2
# No .complete while the jars change: s3a.py only uses a cache a fetch finished.
rm -f "$cache/$v/.complete"; rm -rf "$lib"; mkdir -p "$lib"
# -C: a jar whose checksum does not match Maven Central's fails the fetch.
mvn -B -q -C -f "$here/pom.xml" \
  dependency:copy-dependencies -DincludeScope=runtime -DoutputDirectory="$lib"
ls "$lib"/hadoop-aws-"$v".jar >/dev/null
echo "$stamp" > "$cache/$v/.complete"
