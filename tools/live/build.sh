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
# Crossplane's cluster/ folder and provider-kubernetes' package/crds of the same release are
# copied beside the binary (.bin/crossplane-<v>.cluster/, .bin/provider-kubernetes-<v>.package/).
#
# Patches: tools/live/<name>/*.patch (unified diffs against the release's module, -p1) are
# applied to a copy of its source before building, and the binary's name says so:
# .bin/<name>-<version>-patched-<digest of the patches>. provider-kubernetes carries one, the
# client cache of v1.4 (client-cache.patch; docs/live.md says why).
#
# Usage: tools/live/build.sh [--prepare-only] [name...]
#   default: every binary; prints "<name> <path>" lines.
#   --prepare-only: everything but compiling: download each module, copy and patch its source,
#   copy the release's files; prints "<name>-source <dir>" for a patched module (left in place
#   for inspection). What a cold module cache exercises, in seconds: tests/test_live_build.py
#   runs it with an empty GOMODCACHE and LIVE_BIN (the output folder, default .bin/).
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
live="$repo/tools/live"
bin="${LIVE_BIN:-$repo/.bin}"
prepare_only=false
if [[ "${1:-}" == "--prepare-only" ]]; then
  prepare_only=true
  shift
fi
if [[ "${1:-}" == "-h" || "${1:-}" == "--help" ]]; then
  sed -n '2,/^set -euo/p' "${BASH_SOURCE[0]}" | sed '$d; s/^# \{0,1\}//'
  exit 0
fi
go="${GO:-$(command -v go || echo /usr/local/go/bin/go)}"
export GOFLAGS="${GOFLAGS:--buildvcs=false} -mod=readonly"
# No cgo: static binaries, no C toolchain needed.
export CGO_ENABLED=0

# name -> "module path|package to build"
declare -A pkg=(
  [etcd]="go.etcd.io/etcd/server/v3|go.etcd.io/etcd/server/v3"
  [kube-apiserver]="k8s.io/kubernetes|k8s.io/kubernetes/cmd/kube-apiserver"
  [kube-controller-manager]="k8s.io/kubernetes|k8s.io/kubernetes/cmd/kube-controller-manager"
  [kubectl]="k8s.io/kubernetes|k8s.io/kubernetes/cmd/kubectl"
  [crossplane]="github.com/crossplane/crossplane/v2|github.com/crossplane/crossplane/v2/cmd/crossplane"
  [provider-kubernetes]="github.com/crossplane-contrib/provider-kubernetes|github.com/crossplane-contrib/provider-kubernetes/cmd/provider"
  [registry]="github.com/google/go-containerregistry|github.com/google/go-containerregistry/cmd/registry"
)

order=(etcd kube-apiserver kube-controller-manager kubectl crossplane provider-kubernetes registry)

# version <name>: the pinned release of <name>'s module, read from its go.mod
version() {
  local mod="${pkg[$1]%%|*}"
  awk -v m="$mod" '($1 == "require" && $2 == m) || ($1 == m && $2 ~ /^v/) {print ($1 == "require" ? $3 : $2); exit}' \
    "$live/$1/go.mod"
}

# ldflags <name> <version>: stamp the release, as the projects' own builds do (Crossplane
# refuses packages whose spec.crossplane.version it cannot compare with an empty version).
ldflags() {
  case "$1" in
    # v2.3+ reads crossplane-runtime's pkg/version (nix/build.nix); up to v2.2 its own
    # internal/version. The linker ignores -X of a symbol a release does not have.
    crossplane) echo "-X github.com/crossplane/crossplane-runtime/v2/pkg/version.version=$2 -X github.com/crossplane/crossplane/v2/internal/version.version=$2" ;;
    kube-apiserver | kube-controller-manager | kubectl)
      local minor="${2#v1.}"; minor="${minor%%.*}"
      echo "-X k8s.io/component-base/version.gitVersion=$2 -X k8s.io/component-base/version.gitMajor=1 -X k8s.io/component-base/version.gitMinor=$minor -X k8s.io/component-base/version.gitTreeState=clean" ;;
    *) echo "" ;;
  esac
}

