#!/usr/bin/env bash
# Put the Crossplane CLI at <repo>/.bin/crossplane and the render engine (Crossplane core) at
# <repo>/.bin/crossplane-core: the two paths every tool and test uses.
#
# Since Crossplane v2.3 `crossplane composition render` runs a real Crossplane engine: the
# hidden `crossplane internal render` of a core binary (in Docker by default, or the binary given
# with --crossplane-binary, as here: no Docker). The CLI is released on its own since v2.4
# (github.com/crossplane/cli); the engine is core (github.com/crossplane/crossplane).
#
# The CLI, in order:
# 1. .bin/crossplane already a supported CLI: nothing to do.
# 2. A supported `crossplane` on PATH: link it (no build). Supported means the release the
#    goldens were rendered with (v2.5.x: output format, sorting and names are the CLI's) and a
#    `composition render` with the flags the tools pass (--crossplane-binary,
#    --required-resources, --function-annotations, --xrd, --observed-resources) and a
#    `resource validate`.
# 3. The pinned version (tools/cli/go.mod) already built at .bin/crossplane-cli-<version>: link.
# 4. Build the pinned version with go (about 5 minutes on 2 cores, once).
# The engine: core of the release pinned in tools/live/crossplane/go.mod, built by
# tools/live/build.sh (about 3 to 5 minutes on 2 cores, once; the live control plane runs the
# same binary), linked as .bin/crossplane-core.
#
# Usage: tools/install-cli.sh            prints what it chose
#        tools/install-cli.sh --check CLI  exit 0 and print the version when CLI is supported
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bin="$repo/.bin"
target="$bin/crossplane"
engine="$bin/crossplane-core"
# go: $GO, else the one on PATH, else the default install location of the go tarball.
go="${GO:-$(command -v go || true)}"
if [[ -z "$go" && -x /usr/local/go/bin/go ]]; then
  go=/usr/local/go/bin/go
fi
pinned="$(awk '$1 == "require" && $2 == "github.com/crossplane/cli/v2" {print $3}' "$repo/tools/cli/go.mod")"
# The CLI minor the goldens were rendered with: v2.5 for the pinned v2.5.0.
minor="${pinned%.*}"

# supported <cli>: exit 0 (printing its version) when <cli> is a Crossplane CLI these tools
# can drive.
supported() {
  local cli="$1" version help
  version="$("$cli" version --client 2>/dev/null | sed -n 's/^Client Version: *//p' | head -n1)"
  if [[ -z "$version" && -x "$go" ]]; then
    # built with `go install`: no version stamped in, but the module version is recorded
    version="$("$go" version -m "$cli" 2>/dev/null | awk '$1 == "mod" && $2 == "github.com/crossplane/cli/v2" {print $3}')"
  fi
  [[ "$version" == "$minor" || "$version" == "$minor".* ]] || return 1
  help="$("$cli" composition render --help 2>&1)" || return 1
  for flag in --crossplane-binary --required-resources --function-annotations --xrd --observed-resources; do
    grep -q -- "$flag" <<<"$help" || return 1
  done
  "$cli" resource validate --help >/dev/null 2>&1 || return 1
  echo "$version"
}

if [[ "${1:-}" == "--check" ]]; then
  supported "$2"
  exit $?
fi

mkdir -p "$bin"
cli_done=""
if [[ -L "$target" || -e "$target" ]]; then
  if version="$(supported "$target")"; then
    cli_done="yes"
  else
    echo "install-cli: $target is not a supported Crossplane CLI (need $minor.x); replacing it" >&2
    rm -f "$target"
  fi
fi

if [[ -z "$cli_done" ]] && found="$(command -v crossplane)"; then
  if version="$(supported "$found")"; then
    ln -s "$found" "$target"
    echo "install-cli: using $found ($version) as .bin/crossplane"
    cli_done="yes"
  else
    echo "install-cli: $found is not a supported Crossplane CLI (need $minor.x with composition render --crossplane-binary); skipping it" >&2
  fi
fi

if [[ -z "$cli_done" ]]; then
  built="$bin/crossplane-cli-$pinned"
  if [[ ! -x "$built" ]]; then
    if [[ ! -x "$go" ]]; then
      echo "install-cli: no supported crossplane CLI on PATH and no go to build one." >&2
      echo "install-cli: install the Crossplane CLI $minor (https://docs.crossplane.io/latest/cli/) or go." >&2
      exit 1
    fi
    echo "install-cli: building the Crossplane CLI $pinned (about 5 minutes, once)..."
    start=$SECONDS
    (cd "$repo/tools/cli" && CGO_ENABLED=0 GOFLAGS="${GOFLAGS:--buildvcs=false} -mod=readonly" "$go" build \
      -ldflags "-X github.com/crossplane/crossplane-runtime/v2/pkg/version.version=$pinned" \
      -o "$built.tmp.$$" github.com/crossplane/cli/v2/cmd/crossplane)
    mv "$built.tmp.$$" "$built"
    echo "install-cli: built $built in $((SECONDS - start)) s"
  fi
  ln -sfn "$(basename "$built")" "$target"
  echo "install-cli: .bin/crossplane -> $(basename "$built")"
fi

# The engine: built (or found cached) by tools/live/build.sh, linked under a stable name.
core="$("$repo/tools/live/build.sh" crossplane | awk '$1 == "crossplane" {print $2}')"
ln -sfn "$(basename "$core")" "$engine"
echo "install-cli: .bin/crossplane-core -> $(basename "$core")"
