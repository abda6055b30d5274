#!/usr/bin/env bash
# Build the function's runtime image without a Docker daemon or a registry: a docker-archive
# tarball, as `docker save` writes one, that `crossplane xpkg build --embed-runtime-image-tarball`
# embeds (tools/release.py calls this; docs/release.md says how it matches the Dockerfile).
#
#   tools/build-image.sh --tag localhost:5000/platform/function-platform:v0.1.0 --out image.tar
#
# 1. The base root file system: Debian bookworm `debootstrap --variant=minbase` with python3
#    (bookworm's 3.11), python3-venv and ca-certificates, then bookworm-updates and
#    bookworm-security applied. Cached under .bin/debian-base-<suite>-<key>/ (key: the suite,
#    the package list and this recipe's revision), built once per machine: DEBIAN_BASE_REBUILD=1
#    rebuilds it (to take newer security updates), DEBIAN_MIRROR names another mirror.
# 2. The function, as the Dockerfile's build stage installs it: a venv /venv with the locked
#    runtime dependencies (requirements.lock, pip --require-hashes) and this repository's wheel
#    (--no-deps), then `pip check`; the user 65532 (`function`) as in the Dockerfile's runtime
#    stage.
# 3. The image, with buildah (Debian's package): `buildah from scratch`, the root file system
#    copied in, `buildah config` (user 65532:65532, ENTRYPOINT function-platform, CMD
#    --address=0.0.0.0:9443, EXPOSE 9443, the Dockerfile's ENV), `buildah commit` straight to a
#    docker-archive file. buildah's storage is a private vfs store under the work directory,
#    removed afterwards: no image or container is left in /var/lib/containers.
#
# From the same cached base, commit and requirements.lock the tarball is the same byte for byte:
# file times and the image's creation time are the last commit's (--timestamp), pip's byte code
# is checked by hash (SOURCE_DATE_EPOCH), and the OCI config format records no container id.
#
# Needs root (debootstrap, chroot, buildah) and Debian's packages; the tools are installed with
# apt-get when missing. The image's architecture is this machine's.
set -euo pipefail

repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$repo"

tag=""
out=""
python="$repo/.venv/bin/python"   # builds the wheel with the locked hatchling (make setup)
usage="usage: tools/build-image.sh --tag <registry>/function-platform:v<version> --out FILE.tar [--python PYTHON]"
while [[ $# -gt 0 ]]; do
  case "$1" in
    --tag) tag="${2:?--tag needs a value}"; shift ;;
    --out) out="${2:?--out needs a value}"; shift ;;
    --python) python="${2:?--python needs a value}"; shift ;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) echo "build-image: unknown argument $1 ($usage)" >&2; exit 2 ;;
  esac
  shift
done
[[ -n "$tag" && -n "$out" ]] || { echo "build-image: $usage" >&2; exit 2; }
[[ "$(id -u)" == 0 ]] || { echo "build-image: needs root (debootstrap, chroot, buildah)" >&2; exit 1; }

suite="bookworm"
packages="python3,python3-venv,ca-certificates"
mirror="${DEBIAN_MIRROR:-http://deb.debian.org/debian}"
security_mirror="${DEBIAN_SECURITY_MIRROR:-http://deb.debian.org/debian-security}"
# Bump when the base recipe below changes: a new key, a new cached base.
recipe=1
key="$(printf '%s %s %s' "$suite" "$packages" "$recipe" | sha256sum | cut -c1-12)"
base="$repo/.bin/debian-base-$suite-$key"

log() { echo "build-image: $*" >&2; }

