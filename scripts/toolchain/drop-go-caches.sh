#!/usr/bin/env bash
# After the last Go build of `make nodes-toolchain`: the Go build and module caches (in the
# build folder: lib.sh) only speed up rebuilding sources already built, which the stamps skip.
# On a test machine they are gigabytes the real nodes' images need (infra/localcluster/node_disk.py).
set -euo pipefail
# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"
mib=$(du -sm "$GOCACHE" "$GOMODCACHE" 2>/dev/null | awk '{s += $1} END {print s + 0}')
# Module files are read-only: go itself removes its module cache.
if [ -d "$GOMODCACHE" ]; then go clean -modcache; fi
rm -rf "$GOCACHE"
log "gave back Go's build and module caches ($mib MiB)"
