#!/usr/bin/env bash
# The pulumi CLI from its Go module. pkg/go.mod replaces sdk/v3 with a local path, so it cannot be
# `go install`ed: build it from a throwaway wrapper module that requires both at the same tag.
source "$(dirname "$0")/lib.sh"
is_built pulumi "$PULUMI_VERSION" && [ -x "$BIN/pulumi" ] && exit 0
start=$(date +%s)
new_wrapper "pulumi-$PULUMI_VERSION"
cat > tools.go <<'GO'
//go:build tools

package tools

import _ "github.com/pulumi/pulumi/pkg/v3/cmd/pulumi"
GO
if ! pinned pulumi; then
  # Non-local replaces of pkg/go.mod must be copied into the wrapper, or the wrong module is used.
  pkgdir=$(module_dir "github.com/pulumi/pulumi/pkg/v3@$PULUMI_VERSION")
  grep -E '^replace .* => [^.]' "$pkgdir/go.mod" | grep -v '=> \.' | while read -r _ from _ to ver; do
    go mod edit -replace="$from=$to@$ver"
  done
  go get "github.com/pulumi/pulumi/pkg/v3@$PULUMI_VERSION" "github.com/pulumi/pulumi/sdk/v3@$PULUMI_VERSION"
  go mod tidy
fi
gobuild -tags osusergo,grpcnotrace \
  -ldflags "-X github.com/pulumi/pulumi/sdk/v3/go/common/version.Version=$PULUMI_VERSION" \
  -o "$BIN/pulumi" github.com/pulumi/pulumi/pkg/v3/cmd/pulumi
[ "$("$BIN/pulumi" version)" = "$PULUMI_VERSION" ]
save_pins pulumi
mark_built pulumi "$PULUMI_VERSION"
log "pulumi $PULUMI_VERSION built in $(( $(date +%s) - start ))s"