# The tools, from Debian's packages (the project's machines are Debian bookworm).
missing=()
command -v debootstrap >/dev/null || missing+=(debootstrap)
command -v buildah >/dev/null || missing+=(buildah)
if [[ ${#missing[@]} -gt 0 ]]; then
  log "installing ${missing[*]} (apt-get)"
  apt-get update -q >&2
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}" >&2
fi

work="$(mktemp -d "${TMPDIR:-/tmp}/build-image.XXXXXX")"
mounted=()
cleanup() {
  for point in "${mounted[@]}"; do umount -l "$point" 2>/dev/null || true; done
  if [[ -n "${container:-}" ]]; then
    buildah --root "$work/storage" --runroot "$work/run" --storage-driver vfs rm "$container" \
      >/dev/null 2>&1 || true
  fi
  rm -rf "$work"
}
trap cleanup EXIT

# Run a command in a root file system with /proc mounted (apt's maintainer scripts read it).
in_root() {
  local root="$1"; shift
  mount -t proc proc "$root/proc"
  mounted+=("$root/proc")
  local status=0
  chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8 HOME=/root \
    DEBIAN_FRONTEND=noninteractive "$@" >&2 || status=$?
  umount "$root/proc"
  unset 'mounted[${#mounted[@]}-1]'
  return "$status"
}

# 1. The base root file system (cached).
if [[ ! -d "$base/rootfs" || -n "${DEBIAN_BASE_REBUILD:-}" ]]; then
  log "debootstrap $suite ($packages) into $base (once per machine; a few minutes)"
  fresh="$work/base"
  debootstrap --variant=minbase --include="$packages" "$suite" "$fresh" "$mirror" >&2
  cat > "$fresh/etc/apt/sources.list" <<EOF
deb $mirror $suite main
deb $mirror $suite-updates main
deb $security_mirror $suite-security main
EOF
  in_root "$fresh" sh -c 'apt-get update -q && apt-get -y -q upgrade && apt-get clean'
  # what debootstrap and apt leave that belongs to no image: package lists, caches, logs
  rm -rf "$fresh"/var/lib/apt/lists/* "$fresh"/var/cache/apt/* "$fresh"/var/log/* \
    "$fresh"/var/cache/debconf/*-old "$fresh"/var/lib/dpkg/*-old "$fresh"/debootstrap
  mkdir -p "$repo/.bin"
  staged="$(mktemp -d "$repo/.bin/.debian-base-$suite-$key.XXXXXX")"
  chmod 755 "$staged"
  mv "$fresh" "$staged/rootfs"
  rm -rf "$base"
  mv -T "$staged" "$base" 2>/dev/null || rm -rf "$staged"  # another build won the race: keep its
  log "base cached in $base"
else
  log "base root file system from $base (cached; DEBIAN_BASE_REBUILD=1 rebuilds it)"
fi

# 2. The function: the wheel of this checkout, then the Dockerfile's venv.
rootfs="$work/rootfs"
cp -a "$base/rootfs" "$rootfs"
epoch="$(git -C "$repo" log -1 --format=%ct 2>/dev/null || echo 0)"
SOURCE_DATE_EPOCH="$epoch" "$python" -c \
  "import sys; from hatchling.build import build_wheel; build_wheel(sys.argv[1])" "$work/dist" >&2
mkdir -p "$rootfs/tmp/build"
cp requirements.lock "$work"/dist/*.whl "$rootfs/tmp/build/"
# pip in the root reaches PyPI as this machine does: its DNS and its certificate store (as the
# Makefile's uv does), for the build only
cp /etc/ssl/certs/ca-certificates.crt "$rootfs/tmp/build/ca.crt"
cp -L /etc/resolv.conf "$rootfs/etc/resolv.conf"
log "installing requirements.lock (--require-hashes) and $(basename "$work"/dist/*.whl) into /venv"
# SOURCE_DATE_EPOCH: the byte code pip compiles is checked by hash, not stamped with the time
in_root "$rootfs" env SOURCE_DATE_EPOCH="$epoch" sh -ec '
  export PIP_CERT=/tmp/build/ca.crt PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_CACHE_DIR=1
  python3 -m venv /venv
  /venv/bin/pip install --quiet --require-hashes -r /tmp/build/requirements.lock
  /venv/bin/pip install --quiet --no-deps /tmp/build/*.whl
  /venv/bin/pip check
  useradd -K UID_MAX=65532 --uid 65532 --no-create-home --shell /usr/sbin/nologin function
'
# left to the container runtime: DNS, devices, temporary files
rm -rf "$rootfs/tmp/build" "$rootfs"/dev/* "$rootfs"/var/log/*
: > "$rootfs/etc/resolv.conf"
: > "$rootfs/etc/hostname"   # debootstrap copied this machine's name

# 3. The image.
buildah=(buildah --root "$work/storage" --runroot "$work/run" --storage-driver vfs)
container="$("${buildah[@]}" from --quiet scratch)"
mountpoint="$("${buildah[@]}" mount "$container")"
cp -a "$rootfs/." "$mountpoint/"
"${buildah[@]}" umount "$container" >/dev/null
version="${tag##*:v}"
"${buildah[@]}" config \
  --user 65532:65532 \
  --port 9443/tcp \
  --entrypoint '["function-platform"]' \
  --cmd '["--address=0.0.0.0:9443"]' \
  --env PATH=/venv/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
  --env PYTHONDONTWRITEBYTECODE=1 \
  --env PYTHONUNBUFFERED=1 \
  --label org.opencontainers.image.title=function-platform \
  --label org.opencontainers.image.version="$version" \
  --label org.opencontainers.image.licenses=Apache-2.0 \
  "$container"
mkdir -p "$(dirname "$out")"
rm -f "$out"
"${buildah[@]}" commit --quiet --format oci --timestamp "$epoch" --rm "$container" \
  "docker-archive:$out:$tag" >/dev/null
container=""
log "$out: $tag ($(du -h "$out" | cut -f1))"
