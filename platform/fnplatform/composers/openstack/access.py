"""Access to a new Shoot for later compositions: a ProviderConfig fed by short-lived kubeconfigs.

Gardener no longer writes a static ``<shoot>.kubeconfig`` Secret into the project namespace
(disabled for Kubernetes >= 1.27 Shoots), and an ``Object`` cannot call the
``shoots/adminkubeconfig`` subresource (it is a ``create`` on a subresource returning an
``AdminKubeconfigRequest``, not an object to apply). Gardener's supported way for automation
(GEP-16, docs ``shoot_access``) is a ServiceAccount in the Gardener project allowed to create
``shoots/adminkubeconfig``, asking for a short-lived kubeconfig and renewing it before it
expires. So each Shoot gets, in the management cluster:

* a ``ServiceAccount``, ``Role`` and ``RoleBinding`` allowing exactly one thing: writing the
  Shoot's kubeconfig Secret;
* a ``CronJob`` that asks the garden (with the project ServiceAccount's kubeconfig named in
  the environment, ``access.gardenKubeconfigSecret``) for an admin kubeconfig valid
  ``access.expirationSeconds`` and writes it to that Secret on ``access.schedule``;
* the provider-kubernetes ``ProviderConfig`` (named per region and pool) reading that Secret.

No secret value passes through the function or its desired state.
"""

from __future__ import annotations

import copy
from typing import Any

from fnplatform.composers.openstack.model import Access, Gardener
from fnplatform.library.jobs import (
    container_security_context,
    pod_security_context,
    secret_writer_rules,
)
from fnplatform.naming import dns_label

KUBECONFIG_KEY = "kubeconfig"
STARTING_DEADLINE_SECONDS = 600
_SCRIPT = """set -eu
printf '{"apiVersion":"authentication.gardener.cloud/v1alpha1","kind":"AdminKubeconfigRequest","spec":{"expirationSeconds":%s}}' "$EXPIRATION_SECONDS" > /tmp/request.json
kubectl --kubeconfig /garden/kubeconfig create --raw "/apis/core.gardener.cloud/v1beta1/namespaces/$PROJECT_NAMESPACE/shoots/$SHOOT/adminkubeconfig" -f /tmp/request.json \\
  | jq -r '.status.kubeconfig' | base64 -d > /tmp/kubeconfig
kubectl create secret generic "$TARGET_SECRET" --namespace "$TARGET_NAMESPACE" \\
  --from-file=kubeconfig=/tmp/kubeconfig --dry-run=client -o yaml | kubectl apply -f -
"""  # noqa: E501


def secret_name(provider_config: str) -> str:
    """The Secret holding the current kubeconfig of the Shoot behind ``provider_config``."""
    return dns_label(provider_config, "kubeconfig")


def refresher_name(provider_config: str) -> str:
    """ServiceAccount, Role, RoleBinding and CronJob name of one Shoot's refresher."""
    return dns_label(provider_config, "kubeconfig-refresher", max_length=52)  # CronJob limit


def provider_config(name: str, access: Access) -> dict[str, Any]:
    """The ProviderConfig reaching the Shoot (its Secret is written by the refresher)."""
    return {
        "apiVersion": "kubernetes.crossplane.io/v1alpha1",
        "kind": "ProviderConfig",
        "metadata": {"name": name},
        "spec": {
            "credentials": {
                "source": "Secret",
                "secretRef": {
                    "namespace": access.namespace,
                    "name": secret_name(name),
                    "key": KUBECONFIG_KEY,
                },
            }
        },
    }


def refresher_manifests(
    provider_config_name: str, shoot: str, access: Access, gardener: Gardener
) -> dict[str, dict[str, Any]]:
    """The management-cluster objects that keep ``secret_name(...)`` current, by part name."""
    name = refresher_name(provider_config_name)
    target = secret_name(provider_config_name)
    ns = access.namespace
    meta = {"name": name, "namespace": ns}
    job = {"backoffLimit": 3, "template": {"spec": _pod(name, shoot, target, access, gardener)}}
    return {
        "service-account": {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": meta},
        "role": {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "Role",
            "metadata": meta,
            "rules": secret_writer_rules(target, ["get", "patch", "update"]),
        },
        "role-binding": {
            "apiVersion": "rbac.authorization.k8s.io/v1",
            "kind": "RoleBinding",
            "metadata": meta,
            "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": name},
            "subjects": [{"kind": "ServiceAccount", "name": name, "namespace": ns}],
        },
        "cronjob": {
            "apiVersion": "batch/v1",
            "kind": "CronJob",
            "metadata": meta,
            "spec": {
                "schedule": access.schedule,
                "concurrencyPolicy": "Forbid",
                # Without a deadline, a CronJob that missed more than 100 schedules (a
                # controller outage of 25 h at */15) is never started again (Kubernetes
                # CronJob limitations); with it only the last 10 minutes count.
                "startingDeadlineSeconds": STARTING_DEADLINE_SECONDS,
                "successfulJobsHistoryLimit": 1,
                "failedJobsHistoryLimit": 3,
                "jobTemplate": {"spec": job},
            },
        },
        # The first kubeconfig right away, not at the CronJob's next tick (emitted once the
        # Shoot is Ready, see pools.py).
        "first-run": {
            "apiVersion": "batch/v1",
            "kind": "Job",
            "metadata": {"name": dns_label(name, "first", max_length=63), "namespace": ns},
            "spec": copy.deepcopy(job),
        },
    }


def _pod(name: str, shoot: str, target: str, access: Access, gardener: Gardener) -> dict[str, Any]:
    """The refresher's pod: ask the garden for a kubeconfig, write it to ``target``."""
    return {
        "serviceAccountName": name,
        "restartPolicy": "OnFailure",
        # The pod holds a garden credential and a Shoot's admin kubeconfig: non-root, no
        # privilege escalation, read-only root, the kubeconfig only in a memory emptyDir.
        "securityContext": pod_security_context(),
        "containers": [
            {
                "name": "refresh",
                "image": access.refresherImage,
                "command": ["/bin/sh", "-c", _SCRIPT],
                "env": [
                    {"name": "PROJECT_NAMESPACE", "value": gardener.namespace},
                    {"name": "SHOOT", "value": shoot},
                    {"name": "EXPIRATION_SECONDS", "value": str(access.expirationSeconds)},
                    {"name": "TARGET_SECRET", "value": target},
                    {"name": "TARGET_NAMESPACE", "value": access.namespace},
                    {"name": "HOME", "value": "/tmp"},
                ],
                "securityContext": container_security_context(),
                "volumeMounts": [
                    {"name": "garden", "mountPath": "/garden", "readOnly": True},
                    {"name": "tmp", "mountPath": "/tmp"},
                ],
            }
        ],
        "volumes": [
            {
                "name": "garden",
                "secret": {
                    "secretName": access.gardenKubeconfigSecret,
                    "items": [{"key": KUBECONFIG_KEY, "path": "kubeconfig"}],
                },
            },
            {"name": "tmp", "emptyDir": {"medium": "Memory", "sizeLimit": "8Mi"}},
        ],
    }
