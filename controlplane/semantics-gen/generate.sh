#!/usr/bin/env bash
# Regenerates the tables of controlplane/src/semantics/merge_keys.rs (the patch metadata and
# zero values of the built-in kinds) from the Kubernetes Go types of the pinned version and the
# OpenAPI v3 documents that version publishes (k8s.io/kubernetes api/openapi-spec/v3). Only the
# part between the "BEGIN GENERATED TABLES" and "END GENERATED TABLES" markers is rewritten.
# Uses the Go module proxy, or the module cache when it already holds the modules (then
# GOFLAGS=-mod=mod GOPROXY=off runs it offline).
# Usage: controlplane/semantics-gen/generate.sh
set -euo pipefail
SV="${KUBE_STAGING_VERSION:-v0.34.4}"
KV="${KUBE_VERSION:-v1.${SV#v0.}}"
HERE="$(cd "$(dirname "$0")" && pwd)"
OUT="$HERE/../src/semantics/merge_keys.rs"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT

cp "$HERE/merge-keys-gen.go" "$WORK/main.go"
cd "$WORK"
go mod init example.invalid/kruise-merge-keys-gen >/dev/null 2>&1
go mod edit -require="k8s.io/api@$SV" -require="k8s.io/apimachinery@$SV" \
  -require="k8s.io/apiextensions-apiserver@$SV" -require="k8s.io/kube-aggregator@$SV"
# -e: offline, test-only dependencies of the dependencies may be missing from the module cache.
go mod tidy -e >&2
# The OpenAPI documents: k8s.io/kubernetes is downloaded for its files only (it is not a
# dependency of the program).
KDIR="$(go mod download -json "k8s.io/kubernetes@$KV" | sed -n 's/^[[:space:]]*"Dir": "\(.*\)",$/\1/p')"
[ -d "$KDIR/api/openapi-spec/v3" ] || { echo "no OpenAPI documents in k8s.io/kubernetes@$KV" >&2; exit 1; }
go run . -openapi "$KDIR/api/openapi-spec/v3" -in "$OUT" > "$WORK/merge_keys.rs"
mv "$WORK/merge_keys.rs" "$OUT"
echo "wrote $OUT ($(wc -l < "$OUT") lines)" >&2
