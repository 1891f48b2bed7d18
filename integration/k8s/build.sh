#!/usr/bin/env bash
# Builds the real Kubernetes control-plane binaries (kube-apiserver, kube-controller-manager,
# kube-scheduler, kubelet, kubectl) and etcd from the Go module proxy into a cache directory
# outside the clone. Nothing built here is ever committed.
#
# Usage: integration/k8s/build.sh [CACHE_DIR]     (default: ~/.cache/kruise-it)
# Prints the directory holding the binaries on its last line.
# A second run is a no-op when the cached binaries carry the pinned versions.
set -euo pipefail

KUBE_VERSION="${KUBE_VERSION:-1.34.4}"
ETCD_VERSION="${ETCD_VERSION:-v3.6.14}"
CACHE="${1:-${KRUISE_IT_CACHE:-$HOME/.cache/kruise-it}}"
BIN="$CACHE/bin-k8s${KUBE_VERSION}-etcd${ETCD_VERSION}"
STAMP="$BIN/.complete"

if [[ -f "$STAMP" ]]; then
  echo "real control plane: cached binaries in $BIN (kubernetes v$KUBE_VERSION, etcd $ETCD_VERSION)" >&2
  echo "$BIN"
  exit 0
fi

command -v go >/dev/null || { echo "go is required to build the real control plane" >&2; exit 2; }
command -v jq >/dev/null || { echo "jq is required (apt-get install -y jq)" >&2; exit 2; }

export GOFLAGS="${GOFLAGS:--buildvcs=false}"
export CGO_ENABLED=0
mkdir -p "$BIN" "$CACHE/work"
start=$(date +%s)

# --- Kubernetes: k8s.io/kubernetes requires its staging modules at v0.0.0 and maps them with
# local replace directives; a consumer module must replace each with the published v0.X.Y tag.
KW="$CACHE/work/k8s-$KUBE_VERSION"
SV="v0.${KUBE_VERSION#1.}"
rm -rf "$KW"; mkdir -p "$KW"; cd "$KW"
go mod init example.invalid/kruise-it-k8s >/dev/null 2>&1
GOMOD=$(go list -m -json "k8s.io/kubernetes@v$KUBE_VERSION" | jq -r .GoMod)
for m in $(sed -n 's/^[[:space:]]*\(k8s\.io\/[a-z0-9-]*\) v0\.0\.0$/\1/p' "$GOMOD"); do
  go mod edit -replace="$m=$m@$SV"
done
go mod edit -require="k8s.io/kubernetes@v$KUBE_VERSION"
go mod edit -godebug=default=go1.24
CMDS=(kube-apiserver kube-controller-manager kube-scheduler kubelet kubectl)
TOOLS=()
for c in "${CMDS[@]}"; do TOOLS+=("k8s.io/kubernetes/cmd/$c@v$KUBE_VERSION"); done
echo "real control plane: resolving modules for kubernetes v$KUBE_VERSION" >&2
go get -tool "${TOOLS[@]}" >&2
MINOR=$(echo "$KUBE_VERSION" | cut -d. -f2)
LDF="-s -w -X k8s.io/component-base/version.gitVersion=v$KUBE_VERSION -X k8s.io/client-go/pkg/version.gitVersion=v$KUBE_VERSION"
LDF="$LDF -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=$MINOR"
LDF="$LDF -X k8s.io/client-go/pkg/version.gitMajor=1 -X k8s.io/client-go/pkg/version.gitMinor=$MINOR"
PKGS=()
for c in "${CMDS[@]}"; do PKGS+=("k8s.io/kubernetes/cmd/$c"); done
echo "real control plane: building ${CMDS[*]}" >&2
go build -trimpath -ldflags "$LDF" -o "$BIN/" "${PKGS[@]}" >&2

# --- etcd: the server module root is the main package; its go.mod has replace directives, so
# it is built from a wrapper module too.
EW="$CACHE/work/etcd-$ETCD_VERSION"
rm -rf "$EW"; mkdir -p "$EW"; cd "$EW"
go mod init example.invalid/kruise-it-etcd >/dev/null 2>&1
echo "real control plane: building etcd $ETCD_VERSION" >&2
go get -tool "go.etcd.io/etcd/server/v3@$ETCD_VERSION" >&2
go build -trimpath -ldflags "-s -w" -o "$BIN/etcd" go.etcd.io/etcd/server/v3 >&2

end=$(date +%s)
echo "kubernetes=v$KUBE_VERSION etcd=$ETCD_VERSION built_seconds=$((end-start))" > "$STAMP"
echo "real control plane: built in $((end-start))s into $BIN" >&2
echo "$BIN"
