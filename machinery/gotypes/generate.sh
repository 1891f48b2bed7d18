#!/usr/bin/env bash
# Regenerates machinery/src/gotypes/schema.json, the Go-types schema of the built-in kinds (what the
# embedded API server's protobuf codec and kruise_machinery::gojson read), from the Kubernetes Go
# types of the pinned version, with the fields the base version lacks marked (the base is the
# k8s.io/api upstream OpenKruise v1.9.0 builds with). Uses the Go module proxy, or the module
# cache when it already holds the modules.
# Usage: machinery/gotypes/generate.sh
set -euo pipefail
SV="${KUBE_STAGING_VERSION:-v0.34.4}"
BASE="${KUBE_BASE_VERSION:-v0.32.10}"
HERE="$(cd "$(dirname "$0")" && pwd)"
OUT="$HERE/../src/gotypes/schema.json"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT

# module DIR VERSION: a module holding schema-gen built against that k8s.io version.
module() {
  mkdir -p "$1"
  cp "$HERE/schema-gen.go" "$1/main.go"
  (
    cd "$1"
    go mod init example.invalid/kruise-schema-gen >/dev/null 2>&1
    go mod edit -require="k8s.io/api@$2" -require="k8s.io/apimachinery@$2" \
      -require="k8s.io/client-go@$2" -require="k8s.io/apiextensions-apiserver@$2"
    go mod tidy >&2
  )
}

module "$WORK/base" "$BASE"
(cd "$WORK/base" && go run . -version "$BASE" > "$WORK/base.json")
module "$WORK/current" "$SV"
(cd "$WORK/current" && go run . -version "$SV" -base "$WORK/base.json" -base-version "$BASE" > "$OUT.tmp")
mv "$OUT.tmp" "$OUT"
echo "wrote $OUT ($(wc -c < "$OUT") bytes)" >&2
