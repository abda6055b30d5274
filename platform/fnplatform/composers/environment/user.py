"""The app's own database user: a Job that creates it with its database's privileges only.

Issue 22 item 19: the app connected as the server's administrator (on GCP with the root
password every instance shares). No kind in the pinned providers creates a PostgreSQL role
with chosen privileges on all three clouds: upjet AWS has no RDS role resource, upjet Azure
none for a flexible server's roles, and Cloud SQL's ``User`` (``sql.gcp.upbound.io``) makes
API users, which Cloud SQL makes members of ``cloudsqlsuperuser`` (CREATEROLE, CREATEDB).
crossplane-contrib/provider-sql (``Role``/``Grant``) would, but it is not a provider this
platform installs, and it must reach the private database from the control plane.

So the environment runs SQL where the app runs, which can reach the private database: a Job
in the environment's admin namespace ``<composite>-dbadmin`` (never the app's namespace, so
nobody who can start pods next to the app can mount the administrator's Secret):

1. ``credentials`` (an image with kubectl and a shell): reuses the password of the app's
   Secret ``db-connection-details`` if it exists, else generates one from ``/dev/urandom``,
   and applies the Secret in the app's namespace with ``host``, ``port``, ``username``,
   ``password``, ``database`` and ``sslmode``. Its ServiceAccount may write that one Secret.
2. ``grant`` (a PostgreSQL client image): as the administrator, creates the role ``app``
   if missing, sets its password, revokes the database from ``PUBLIC`` and grants the role
   CONNECT and TEMPORARY on it and USAGE and CREATE on its ``public`` schema: nothing on any
   other database, no CREATEDB, CREATEROLE or membership of the provider's admin role.

Passwords never pass through the function: the administrator's from the provider's Secret by
the kubelet, the app's generated in the pod. A re-run (a new Job name, see ``job_name``) keeps
the password, so running pods keep working.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from fnplatform.composers.environment.manifests import CONNECTION_SECRET, DATABASE_NAME, App
from fnplatform.library.jobs import (
    container_security_context,
    pod_security_context,
    secret_writer_rules,
)

#: The app's PostgreSQL role (one database per server, so one name is enough).
APP_USER = "app"
#: The Secret in the admin namespace holding the administrator's connection details.
ADMIN_SECRET = "db-admin-connection"
ACCOUNT = "db-user"
#: How long the Job may wait for a database that is not accepting connections yet.
DEADLINE_SECONDS = 1800

_CREDENTIALS = """set -eu
umask 077
if kubectl get secret "$SECRET" -n "$APP_NAMESPACE" -o 'jsonpath={.data.password}' \\
    > /work/password.b64 2>/dev/null && [ -s /work/password.b64 ]; then
  base64 -d /work/password.b64 > /work/password
else
  head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \\n' > /work/password
fi
kubectl create secret generic "$SECRET" -n "$APP_NAMESPACE" \\
  --from-literal=host="$DB_HOST" --from-literal=port="$DB_PORT" \\
  --from-literal=username="$APP_USER" --from-file=password=/work/password \\
  --from-literal=database="$DB_NAME" --from-literal=sslmode=require \\
  --dry-run=client -o yaml | kubectl apply -f -
"""

_GRANT = """set -eu
export PGHOST="$DB_HOST" PGPORT="$DB_PORT" PGUSER="$DB_USER" PGPASSWORD="$DB_PASSWORD" \\
  PGDATABASE="$DB_NAME" PGSSLMODE=require PGCONNECT_TIMEOUT=10
tries=0
until psql -Atqc 'select 1' > /dev/null; do
  tries=$((tries + 1)); [ "$tries" -lt 120 ] || exit 1; sleep 10
done
psql -v ON_ERROR_STOP=1 -v app_user="$APP_USER" -v db="$DB_NAME" <<'SQL'
\\set password `cat /work/password`
SELECT format('CREATE ROLE %I LOGIN', :'app_user')
  WHERE NOT EXISTS (SELECT FROM pg_roles WHERE rolname = :'app_user') \\gexec
ALTER ROLE :"app_user" WITH LOGIN PASSWORD :'password';
REVOKE ALL ON DATABASE :"db" FROM PUBLIC;
GRANT CONNECT, TEMPORARY ON DATABASE :"db" TO :"app_user";
GRANT USAGE, CREATE ON SCHEMA public TO :"app_user";
SQL
"""


def namespace(name: str) -> dict[str, Any]:
    """The admin namespace: only the Job and the administrator's Secret live there."""
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}


def admin_secret(admin_ns: str) -> dict[str, Any]:
    """The administrator's connection Secret in the admin namespace (data patched in by
    provider-kubernetes, or written there by the provider itself)."""
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "type": "Opaque",
        "metadata": {"name": ADMIN_SECRET, "namespace": admin_ns},
    }


