#!/usr/bin/env bash
# Run a command (make test-live: pytest -m live) in a private network and mount namespace, so
# the live control plane needs no container runtime and touches nothing on the machine:
# - its own loopback: fixed ports (apiserver 6443, Crossplane's webhook 9444, the function 9443,
#   the package registry 5000) never collide with other processes, and every process dies with it;
# - the Service cluster IP range (10.96.0.0/16) is local on that loopback, so the apiserver
#   reaches Crossplane's webhook Service at its cluster IP, as it would through kube-proxy;
# - /etc/hosts is a private, writable copy (bind-mounted): the harness maps Service DNS names
#   (function-platform.crossplane-system, ...) to 127.0.0.1, as cluster DNS would map them to pods;
# - /var/run/secrets is a private tmpfs: the service account token the harness writes there
#   for provider-kubernetes (as the kubelet projects it) is seen by nothing else.
# Needs root or unprivileged user namespaces (then run: unshare -r first).
set -euo pipefail
if [[ "${FNPLATFORM_LIVE_NETNS:-}" != 1 ]]; then
  hosts="$(mktemp -t live-hosts.XXXXXX)"
  cat /etc/hosts > "$hosts"
  trap 'rm -f "$hosts"' EXIT
  # --pid: the command runs as the namespace's init; when it ends, the kernel ends every process
  # it started (etcd, the apiserver, ...), whatever way it ended
  FNPLATFORM_LIVE_NETNS=1 FNPLATFORM_LIVE_HOSTS="$hosts" \
    unshare --net --mount --pid --fork --mount-proc -- "$0" "$@"
  exit
fi
ip link set lo up
ip addr add 10.96.0.0/16 dev lo
mount --bind "$FNPLATFORM_LIVE_HOSTS" /etc/hosts
# where the kubelet projects a pod's service account token (provider-kubernetes'
# InjectedIdentity reads it): a private tmpfs (creating the empty mount point if missing)
mkdir -p /var/run/secrets
mount -t tmpfs tmpfs /var/run/secrets
exec "$@"
