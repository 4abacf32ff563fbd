#!/usr/bin/env bash
# CoreDNS for the real nodes' cluster DNS (Service and headless pod names), from a wrapper module
# with committed pins. Static: it runs in a busybox-less image of its own (scripts/images).
source "$(dirname "$0")/lib.sh"
is_built coredns "$COREDNS_VERSION" && [ -x "$BIN/coredns" ] && exit 0
start=$(date +%s)
mod=github.com/coredns/coredns
new_wrapper "coredns-$COREDNS_VERSION"
pinned coredns || go get "$mod@$COREDNS_VERSION"
# Static, stripped like every part (lib.sh): the binary goes into an image imported on every node.
CGO_ENABLED=0 gobuild -ldflags "-X $mod/coremain.GitCommit=$COREDNS_VERSION" \
  -o "$BIN/coredns" "$mod"
# Captured first: `| grep -q` would stop reading early and fail the pipe (pipefail).
[[ "$("$BIN/coredns" -version)" == *"${COREDNS_VERSION#v}"* ]]
save_pins coredns
mark_built coredns "$COREDNS_VERSION"
log "coredns $COREDNS_VERSION built in $(( $(date +%s) - start ))s"
