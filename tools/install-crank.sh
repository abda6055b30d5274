#!/usr/bin/env bash
# Install the Crossplane CLI (crank) pinned in tools/crank/go.mod into <repo>/.bin/crank.
# Skips when .bin/crank is already there; reuses a crank of the same pinned version already
# built into $(go env GOPATH)/bin (saves minutes of compiling on a machine that has one).
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bin="$repo/.bin"
target="$bin/crank"
export PATH="$PATH:/usr/local/go/bin"

if [[ -x "$target" ]]; then
  exit 0
fi
if ! command -v go >/dev/null 2>&1; then
  echo "install-crank: go is not on PATH (needed to build crank from tools/crank)" >&2
  exit 1
fi
mkdir -p "$bin"

pinned="$(awk '$1 == "require" && $2 == "github.com/crossplane/crossplane/v2" {print $3}' "$repo/tools/crank/go.mod")"
prebuilt="$(go env GOPATH)/bin/crank"
if [[ -x "$prebuilt" ]] && go version -m "$prebuilt" 2>/dev/null | grep -q "github.com/crossplane/crossplane/v2[[:space:]]*${pinned}"; then
  cp "$prebuilt" "$target"
  echo "install-crank: copied $prebuilt (${pinned})"
  exit 0
fi

echo "install-crank: building crank ${pinned} (a few minutes)..."
(cd "$repo/tools/crank" && GOBIN="$bin" go install github.com/crossplane/crossplane/v2/cmd/crank)
echo "install-crank: installed $target"
