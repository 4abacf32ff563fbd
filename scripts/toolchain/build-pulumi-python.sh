#!/usr/bin/env bash
# The Pulumi Python language host (`pulumi-language-python` and its `-exec` shim), which the CLI
# starts to run infra/. Its module is refused by the proxy, so it is built from the published
# source archive (KAFKASTACK_SOURCES) with the pinned module graph in pins/pulumi-language-python.
source "$(dirname "$0")/lib.sh"
part=pulumi-language-python
pin="$PULUMI_VERSION:$PULUMI_LANGUAGE_PYTHON_SHA256"
is_built "$part" "$pin" && [ -x "$BIN/pulumi-language-python" ] && exit 0
# A host installed by other means (pulumi's own installer) is used as it is.
found="$(command -v pulumi-language-python || true)"
if [ -n "$found" ] && [ "$found" != "$BIN/pulumi-language-python" ]; then
  mark_origin "$part" "found at $found"; exit 0
fi
start=$(date +%s)
dir="$WORK/$part-$PULUMI_VERSION"
unpack_verified "$PULUMI_LANGUAGE_PYTHON_ARCHIVE" "$PULUMI_LANGUAGE_PYTHON_SHA256" "$dir"
cd "$dir/sdk/python/cmd/pulumi-language-python"
# The tests import the upstream monorepo; the binary does not.
rm -f ./*_test.go
if ! pinned "$part"; then
  # Upstream points pkg and sdk at monorepo paths; the proxy serves both at the CLI's tag.
  go mod edit -dropreplace=github.com/pulumi/pulumi/pkg/v3 \
    -dropreplace=github.com/pulumi/pulumi/sdk/v3 \
    -require="github.com/pulumi/pulumi/pkg/v3@$PULUMI_VERSION" \
    -require="github.com/pulumi/pulumi/sdk/v3@$PULUMI_VERSION"
  go mod tidy
fi
gobuild -tags osusergo,grpcnotrace \
  -ldflags "-X github.com/pulumi/pulumi/sdk/v3/go/common/version.Version=$PULUMI_VERSION" \
  -o "$BIN/pulumi-language-python" .
save_pins "$part"
install -m 0755 ../pulumi-language-python-exec "$BIN/pulumi-language-python-exec"
"$BIN/pulumi-language-python" --help >/dev/null 2>&1 || [[ "$("$BIN/pulumi-language-python" -h 2>&1)" == *Usage* ]]
mark_built "$part" "$pin"
mark_origin "$part" "built from $PULUMI_LANGUAGE_PYTHON_ARCHIVE (sha256 verified)"
log "$part $PULUMI_VERSION built in $(( $(date +%s) - start ))s"
