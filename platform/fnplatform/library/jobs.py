"""What every Job a composer runs on a cluster shares: restricted pods, and the right to write
one Secret.

The environment's database Jobs (the root password, the app's user) and the openstack
kubeconfig refresher each run a shell with kubectl that writes one Secret. Their pods meet the
Pod Security Standards' ``restricted`` profile (non-root, no privilege escalation, every
capability dropped, the ``RuntimeDefault`` seccomp profile), with a read-only root filesystem
besides, and their Role lets them create Secrets (``create`` cannot be narrowed to a name) and
touch only the one they write. Each function returns a new dict, so no two composed bodies
share one.
"""

from __future__ import annotations

from typing import Any

#: The user and group ``nobody``: no image's own user is trusted to be non-root.
NOBODY = 65534


def pod_security_context() -> dict[str, Any]:
    """A pod's ``securityContext``: runs as ``nobody``, under the runtime's seccomp profile."""
    return {
        "runAsNonRoot": True,
        "runAsUser": NOBODY,
        "runAsGroup": NOBODY,
        "seccompProfile": {"type": "RuntimeDefault"},
    }


def container_security_context() -> dict[str, Any]:
    """A container's ``securityContext``: no privilege escalation, read-only root, no
    capabilities (scratch space is an ``emptyDir`` the pod mounts)."""
    return {
        "allowPrivilegeEscalation": False,
        "readOnlyRootFilesystem": True,
        "capabilities": {"drop": ["ALL"]},
    }


def secret_writer_rules(secret: str, verbs: list[str]) -> list[dict[str, Any]]:
    """A Role's ``rules``: create Secrets, and ``verbs`` on the Secret ``secret`` only."""
    return [
        {"apiGroups": [""], "resources": ["secrets"], "verbs": ["create"]},
        {"apiGroups": [""], "resources": ["secrets"], "resourceNames": [secret], "verbs": verbs},
    ]
