#!/usr/bin/env bash
# kubelet and kube-proxy for real nodes: the same k8s.io/kubernetes wrapper module and committed
# pins (part `kube`) as the control plane, so every Kubernetes binary is one version.
source "$(dirname "$0")/lib.sh"
bins=(kubelet kube-proxy)
if is_built kubelet "$KUBERNETES_VERSION"; then
  ok=1; for b in "${bins[@]}"; do [ -x "$BIN/$b" ] || ok=0; done
  [ $ok -eq 1 ] && exit 0
fi
start=$(date +%s)
new_wrapper "kubelet-$KUBERNETES_VERSION"
pinned kube || kube_resolve
for b in "${bins[@]}"; do
  gobuild -pgo=off -ldflags "$(kube_ldflags)" -o "$BIN/$b" "k8s.io/kubernetes/cmd/$b"
done
"$BIN/kubelet" --version | grep -q "$KUBERNETES_VERSION"
save_pins kube
mark_built kubelet "$KUBERNETES_VERSION"
log "kubelet, kube-proxy $KUBERNETES_VERSION built in $(( $(date +%s) - start ))s"
