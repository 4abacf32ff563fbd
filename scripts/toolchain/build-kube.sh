#!/usr/bin/env bash
# kube-apiserver, kube-controller-manager, kube-scheduler and kubectl from k8s.io/kubernetes
# (a wrapper module; see kube_resolve in lib.sh).
source "$(dirname "$0")/lib.sh"
bins=(kube-apiserver kube-controller-manager kube-scheduler kubectl)
if is_built kube "$KUBERNETES_VERSION"; then
  ok=1; for b in "${bins[@]}"; do [ -x "$BIN/$b" ] || ok=0; done
  [ $ok -eq 1 ] && exit 0
fi
start=$(date +%s)
new_wrapper "kube-$KUBERNETES_VERSION"
pinned kube || kube_resolve
for b in "${bins[@]}"; do
  gobuild -pgo=off -ldflags "$(kube_ldflags)" -o "$BIN/$b" "k8s.io/kubernetes/cmd/$b"
done
"$BIN/kubectl" version --client | grep -q "$KUBERNETES_VERSION"
save_pins kube
mark_built kube "$KUBERNETES_VERSION"
log "kubernetes $KUBERNETES_VERSION built in $(( $(date +%s) - start ))s"
