# Shared by the build scripts: cache layout, version checks, timing.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=versions.env
source "$HERE/versions.env"
CACHE="${KAFKASTACK_CACHE:-$HOME/.cache/kafkastack}"
BIN="$CACHE/bin"
STAMPS="$CACHE/stamps"
WORK="$CACHE/build"
mkdir -p "$BIN" "$STAMPS" "$WORK"
export GOFLAGS="-mod=mod"
# Some published go.mod files are missing from the checksum database mirror; the module proxy
# still serves them with their hashes recorded in go.sum of each wrapper module.
export GONOSUMDB="github.com/pulumi/*"

# A stamp records the exact pin a binary was built from; a matching stamp means nothing to do.
is_built() { [ -f "$STAMPS/$1" ] && [ "$(cat "$STAMPS/$1")" = "$2" ]; }
mark_built() { echo "$2" > "$STAMPS/$1"; }

# Go builds share the machine's two cores with the tests; stay polite.
gobuild() { nice -n 10 go build -trimpath "$@"; }

log() { echo "[toolchain] $*" >&2; }
