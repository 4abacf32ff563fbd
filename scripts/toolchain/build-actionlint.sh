#!/usr/bin/env bash
# actionlint checks .github/workflows in the test suite.
source "$(dirname "$0")/lib.sh"
is_built actionlint "$ACTIONLINT_VERSION" && [ -x "$BIN/actionlint" ] && exit 0
GOBIN="$BIN" goinstall "github.com/rhysd/actionlint/cmd/actionlint@$ACTIONLINT_VERSION"
mark_built actionlint "$ACTIONLINT_VERSION"