# module_dir <name> <module path>: the module's source in the module cache, downloaded first.
# `go list -m -f '{{.Dir}}'` prints nothing for a module not yet in the cache (a cold machine),
# so download it explicitly (the version and hash come from tools/live/<name>/go.sum).
module_dir() {
  local dir
  dir="$(cd "$live/$1" && "$go" mod download "$2" && "$go" list -m -f '{{.Dir}}' "$2")"
  [[ -n "$dir" && -d "$dir" ]] || { echo "build.sh: no source of $2 for $1 (go mod download failed?)" >&2; return 1; }
  echo "$dir"
}

names=("$@")
[[ ${#names[@]} -gt 0 ]] || names=("${order[@]}")
mkdir -p "$bin"
for name in "${names[@]}"; do
  [[ -n "${pkg[$name]:-}" ]] || { echo "build.sh: unknown binary $name (one of: ${order[*]})" >&2; exit 2; }
  v="$(version "$name")"
  [[ -n "$v" ]] || { echo "build.sh: no version of ${pkg[$name]%%|*} in tools/live/$name/go.mod" >&2; exit 1; }
  patches=()
  for p in "$live/$name"/*.patch; do [[ -e "$p" ]] && patches+=("$p"); done
  out="$bin/$name-$v"
  release_out="$out"  # the release's own files (cluster/, package/) are the same when patched
  if [[ ${#patches[@]} -gt 0 ]]; then
    out="$out-patched-$(cat "${patches[@]}" | sha256sum | cut -c1-12)"
  fi
  if [[ ! -x "$out" || "$prepare_only" == true ]]; then
    [[ "$prepare_only" == true ]] \
      || echo "build.sh: building $name $v${patches:+ with ${#patches[@]} patch(es)} (cached afterwards at $out)" >&2
    start=$SECONDS
    modflags=()
    if [[ ${#patches[@]} -gt 0 ]]; then
      # the release's source, patched, in place of the module: a temporary go.mod replaces it
      work="$(mktemp -d)"
      [[ "$prepare_only" == true ]] || trap 'rm -rf "$work"' EXIT
      mod="${pkg[$name]%%|*}"
      src="$(module_dir "$name" "$mod")"
      cp -r "$src" "$work/src"
      chmod -R u+w "$work/src"
      for p in "${patches[@]}"; do (cd "$work/src" && git apply -p1 "$p"); done
      cp "$live/$name/go.mod" "$live/$name/go.sum" "$work/"
      (cd "$live/$name" && "$go" mod edit -modfile "$work/go.mod" -replace "$mod=$work/src")
      modflags=(-modfile "$work/go.mod")
      [[ "$prepare_only" == false ]] || echo "$name-source $work/src"
    fi
    if [[ "$prepare_only" == true ]]; then
      echo "build.sh: prepared $name $v (not compiled: --prepare-only)" >&2
      out=""
    else
      # build to a temporary name: an interrupted build never leaves a binary that looks cached
      (cd "$live/$name" && "$go" build "${modflags[@]}" -ldflags "$(ldflags "$name" "$v")" -o "$out.tmp.$$" "${pkg[$name]#*|}")
      mv "$out.tmp.$$" "$out"
      echo "build.sh: built $name $v in $((SECONDS - start)) s" >&2
    fi
  fi
  [[ -z "$out" ]] || echo "$name $out"
  # Files of the same release beside the binary: Crossplane's cluster/ folder (core CRDs and
  # webhook configurations, which `crossplane core init` reads: the image has them at /crds and
  # /webhookconfigurations), provider-kubernetes' package/crds (what its package installs).
  case "$name" in
    crossplane) extra="cluster"; files=(crds webhookconfigurations) ;;
    provider-kubernetes) extra="package"; files=(crds) ;;
    *) extra="" ;;
  esac
  out="$release_out"
  if [[ -n "$extra" ]]; then
    if [[ ! -d "$out.$extra" ]]; then
      src="$(module_dir "$name" "${pkg[$name]%%|*}")/$extra"
      mkdir -p "$out.$extra.tmp.$$"
      for f in "${files[@]}"; do cp -r "$src/$f" "$out.$extra.tmp.$$/"; done
      chmod -R u+w "$out.$extra.tmp.$$"
      mv "$out.$extra.tmp.$$" "$out.$extra"
    fi
    echo "$name-$extra $out.$extra"
  fi
done
