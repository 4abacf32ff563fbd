#!/usr/bin/env bash
# kube-apiserver, kube-controller-manager, kube-scheduler and kubectl from k8s.io/kubernetes.
# Its go.mod replaces every k8s.io staging module with ./staging/...; a wrapper module replaces
# them with the published staging modules of the matching v0.x version instead.
source "$(dirname "$0")/lib.sh"
bins=(kube-apiserver kube-controller-manager kube-scheduler kubectl)
if is_built kube "$KUBERNETES_VERSION"; then
  ok=1; for b in "${bins[@]}"; do [ -x "$BIN/$b" ] || ok=0; done
  [ $ok -eq 1 ] && exit 0
fi
start=$(date +%s)
new_wrapper "kube-$KUBERNETES_VERSION"
if ! pinned kube; then
  kdir=$(module_dir "k8s.io/kubernetes@$KUBERNETES_VERSION")
  # Exactly the modules go.mod maps to ./staging (k8s.io/utils and kube-openapi are real modules).
  for m in $(sed -nE 's#^[[:space:]]*(replace[[:space:]]+)?(k8s\.io/[^[:space:]]+)[[:space:]]+=>[[:space:]]+\./staging/.*#\2#p' "$kdir/go.mod" | sort -u); do
    go mod edit -replace="$m=$m@$KUBERNETES_STAGING_VERSION"
  done
  go get "k8s.io/kubernetes@$KUBERNETES_VERSION"
fi
minor=$(echo "$KUBERNETES_VERSION" | cut -d. -f2)
ld=""
for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
  ld="$ld -X $p.gitVersion=$KUBERNETES_VERSION -X $p.gitMajor=1 -X $p.gitMinor=$minor"
done
for b in "${bins[@]}"; do
  gobuild -pgo=off -ldflags "$ld" -o "$BIN/$b" "k8s.io/kubernetes/cmd/$b"
done
"$BIN/kubectl" version --client | grep -q "$KUBERNETES_VERSION"
save_pins kube
mark_built kube "$KUBERNETES_VERSION"
log "kubernetes $KUBERNETES_VERSION built in $(( $(date +%s) - start ))s"
