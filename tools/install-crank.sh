#!/usr/bin/env bash
# Put a Crossplane CLI at <repo>/.bin/crank, the one path every tool and test uses.
#
# In order:
# 1. .bin/crank already there: nothing to do.
# 2. A supported `crossplane` (or `crank`) on PATH: link it (no build). Supported means
#    v2.0.x to v2.2.x and its `render` has the flags the tools pass (--required-resources,
#    --function-annotations, --xrd). From v2.3 `render` runs a separate Crossplane engine
#    (crossplane/crossplane#7339), which these tools do not drive.
# 3. A crank of the pinned version (tools/crank/go.mod) already built in $(go env GOPATH)/bin: copy.
# 4. Build the pinned version with go (a few minutes).
# The golden renders in tests/golden were made with the pinned version (v2.2.1).
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bin="$repo/.bin"
target="$bin/crank"
# go: $GO, else the one on PATH, else the default install location of the go tarball.
go="${GO:-$(command -v go || true)}"
if [[ -z "$go" && -x /usr/local/go/bin/go ]]; then
  go=/usr/local/go/bin/go
fi

if [[ -x "$target" ]]; then
  exit 0
fi

# supported <cli>: exit 0 when <cli> is a Crossplane CLI these tools can drive.
supported() {
  local cli="$1" version
  version="$("$cli" version --client 2>/dev/null | sed -n 's/^Client Version: *//p' | head -n1)"
  if [[ -z "$version" && -x "$go" ]]; then
    # built with `go install`: no version stamped in, but the module version is recorded
    version="$("$go" version -m "$cli" 2>/dev/null | awk '$1 == "mod" && $2 == "github.com/crossplane/crossplane/v2" {print $3}')"
  fi
  [[ "$version" =~ ^v2\.[0-2]\.[0-9]+ ]] || return 1
  local help
  help="$("$cli" render --help 2>&1)" || return 1
  for flag in --required-resources --function-annotations --xrd --observed-resources; do
    grep -q -- "$flag" <<<"$help" || return 1
  done
  echo "$version"
}

for name in crossplane crank; do
  if found="$(command -v "$name")" && version="$(supported "$found")"; then
    mkdir -p "$bin"
    ln -s "$found" "$target"
    echo "install-crank: using $found ($version) as .bin/crank"
    exit 0
  elif [[ -n "${found:-}" ]]; then
    echo "install-crank: $found is not a supported Crossplane CLI (need v2.0 to v2.2); skipping it" >&2
  fi
  found=""
done

if [[ ! -x "$go" ]]; then
  echo "install-crank: no supported crossplane CLI on PATH and no go to build one." >&2
  echo "install-crank: install crossplane v2.2 (https://docs.crossplane.io/latest/cli/) or go." >&2
  exit 1
fi
mkdir -p "$bin"

pinned="$(awk '$1 == "require" && $2 == "github.com/crossplane/crossplane/v2" {print $3}' "$repo/tools/crank/go.mod")"
prebuilt="$("$go" env GOPATH)/bin/crank"
if [[ -x "$prebuilt" ]] && "$go" version -m "$prebuilt" 2>/dev/null | grep -q "github.com/crossplane/crossplane/v2[[:space:]]*${pinned}"; then
  cp "$prebuilt" "$target"
  echo "install-crank: copied $prebuilt (${pinned})"
  exit 0
fi

echo "install-crank: building crank ${pinned} (a few minutes)..."
(cd "$repo/tools/crank" && GOBIN="$bin" "$go" install github.com/crossplane/crossplane/v2/cmd/crank)
echo "install-crank: installed $target"
