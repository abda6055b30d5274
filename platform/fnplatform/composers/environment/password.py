"""The database administrator's password where the provider cannot generate one (GCP).

Issue 22 item 19: every Cloud SQL instance took its root password from one platform Secret
(``gcp.databasePasswordSecretRef``), so all environments shared it. The pinned
provider-upjet-gcp v3.0.0 has no ``autoGenerate*`` field on ``DatabaseInstance`` (AWS RDS and
Azure flexible servers have the provider generate it: upjet's ``PasswordGenerator``), and the
function never makes a secret up itself (it would pass through the function and the
composite's desired state). So, as for the app's user (``user.py``), a Job generates it where
the provider reads it, on the Crossplane cluster:

* the namespace ``<composite>-dbroot`` (on the Crossplane cluster, whatever cluster the app
  runs on) holds the Job and its ServiceAccount;
* the Job writes the Secret ``<composite>-db-root-password`` (key ``password``, 64 hex digits
  from ``/dev/urandom``) once, and never changes an existing one (a re-run keeps the password
  the instance was created with). Cluster-scoped form: in ``<composite>-dbroot``, which the
  instance uses (a Usage), so the Secret outlives the instance. Namespaced form: in the
  composite's namespace, the only one a namespaced managed resource reads a Secret from
  (``rootPasswordSecretRef`` has no ``namespace`` there); it stays when the environment is
  deleted (nothing owns it);
* the instance is composed only once the Job has completed.

A platform that manages the password itself (e.g. synced from Secret Manager) still names it
with ``gcp.databasePasswordSecretRef``; then none of this is composed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from fnplatform.composers.environment.user import container, job_object, pod
from fnplatform.library.jobs import secret_writer_rules

#: The key of the generated Secret (the provider reads ``rootPasswordSecretRef.key``).
PASSWORD_KEY = "password"
ACCOUNT = "db-root"

_GENERATE = """set -eu
umask 077
if kubectl get secret "$SECRET" -n "$SECRET_NAMESPACE" -o name > /dev/null 2>&1; then
  exit 0
fi
head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \\n' > /work/password
kubectl create secret generic "$SECRET" -n "$SECRET_NAMESPACE" \\
  --from-file=password=/work/password
"""


@dataclass(frozen=True)
class RootPassword:
    """Where the generated password lives: the Job's namespace and the Secret's."""

    job_namespace: str
    secret: str
    secret_namespace: str


def namespace(root: RootPassword) -> dict[str, Any]:
    """The Job's namespace on the Crossplane cluster."""
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": root.job_namespace}}


def service_account(root: RootPassword) -> dict[str, Any]:
    """The Job's identity, only ever mounted in its own namespace."""
    return {
        "apiVersion": "v1",
        "kind": "ServiceAccount",
        "metadata": {"name": ACCOUNT, "namespace": root.job_namespace},
    }


def role(root: RootPassword) -> dict[str, Any]:
    """In the Secret's namespace: create Secrets (create cannot be narrowed to a name) and
    read the one Secret; nothing may read or change any other. Named after the Secret: in the
    namespaced form several environments share the namespace."""
    return {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "Role",
        "metadata": {"name": root.secret, "namespace": root.secret_namespace},
        "rules": secret_writer_rules(root.secret, ["get"]),
    }


def role_binding(root: RootPassword) -> dict[str, Any]:
    """The Job's ServiceAccount bound to :func:`role`."""
    return {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "RoleBinding",
        "metadata": {"name": root.secret, "namespace": root.secret_namespace},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": root.secret},
        "subjects": [{"kind": "ServiceAccount", "name": ACCOUNT, "namespace": root.job_namespace}],
    }


def job(root: RootPassword, *, kubectl_image: str) -> dict[str, Any]:
    """The Job writing the Secret if it does not exist yet."""
    env = [
        {"name": "SECRET", "value": root.secret},
        {"name": "SECRET_NAMESPACE", "value": root.secret_namespace},
    ]
    generate = container("generate", kubectl_image, _GENERATE, env)
    spec = {"backoffLimit": 4, "template": {"spec": pod(ACCOUNT, [generate])}}
    return job_object(spec, root.job_namespace, ACCOUNT)
