#!/usr/bin/env bash
# Every binary the engine and cluster tiers need, into $KAFKASTACK_CACHE/bin. Seconds when all
# are built. The Pulumi language host and Kubernetes provider are built from source archives
# (KAFKASTACK_SOURCES; see docs/toolchain.md) because the module proxy refuses their modules.
# cert-manager's controllers issue the stacks' certificates on every local cluster.
set -euo pipefail
here="$(dirname "$0")"
for part in etcd kwok kube pulumi pulumi-python pulumi-kubernetes cert-manager actionlint; do
  "$here/build-$part.sh"
done
