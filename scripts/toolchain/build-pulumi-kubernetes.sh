#!/usr/bin/env bash
# The Pulumi Kubernetes provider (`pulumi-resource-kubernetes`). The proxy refuses its module, so
# it is built from the published source archive (KAFKASTACK_SOURCES) the way upstream's Makefile
# does: generate the schema from Kubernetes' OpenAPI specs, embed it, build. Three dependencies
# the proxy refuses are replaced by served, compatible versions (versions.env says which).
source "$(dirname "$0")/lib.sh"
part=pulumi-resource-kubernetes
version="${PULUMI_KUBERNETES_VERSION#v}"
pin="$PULUMI_KUBERNETES_VERSION:$PULUMI_KUBERNETES_SHA256"
is_built "$part" "$pin" && [ -x "$BIN/$part" ] && exit 0
# A provider installed with `pulumi plugin install resource kubernetes <version>` is used as it is.
plugin="${PULUMI_HOME:-$HOME/.pulumi}/plugins/resource-kubernetes-$PULUMI_KUBERNETES_VERSION/$part"
if [ -x "$plugin" ]; then mark_origin "$part" "found at $plugin"; exit 0; fi
start=$(date +%s)
root="$WORK/pulumi-kubernetes-$PULUMI_KUBERNETES_VERSION"
unpack_verified "$PULUMI_KUBERNETES_ARCHIVE" "$PULUMI_KUBERNETES_SHA256" "$root"
cd "$root/provider"

# The .NET SDK generator's module is refused; only SDK generation uses it, never the provider.
python3 - cmd/pulumi-gen-kubernetes/main.go <<'PY'
import re, sys
path = sys.argv[1]
src = open(path).read()
src = re.sub(r'\n\tdotnetgen "[^"]+"', "", src)
start = src.index("func writeDotnetClient(")
end = src.index("\n}\n", start) + 3
src = src[:start] + "func writeDotnetClient(pkg *schema.Package, outdir, templateDir string) {\n\tpanic(\"the .NET SDK is not generated in this build\")\n}\n" + src[end:]
open(path, "w").write(src)
PY

# fluxcd/pkg/ssa v0.71.0 still imports autoscaling/v2beta2, which k8s.io/api 0.36 removed.
ssa="$root/fluxcd-ssa"
ssa_src=$(module_dir "github.com/fluxcd/pkg/ssa@$FLUXCD_SSA_VERSION")
cp -r "$ssa_src" "$ssa"; chmod -R u+w "$ssa"
python3 - "$ssa/normalize/normalize.go" <<'PY'
import sys
path = sys.argv[1]
lines = open(path).read().split("\n")
out, skip_indent = [], None
for line in lines:
    stripped = line.lstrip("\t")
    indent = len(line) - len(stripped)
    if skip_indent is not None:
        if indent == skip_indent and stripped.startswith(("case ", "default:", "}")):
            skip_indent = None
        else:
            continue
    if stripped.startswith("case *hpav2beta2.HorizontalPodAutoscaler:"):
        skip_indent = indent
        continue
    if 'hpav2beta2 "k8s.io/api/autoscaling/v2beta2"' in line:
        continue
    out.append(line)
src = "\n".join(out)
assert "hpav2beta2" not in src, "normalize.go changed upstream: update this patch"
open(path, "w").write(src)
PY

if ! pinned "$part"; then
  go mod edit -dropreplace=github.com/pulumi/pulumi-kubernetes/sdk/v4 \
    -droprequire=github.com/pulumi/pulumi-dotnet/pulumi-language-dotnet/v3 \
    -require="github.com/pulumi/pulumi-kubernetes/sdk/v4@$PULUMI_KUBERNETES_VERSION" \
    -require="github.com/pulumi/pulumi/pkg/v3@$PULUMI_KUBERNETES_PKG_VERSION" \
    -require="github.com/pulumi/pulumi/sdk/v3@$PULUMI_KUBERNETES_PKG_VERSION" \
    -require="github.com/fluxcd/pkg/ssa@$FLUXCD_SSA_VERSION" \
    -replace="github.com/fluxcd/pkg/ssa=../fluxcd-ssa" \
    -replace="github.com/atotto/clipboard=github.com/tgummerer/clipboard@v0.0.0-20241001131231-d02d263e614e"
  # The checksum database has no entry for this one module; its hash goes into the pins.
  GONOSUMDB=github.com/pulumi/pulumi-kubernetes go mod tidy
fi

gobuild -o "$root/pulumi-gen-kubernetes" ./cmd/pulumi-gen-kubernetes

# The generator merges the legacy specs in and downloads any it lacks (which fails offline):
# give it every one, from the k8s.io/kubernetes module zips the proxy serves.
specs="$root/swagger"; mkdir -p "$specs"
for v in $PULUMI_KUBERNETES_SWAGGER_VERSIONS; do
  cp "$(module_dir "k8s.io/kubernetes@$v")/api/openapi-spec/swagger.json" "$specs/swagger-$v.json"
done
echo '{"resource_schemas":{},"data_source_schemas":{}}' > cmd/pulumi-gen-kubernetes/terraform.json
mapping=cmd/pulumi-resource-kubernetes/terraform-mapping.json
cp "$mapping" "$root/terraform-mapping.json.kept"
newest="${PULUMI_KUBERNETES_SWAGGER_VERSIONS##* }"
"$root/pulumi-gen-kubernetes" -version "$version" schema "$specs/swagger-$newest.json" "$root"
cp "$root/terraform-mapping.json.kept" "$mapping"
(cd cmd/pulumi-resource-kubernetes && VERSION="$version" go run generate.go)

gobuild -ldflags "-X github.com/pulumi/pulumi-kubernetes/provider/v4/pkg/version.Version=$version" \
  -o "$BIN/$part" ./cmd/pulumi-resource-kubernetes
save_pins "$part"
mark_built "$part" "$pin"
mark_origin "$part" "built from $PULUMI_KUBERNETES_ARCHIVE (sha256 verified)"
log "$part $PULUMI_KUBERNETES_VERSION built in $(( $(date +%s) - start ))s"
