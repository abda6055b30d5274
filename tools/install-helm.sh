#!/usr/bin/env bash
# Build the pinned Helm CLI into .bin/helm-<version> and print its path (cached: a binary
# already there is not rebuilt; HELM_REBUILD=1 rebuilds it). Used by the tests that render the
# asya-crossplane chart (tests/test_helm_chart.py, tests/live/test_live_helm.py); a fresh clone
# builds it here. `make helm` runs it.
#
# `go install <module>@<version>` outside any module: go builds helm.sh/helm/v3 at exactly that
# release with the module's own go.sum (the dependency versions Helm's release binaries use).
# The link flags are Helm's Makefile's: the version, and the Kubernetes version `helm template`
# assumes (client-go v0.X.Y -> 1.X), so a chart's kubeVersion is checked against the same
# version as with a released helm. HELM_VERSION overrides the pin. First build on 2 cores: a
# few minutes (longer on a loaded machine).
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
version="${HELM_VERSION:-v3.22.0}"
target="$repo/.bin/helm-$version"
go="${GO:-$(command -v go || echo /usr/local/go/bin/go)}"

if [[ ! -x "$target" || -n "${HELM_REBUILD:-}" ]]; then
  mkdir -p "$repo/.bin"
  tmp="$(mktemp -d)"
  trap 'rm -rf "$tmp"' EXIT
  # from a directory outside this repository: no go.mod around
  cd "$tmp"
  gomod="$("$go" mod download -json "helm.sh/helm/v3@$version" | sed -n 's/^[[:space:]]*"GoMod": "\(.*\)",\{0,1\}$/\1/p')"
  client_go="$(awk '$1 == "k8s.io/client-go" {print $2; exit}' "$gomod")"   # v0.37.0
  minor="$(echo "$client_go" | cut -d. -f2)"
  flags="-X helm.sh/helm/v3/internal/version.version=$version"
  for pkg in pkg/lint/rules pkg/chartutil; do
    flags+=" -X helm.sh/helm/v3/$pkg.k8sVersionMajor=1 -X helm.sh/helm/v3/$pkg.k8sVersionMinor=$minor"
  done
  CGO_ENABLED=0 GOFLAGS=-buildvcs=false GOBIN="$tmp/bin" \
    "$go" install -ldflags "$flags" "helm.sh/helm/v3/cmd/helm@$version" >&2
  mv -f "$tmp/bin/helm" "$target"   # atomic on one filesystem: a running test keeps its copy
fi
echo "$target"
