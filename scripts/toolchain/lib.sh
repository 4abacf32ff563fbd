# Shared by the build scripts: cache layout, version checks, timing, source archives.
set -euo pipefail
HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(cd "$HERE/../.." && pwd)"
# shellcheck source=versions.env
source "$HERE/versions.env"
CACHE="${KAFKASTACK_CACHE:-$HOME/.cache/kafkastack}"
BIN="$CACHE/bin"
STAMPS="$CACHE/stamps"
WORK="$CACHE/build"
# Resolved go.mod/go.sum of builds whose module graph we had to change: committed, verified.
PINS="$HERE/pins"
mkdir -p "$BIN" "$STAMPS" "$WORK"
export GOFLAGS="-mod=mod"
# Some published go.mod files are missing from the checksum database mirror; the module proxy
# still serves them with their hashes recorded in go.sum of each wrapper module.
export GONOSUMDB="github.com/pulumi/*"

# A stamp records the exact pin a binary was built from; a matching stamp means nothing to do.
is_built() { [ -f "$STAMPS/$1" ] && [ "$(cat "$STAMPS/$1")" = "$2" ]; }
mark_built() { echo "$2" > "$STAMPS/$1"; }
# Where a part came from, for `kafkastack doctor`: "built from …" or "found at …".
mark_origin() { echo "$2" > "$STAMPS/$1.origin"; }

# Go builds share the machine's two cores with the tests; stay polite.
gobuild() { nice -n 10 go build -trimpath "$@"; }

log() { echo "[toolchain] $*" >&2; }

# Third-party source archives the module proxy cannot serve. KAFKASTACK_SOURCES names their
# folder; by default the shared/sources folder beside this checkout.
sources_dir() {
  local dir="${KAFKASTACK_SOURCES:-$REPO/../shared/sources}"
  if [ ! -d "$dir" ]; then
    log "no source archives at $dir: set KAFKASTACK_SOURCES to the folder holding $*"
    log "(or install the binary yourself: see docs/toolchain.md)"
    return 1
  fi
  (cd "$dir" && pwd)
}

# Unpack a verified archive into a fresh folder; prints the folder.
unpack_verified() {
  local archive="$1" sha="$2" dest="$3" src
  src="$(sources_dir "$archive")/$archive"
  [ -f "$src" ] || { log "$src is missing: set KAFKASTACK_SOURCES to the folder that has it"; return 1; }
  echo "$sha  $src" | sha256sum -c --quiet - >&2 \
    || { log "$src does not match its pinned sha256 ($sha): refusing to build from it"; return 1; }
  rm -rf "$dest"; mkdir -p "$dest"
  tar -xzf "$src" -C "$dest"
}

# Build with the committed go.mod/go.sum of PINS/<part>: every module hash is checked against
# them and nothing is re-resolved. KAFKASTACK_REPIN=1 resolves again (after the caller's
# `go mod edit`s) and writes the new pins back for review.
use_pins() {
  local part="$1" dir="$PINS/$1"
  if [ "${KAFKASTACK_REPIN:-0}" = 1 ] || [ ! -f "$dir/go.sum" ]; then
    log "$part: resolving modules and writing $dir/go.{mod,sum} (commit them)"
    # Only pulumi-kubernetes' own SDK module is absent from the checksum database.
    GONOSUMDB=github.com/pulumi/pulumi-kubernetes GOFLAGS=-mod=mod go mod tidy
    mkdir -p "$dir"; cp go.mod go.sum "$dir/"
  else
    cp "$dir/go.mod" "$dir/go.sum" .
  fi
  # From here on go.sum is the authority: a hash that differs fails the build.
  export GOFLAGS=-mod=readonly
  unset GONOSUMDB
}
