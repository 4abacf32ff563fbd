#!/usr/bin/env bash
# Multus (thin plugin) for the real nodes' second network, from a wrapper module with committed
# pins. The module's own path is gopkg.in/k8snetworkplumbingwg/multus-cni.v4: the module proxy
# refuses the github.com/…/v4 spelling but serves this one, checked against the checksum database.
source "$(dirname "$0")/lib.sh"
is_built multus "$MULTUS_VERSION" && [ -x "$BIN/multus" ] && exit 0
start=$(date +%s)
mod=gopkg.in/k8snetworkplumbingwg/multus-cni.v4
new_wrapper "multus-$MULTUS_VERSION"
pinned multus || go get "$mod/cmd/multus@$MULTUS_VERSION"
# Static: the binary is copied into every node's CNI bin dir and run by containerd.
CGO_ENABLED=0 gobuild -ldflags "-X $mod/pkg/multus.version=$MULTUS_VERSION" \
  -o "$BIN/multus" "$mod/cmd/multus"
# Captured first: `| grep -q` would stop reading early and fail the pipe (pipefail).
[[ "$("$BIN/multus" -version)" == *"$MULTUS_VERSION"* ]]
save_pins multus
mark_built multus "$MULTUS_VERSION"
log "multus $MULTUS_VERSION built in $(( $(date +%s) - start ))s"
