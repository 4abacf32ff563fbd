#!/usr/bin/env bash
# etcd for the local control plane (Debian's 3.4 is too old for Kubernetes 1.36).
source "$(dirname "$0")/lib.sh"
is_built etcd "$ETCD_VERSION" && [ -x "$BIN/etcd" ] && exit 0
start=$(date +%s)
new_wrapper "etcd-$ETCD_VERSION"
if ! pinned etcd; then
  # server/go.mod replaces its sibling modules with local paths; require them at the same tag.
  for m in api/v3 client/pkg/v3 client/v3 pkg/v3 server/v3; do
    go mod edit -require="go.etcd.io/etcd/$m@$ETCD_VERSION"
  done
  go get "go.etcd.io/etcd/server/v3@$ETCD_VERSION"
fi
gobuild -o "$BIN/etcd" go.etcd.io/etcd/server/v3
[[ "$("$BIN/etcd" --version)" == *"${ETCD_VERSION#v}"* ]]
save_pins etcd
mark_built etcd "$ETCD_VERSION"
log "etcd $ETCD_VERSION built in $(( $(date +%s) - start ))s"
