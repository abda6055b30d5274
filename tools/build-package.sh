#!/usr/bin/env bash
# Build the Crossplane package: build/function-platform.xpkg (or --out FILE).
#
# The package holds the metadata (package/crossplane.yaml), the Input CRD (package/input) and
# the examples (examples/). With a working container engine (docker) it also embeds the
# runtime image built from the Dockerfile, so the package can run the function; without one,
# or with --metadata-only, it holds the metadata alone. It always says which it built.
# `make release` (tools/release.py) builds the package with its runtime image on a machine
# without Docker (docs/release.md).
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo"
out="build/function-platform.xpkg"
image="${IMAGE:-function-platform:dev}"
metadata_only=false
while [[ $# -gt 0 ]]; do
  case "$1" in
    --metadata-only) metadata_only=true ;;
    --out) out="$2"; shift ;;
    *) echo "build-package: unknown argument $1 (use --metadata-only, --out FILE)" >&2; exit 2 ;;
  esac
  shift
done
mkdir -p "$(dirname "$out")"
build=(.bin/crossplane xpkg build --package-root=package --examples-root=examples --package-file="$out")

if [[ "$metadata_only" == false ]] && command -v docker >/dev/null 2>&1 && docker info >/dev/null 2>&1; then
  docker build --tag "$image" .
  "${build[@]}" --embed-runtime-image="$image"
  echo "build-package: $out: package metadata, Input CRD, examples and the runtime image $image"
else
  "${build[@]}"
  reason="--metadata-only"
  [[ "$metadata_only" == true ]] || reason="no working container engine (docker info failed); make release builds one without Docker"
  echo "build-package: $out: package metadata, Input CRD and examples only, no runtime image ($reason)"
fi
