#!/usr/bin/env bash
# Build the binaries of the live control plane (make test-live) into .bin/<name>-<version>.
#
# Each binary has its own Go module under tools/live/<name>/ (go.mod + go.sum pin the release;
# tools.go imports its main package): one module per binary because their dependency graphs
# disagree (kube-apiserver needs the k8s.io staging modules at v0.34.4, Crossplane and
# provider-kubernetes newer ones), and Go's minimal version selection would otherwise move them.
#
# Cached: a binary already at .bin/<name>-<version> is not rebuilt; the Go build cache
# (GOCACHE, default $(go env GOCACHE)) and module cache are left where go keeps them, so CI
# caching .bin/ and those two directories rebuilds nothing. First build on 2 cores: ~10 minutes.
#
# Usage: tools/live/build.sh [name...]   (default: every binary; prints "<name> <path>" lines)
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
live="$repo/tools/live"
bin="$repo/.bin"
go="${GO:-$(command -v go || echo /usr/local/go/bin/go)}"
export GOFLAGS="${GOFLAGS:--buildvcs=false} -mod=readonly"
# No cgo: static binaries, no C toolchain needed.
export CGO_ENABLED=0

# name -> "module path|package to build"
declare -A pkg=(
  [etcd]="go.etcd.io/etcd/server/v3|go.etcd.io/etcd/server/v3"
  [kube-apiserver]="k8s.io/kubernetes|k8s.io/kubernetes/cmd/kube-apiserver"
  [crossplane]="github.com/crossplane/crossplane/v2|github.com/crossplane/crossplane/v2/cmd/crossplane"
  [provider-kubernetes]="github.com/crossplane-contrib/provider-kubernetes|github.com/crossplane-contrib/provider-kubernetes/cmd/provider"
  [registry]="github.com/google/go-containerregistry|github.com/google/go-containerregistry/cmd/registry"
)
order=(etcd kube-apiserver crossplane provider-kubernetes registry)

# version <name>: the pinned release of <name>'s module, read from its go.mod
version() {
  local mod="${pkg[$1]%%|*}"
  awk -v m="$mod" '($1 == "require" && $2 == m) || ($1 == m && $2 ~ /^v/) {print ($1 == "require" ? $3 : $2); exit}' \
    "$live/$1/go.mod"
}

names=("$@")
[[ ${#names[@]} -gt 0 ]] || names=("${order[@]}")
mkdir -p "$bin"
for name in "${names[@]}"; do
  [[ -n "${pkg[$name]:-}" ]] || { echo "build.sh: unknown binary $name (one of: ${order[*]})" >&2; exit 2; }
  v="$(version "$name")"
  [[ -n "$v" ]] || { echo "build.sh: no version of ${pkg[$name]%%|*} in tools/live/$name/go.mod" >&2; exit 1; }
  out="$bin/$name-$v"
  if [[ ! -x "$out" ]]; then
    echo "build.sh: building $name $v (cached afterwards at $out)" >&2
    start=$SECONDS
    # build to a temporary name: an interrupted build never leaves a binary that looks cached
    (cd "$live/$name" && "$go" build -o "$out.tmp.$$" "${pkg[$name]#*|}")
    mv "$out.tmp.$$" "$out"
    echo "build.sh: built $name $v in $((SECONDS - start)) s" >&2
  fi
  echo "$name $out"
done
