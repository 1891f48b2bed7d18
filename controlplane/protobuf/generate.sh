#!/usr/bin/env bash
# Regenerates controlplane/src/apiserver/protobuf/schema.json, the wire schema of the built-in
# kinds the embedded API server's protobuf codec uses, from the Kubernetes Go types of the
# pinned version (the Go module proxy, or the module cache when it already holds them).
# Usage: controlplane/protobuf/generate.sh
set -euo pipefail
SV="${KUBE_STAGING_VERSION:-v0.34.4}"
HERE="$(cd "$(dirname "$0")" && pwd)"
OUT="$HERE/../src/apiserver/protobuf/schema.json"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
cp "$HERE/schema-gen.go" "$WORK/main.go"
cd "$WORK"
go mod init example.invalid/kruise-schema-gen >/dev/null 2>&1
go mod edit -require="k8s.io/api@$SV" -require="k8s.io/apimachinery@$SV" \
  -require="k8s.io/client-go@$SV" -require="k8s.io/apiextensions-apiserver@$SV"
go mod tidy >&2
go run . > "$OUT.tmp"
mv "$OUT.tmp" "$OUT"
echo "wrote $OUT ($(wc -c < "$OUT") bytes)" >&2
