#!/usr/bin/env bash
# After the last Go build of `make nodes-toolchain`: the Go build and module caches (in the
# build folder: lib.sh) only speed up rebuilding sources already built, which the stamps skip.
# On a test machine they are gigabytes the real nodes' images need (infra/localcluster/node_disk.py).
# Nothing to give back when nothing was built (a warm run): not an error.
set -euo pipefail
# shellcheck source=lib.sh
source "$(dirname "$0")/lib.sh"
mib=0
for dir in "$GOCACHE" "$GOMODCACHE"; do
  if [ -d "$dir" ]; then
    size=$(du -sm "$dir")
    mib=$((mib + ${size%%[[:space:]]*}))
  fi
done
# Module files are read-only: go itself removes its module cache.
if [ -d "$GOMODCACHE" ]; then go clean -modcache; fi
rm -rf "$GOCACHE"
log "gave back Go's build and module caches ($mib MiB)"
