#!/usr/bin/env bash
# cert-manager for the real nodes: its controllers, started by our small main package
# (scripts/toolchain/cert-manager-controller: the proxy refuses the module of cert-manager's own
# binary, cmd/controller, and serves the module that holds the controllers), and its published
# CustomResourceDefinitions, which every local cluster installs.
source "$(dirname "$0")/lib.sh"
main_dir="$HERE/cert-manager-controller"
# The stamp follows the main package and the committed pins too: a change to either rebuilds.
want="$CERT_MANAGER_VERSION $(cat "$main_dir"/*.go "$PINS"/cert-manager/go.* 2>/dev/null \
  | sha256sum | cut -c1-16)"
crds="$CACHE/cert-manager/$CERT_MANAGER_VERSION/crds"
is_built cert-manager "$want" && [ -x "$BIN/cert-manager-controller" ] \
  && [ -f "$crds/cert-manager.io_certificates.yaml" ] && exit 0
start=$(date +%s)
mod=github.com/cert-manager/cert-manager
new_wrapper "cert-manager-$CERT_MANAGER_VERSION"
cp "$main_dir"/*.go .
if ! pinned cert-manager; then
  go get "$mod@$CERT_MANAGER_VERSION"
  go mod tidy
fi
# Static (no cgo): a host process of the local cluster, like its control plane.
CGO_ENABLED=0 gobuild -o "$BIN/cert-manager-controller" .
built="$("$BIN/cert-manager-controller" -version)"
[[ "$built" == "$CERT_MANAGER_VERSION" ]] || {
  log "built cert-manager $built, pinned $CERT_MANAGER_VERSION: repin (KAFKASTACK_REPIN=1)"; exit 1; }
# The CRDs as the module publishes them (deploy/crds, generated from its API types).
rm -rf "$crds"; mkdir -p "$crds"
cp "$(module_dir "$mod@$CERT_MANAGER_VERSION")"/deploy/crds/cert-manager.io_*.yaml "$crds/"
chmod u+w "$crds"/*.yaml
save_pins cert-manager
mark_origin cert-manager "built from $mod@$CERT_MANAGER_VERSION (its controllers; main: scripts/toolchain/cert-manager-controller)"
mark_built cert-manager "$want"
log "cert-manager-controller $CERT_MANAGER_VERSION built in $(( $(date +%s) - start ))s"
