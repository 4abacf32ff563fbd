#!/usr/bin/env bash
# Every binary the cluster tier needs, into $KAFKASTACK_CACHE/bin. Seconds when all are built.
# The Pulumi Python language host and Kubernetes provider are not here: see docs/toolchain.md.
set -euo pipefail
here="$(dirname "$0")"
for part in etcd kwok kube pulumi actionlint; do
  "$here/build-$part.sh"
done
