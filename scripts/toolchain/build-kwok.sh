#!/usr/bin/env bash
# kwok (fake nodes) and kwokctl (cluster lifecycle); their go.mod has no local replaces.
source "$(dirname "$0")/lib.sh"
is_built kwok "$KWOK_VERSION" && [ -x "$BIN/kwok" ] && [ -x "$BIN/kwokctl" ] && exit 0
start=$(date +%s)
GOBIN="$BIN" goinstall "sigs.k8s.io/kwok/cmd/kwok@$KWOK_VERSION" "sigs.k8s.io/kwok/cmd/kwokctl@$KWOK_VERSION"
mark_built kwok "$KWOK_VERSION"
log "kwok $KWOK_VERSION built in $(( $(date +%s) - start ))s"