def service_account(admin_ns: str) -> dict[str, Any]:
    """The Job's identity; its token is only ever mounted in the admin namespace."""
    return {
        "apiVersion": "v1",
        "kind": "ServiceAccount",
        "metadata": {"name": ACCOUNT, "namespace": admin_ns},
    }


def role(app: App) -> dict[str, Any]:
    """In the app's namespace: create Secrets (create cannot be narrowed to a name) and read
    and update ``db-connection-details`` only."""
    return {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "Role",
        "metadata": {"name": ACCOUNT, "namespace": app.namespace},
        "rules": secret_writer_rules(CONNECTION_SECRET, ["get", "patch", "update"]),
    }


def role_binding(app: App, admin_ns: str) -> dict[str, Any]:
    """The Job's ServiceAccount (admin namespace) bound to :func:`role` (app namespace)."""
    return {
        "apiVersion": "rbac.authorization.k8s.io/v1",
        "kind": "RoleBinding",
        "metadata": {"name": ACCOUNT, "namespace": app.namespace},
        "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": ACCOUNT},
        "subjects": [{"kind": "ServiceAccount", "name": ACCOUNT, "namespace": admin_ns}],
    }


def container(name: str, image: str, script: str, env: list[dict[str, Any]]) -> dict[str, Any]:
    """A container of a database Job: ``script`` in ``/bin/sh``, its home and scratch space the
    pod's in-memory ``work`` volume (:func:`pod`)."""
    return {
        "name": name,
        "image": image,
        "command": ["/bin/sh", "-c", script],
        "env": [*env, {"name": "HOME", "value": "/work"}],
        "securityContext": container_security_context(),
        "volumeMounts": [{"name": "work", "mountPath": "/work"}],
    }


def pod(
    account: str,
    containers: list[dict[str, Any]],
    init_containers: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """The pod of a database Job (this user's, the root password's): runs once as
    ``account``, restricted, with a small in-memory ``work`` volume for what it writes."""
    spec: dict[str, Any] = {
        "serviceAccountName": account,
        "restartPolicy": "Never",
        "securityContext": pod_security_context(),
        "volumes": [{"name": "work", "emptyDir": {"medium": "Memory", "sizeLimit": "1Mi"}}],
    }
    if init_containers:
        spec["initContainers"] = init_containers
    spec["containers"] = containers
    return spec


def job_object(spec: dict[str, Any], namespace: str, prefix: str = ACCOUNT) -> dict[str, Any]:
    """The Job running ``spec``, named by :func:`job_name`."""
    return {
        "apiVersion": "batch/v1",
        "kind": "Job",
        "metadata": {"name": job_name(spec, prefix), "namespace": namespace},
        "spec": spec,
    }


def job(
    app: App,
    admin_ns: str,
    admin_env: list[dict[str, Any]],
    *,
    kubectl_image: str,
    postgres_image: str,
) -> dict[str, Any]:
    """The Job creating the app's user; ``admin_env`` is the cloud's ``DB_HOST``, ``DB_PORT``,
    ``DB_USER`` and ``DB_PASSWORD`` from the administrator's Secret (``database_env``)."""
    common = [
        {"name": "APP_USER", "value": APP_USER},
        {"name": "DB_NAME", "value": DATABASE_NAME},
    ]
    host_port = [item for item in admin_env if item["name"] in ("DB_HOST", "DB_PORT")]
    template = pod(
        ACCOUNT,
        [container("grant", postgres_image, _GRANT, [*admin_env, *common])],
        init_containers=[
            container(
                "credentials",
                kubectl_image,
                _CREDENTIALS,
                [
                    *host_port,
                    *common,
                    {"name": "SECRET", "value": CONNECTION_SECRET},
                    {"name": "APP_NAMESPACE", "value": app.namespace},
                ],
            )
        ],
    )
    spec = {
        "backoffLimit": 4,
        "activeDeadlineSeconds": DEADLINE_SECONDS,
        "template": {"spec": template},
    }
    return job_object(spec, admin_ns)


def job_name(spec: dict[str, Any], prefix: str = ACCOUNT) -> str:
    """``<prefix>-<8 hex of the spec>``: a Job's pod template is immutable, so a changed Job
    (another image, another admin key) is a new Job rather than an update the API refuses.
    Re-running is safe: the password is kept and the SQL is idempotent."""
    digest = hashlib.sha256(json.dumps(spec, sort_keys=True).encode()).hexdigest()
    return f"{prefix}-{digest[:8]}"


#: Ready when the Job has completed (provider-kubernetes evaluates it on the live Job).
JOB_COMPLETE = (
    "has(object.status) && has(object.status.conditions) && "
    "object.status.conditions.exists(c, c.type == 'Complete' && c.status == 'True')"
)
