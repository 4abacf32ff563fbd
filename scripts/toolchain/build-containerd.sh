#!/usr/bin/env bash
# containerd, its runc shim and ctr for real nodes, from a wrapper module with committed pins.
# Static (CGO_ENABLED=0) and without the snapshotters that need C libraries; overlayfs and native
# remain, which is what the nodes use.
source "$(dirname "$0")/lib.sh"
bins=(containerd containerd-shim-runc-v2 ctr)
if is_built containerd "$CONTAINERD_VERSION"; then
  ok=1; for b in "${bins[@]}"; do [ -x "$BIN/$b" ] || ok=0; done
  [ $ok -eq 1 ] && exit 0
fi
start=$(date +%s)
mod=github.com/containerd/containerd/v2
new_wrapper "containerd-$CONTAINERD_VERSION"
if ! pinned containerd; then
  go get $(printf "$mod/cmd/%s@$CONTAINERD_VERSION " "${bins[@]}")
fi
for b in "${bins[@]}"; do
  CGO_ENABLED=0 gobuild -tags "no_btrfs no_devmapper no_zfs" \
    -ldflags "-X $mod/version.Version=$CONTAINERD_VERSION" -o "$BIN/$b" "$mod/cmd/$b"
done
[[ "$("$BIN/containerd" --version)" == *"$CONTAINERD_VERSION"* ]]
save_pins containerd
mark_built containerd "$CONTAINERD_VERSION"
log "containerd $CONTAINERD_VERSION built in $(( $(date +%s) - start ))s"
