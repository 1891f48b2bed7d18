#!/usr/bin/env bash
# Regenerates the golden fixtures in crds/src/gojson/fixtures/ from upstream OpenKruise's own Go
# code (fixtures-gen.go, next to this file): for each manifest in manifests/, what kruise's
# mutating webhook stores, the object its controller reads, and the ControllerRevision (name and
# exact data bytes) the controller computes; plus Go's resource.Quantity canonical forms and
# Go's typed PodTemplateSpec JSON. The Rust tests read only the fixtures.
#
# Builds against the Go module proxy (or the module cache): github.com/openkruise/kruise at the
# pinned version, with kruise's own replace directives (k8s.io/* v0.32.10, k8s.io/kubernetes
# v1.32.10), so the Go types and defaulting are exactly those of the upstream manager.
# Needs go and jq. Usage: crds/gojson/generate.sh
set -euo pipefail
KRUISE_VERSION="${KRUISE_VERSION:-v1.9.0}"
HERE="$(cd "$(dirname "$0")" && pwd)"
OUT="$HERE/../src/gojson/fixtures"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
export GOFLAGS="${GOFLAGS:--buildvcs=false} -mod=mod"

cp "$HERE/fixtures-gen.go" "$WORK/main.go"
cd "$WORK"
go mod init example.invalid/kruise-gojson-fixtures >/dev/null 2>&1
go mod edit -go=1.23.0 -require="github.com/openkruise/kruise@$KRUISE_VERSION"
# kruise's replace directives (a dependency's replaces do not apply to the main module).
KRUISE_DIR="$(go mod download -json "github.com/openkruise/kruise@$KRUISE_VERSION" | jq -r .Dir)"
while read -r path version; do
  go mod edit -replace="$path=$path@$version"
done < <(cd "$KRUISE_DIR" && go mod edit -json | jq -r '.Replace[] | "\(.Old.Path) \(.New.Version)"')
go mod tidy >&2
mkdir -p "$OUT"
rm -f "$OUT"/*.json
go run . -manifests "$HERE/manifests" -out "$OUT"
echo "fixtures in $OUT: $(ls "$OUT" | wc -l) files" >&2
