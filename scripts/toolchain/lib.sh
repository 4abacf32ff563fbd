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
# Resolving is the exception (no pins yet, or KAFKASTACK_REPIN=1); `pinned` makes it read-only.
export GOFLAGS="-mod=mod"
# Go's build and module caches are ours, in the build folder, not the user's: the control
# plane's build fills the build cache the kubelet's reuses, then drop-go-caches.sh gives both
# back (GBs the real nodes' images need on a test machine; a rebuild of the same pins never
# happens, the stamps skip it).
export GOCACHE="$WORK/go-build" GOMODCACHE="$WORK/go-mod"

# A stamp records the exact pin a binary was built from; a matching stamp means nothing to do.
is_built() { [ -f "$STAMPS/$1" ] && [ "$(cat "$STAMPS/$1")" = "$2" ]; }
mark_built() { echo "$2" > "$STAMPS/$1"; }
# Where a part came from, for `kafkastack doctor`: "built from …" or "found at …".
mark_origin() { echo "$2" > "$STAMPS/$1.origin"; }

# `go build` / `go install` as every part is built: niced (Go builds share the machine's two
# cores with the tests), without debug information. DWARF is about a tenth of the compiler's
# work and a third of each binary (measured on etcd: docs/toolchain.md), and nothing here runs a
# debugger on these binaries; a panic's stack trace comes from the runtime's own tables, which
# stay. KAFKASTACK_GO_DEBUG=1 keeps it, for a part someone wants to step through. A caller's
# -ldflags (its -X version stamps) are kept beside -s -w.
gocommand() {
  local verb="$1" ld="" args=()
  shift
  while [ $# -gt 0 ]; do
    case "$1" in
      -ldflags) ld="$2"; shift 2 ;;
      -ldflags=*) ld="${1#-ldflags=}"; shift ;;
      *) args+=("$1"); shift ;;
    esac
  done
  local flags=(-trimpath)
  if [ "${KAFKASTACK_GO_DEBUG:-0}" != 1 ]; then
    flags+=(-gcflags=all=-dwarf=false)
    ld="-s -w${ld:+ $ld}"
  fi
  [ -n "$ld" ] && flags+=(-ldflags "$ld")
  nice -n 10 go "$verb" "${flags[@]}" "${args[@]}"
}
gobuild() { gocommand build "$@"; }
goinstall() { gocommand install "$@"; }

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

# Committed pins: PINS/<part>/go.{mod,sum}. `pinned` copies them into the current module and
# makes the build read-only: every module hash is checked against go.sum, nothing is resolved
# again, no checksum-database exception is needed. Without pins (or with KAFKASTACK_REPIN=1) it
# returns 1: the caller resolves, builds, and `save_pins` writes the pins back for review.
pinned() {
  if [ "${KAFKASTACK_REPIN:-0}" = 1 ] || [ ! -f "$PINS/$1/go.sum" ]; then
    log "$1: resolving modules (pins will be written to $PINS/$1)"
    return 1
  fi
  cp "$PINS/$1/go.mod" "$PINS/$1/go.sum" .
  export GOFLAGS=-mod=readonly
}
save_pins() {
  [ "$GOFLAGS" = "-mod=readonly" ] && return 0
  mkdir -p "$PINS/$1"; cp go.mod go.sum "$PINS/$1/"
  log "$1: wrote $PINS/$1/go.{mod,sum}: review and commit them"
}

# A fresh wrapper module in $WORK/<name>, as the current directory.
new_wrapper() {
  local dir="$WORK/$1"
  rm -rf "$dir"; mkdir -p "$dir"; cd "$dir"
  go mod init "kafkastack.local/$1-wrapper" >/dev/null 2>&1
}

# Where the module cache holds module@version (downloaded and checked against the checksum
# database first); outside any module, so no go.mod or go.sum is touched.
module_dir() {
  (cd "$WORK" && GOFLAGS= go mod download -json "$1") \
    | python3 -c 'import json,sys;print(json.load(sys.stdin)["Dir"])'
}

# k8s.io/kubernetes from a wrapper module: its go.mod replaces every k8s.io staging module with
# ./staging/...; the wrapper maps exactly those to the published v0.x modules instead. Used by
# build-kube.sh and build-kubelet.sh, which share the committed pins of part `kube`.
kube_resolve() {
  local kdir m
  kdir=$(module_dir "k8s.io/kubernetes@$KUBERNETES_VERSION")
  # Exactly the modules go.mod maps to ./staging (k8s.io/utils and kube-openapi are real modules).
  for m in $(sed -nE 's#^[[:space:]]*(replace[[:space:]]+)?(k8s\.io/[^[:space:]]+)[[:space:]]+=>[[:space:]]+\./staging/.*#\2#p' "$kdir/go.mod" | sort -u); do
    go mod edit -replace="$m=$m@$KUBERNETES_STAGING_VERSION"
  done
  # Every command package either script builds, so go.sum holds all their modules.
  go get $(printf "k8s.io/kubernetes/cmd/%s@$KUBERNETES_VERSION " \
    kube-apiserver kube-controller-manager kube-scheduler kubectl kubelet kube-proxy)
}
# The version every Kubernetes binary reports (empty otherwise).
kube_ldflags() {
  local minor p ld=""
  minor=$(echo "$KUBERNETES_VERSION" | cut -d. -f2)
  for p in k8s.io/component-base/version k8s.io/client-go/pkg/version; do
    ld="$ld -X $p.gitVersion=$KUBERNETES_VERSION -X $p.gitMajor=1 -X $p.gitMinor=$minor"
  done
  echo "$ld"
}

# Build Kubernetes command packages from the shared wrapper module and pins:
#   kube_build STAMP BINARY...   (the first binary must answer --version)
kube_build() {
  local stamp="$1"; shift
  local bins=("$@") ok=1 start b
  if is_built "$stamp" "$KUBERNETES_VERSION"; then
    for b in "${bins[@]}"; do [ -x "$BIN/$b" ] || ok=0; done
    [ $ok -eq 1 ] && return 0
  fi
  start=$(date +%s)
  new_wrapper "$stamp-$KUBERNETES_VERSION"
  pinned kube || kube_resolve
  for b in "${bins[@]}"; do
    gobuild -pgo=off -ldflags "$(kube_ldflags)" -o "$BIN/$b" "k8s.io/kubernetes/cmd/$b"
  done
  [[ "$("$BIN/${bins[0]}" --version)" == *"$KUBERNETES_VERSION"* ]]
  save_pins kube
  mark_built "$stamp" "$KUBERNETES_VERSION"
  log "${bins[*]} $KUBERNETES_VERSION built in $(( $(date +%s) - start ))s"
}
