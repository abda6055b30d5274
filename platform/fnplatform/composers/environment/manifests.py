"""The Kubernetes manifests of an environment: namespace, backend Deployment and Service, and
the copy of the database connection Secret. Plain data; the composer wraps them in Objects."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from fnplatform.composers.environment.model import Backend
from fnplatform.library.kubernetes import secret_env, workload_labels

CONNECTION_SECRET = "db-connection-details"
#: The backend's database variables and the keys of the app's Secret they read.
APP_ENV = (
    ("DB_HOST", "host"),
    ("DB_PORT", "port"),
    ("DB_USER", "username"),
    ("DB_PASSWORD", "password"),
    ("DB_NAME", "database"),
    ("DB_SSLMODE", "sslmode"),
    # libpq (psycopg, asyncpg) reads PGSSLMODE itself: TLS even where the server does
    # not force it (RDS PostgreSQL 13/14 default rds.force_ssl=0).
    ("PGSSLMODE", "sslmode"),
)
BACKEND = "backend"
DATABASE_NAME = "app"


@dataclass(frozen=True)
class App:
    """What the manifests need: where they go and what the claim asked for."""

    namespace: str
    backend: Backend


def namespace(app: App) -> dict[str, Any]:
    """The environment's namespace."""
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": app.namespace}}


def connection_copy_references(source: str, source_namespace: str) -> list[dict[str, Any]]:
    """provider-kubernetes copies the database's connection Secret (on the Crossplane cluster)
    into the manifest's ``data`` when it applies it: the values never pass through here."""
    return [
        {
            "patchesFrom": {
                "apiVersion": "v1",
                "kind": "Secret",
                "name": source,
                "namespace": source_namespace,
                "fieldPath": "data",
            },
            "toFieldPath": "data",
        }
    ]


def _labels() -> dict[str, str]:
    """The backend's labels, also its immutable selector: only its name."""
    return workload_labels(name=BACKEND, managed_by=None)


def _backend_object(app: App, api_version: str, kind: str, spec: dict[str, Any]) -> dict[str, Any]:
    """One of the backend's objects (Deployment, Service, Ingress): named after it, in the
    app's namespace, with its labels."""
    return {
        "apiVersion": api_version,
        "kind": kind,
        "metadata": {"name": BACKEND, "namespace": app.namespace, "labels": _labels()},
        "spec": spec,
    }


def _resources(app: App) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for part in ("requests", "limits"):
        amounts = getattr(app.backend.resources, part).model_dump(exclude_none=True)
        if amounts:
            out[part] = amounts
    return out


def _probe(app: App, *, initial_delay: int, period: int) -> dict[str, Any]:
    """An HTTP GET of ``healthPath`` when the app names one, else a TCP connect to its port.

    The design's backend serves no ``/healthz``: an HTTP probe of a path it does not serve
    fails, the kubelet restarts the pod, and the environment never turns Ready.
    """
    path = app.backend.healthPath
    check = {"httpGet": {"path": path, "port": "http"}} if path else {"tcpSocket": {"port": "http"}}
    return {
        **check,
        "initialDelaySeconds": initial_delay,
        "periodSeconds": period,
        "failureThreshold": 3,
    }


def deployment(app: App) -> dict[str, Any]:
    """The backend: env from the app's own Secret, probed on its health path.

    ``db-connection-details`` is written by the database-user Job (``user.py``) with the same
    keys on every cloud: ``host``, ``port``, ``username``, ``password``, ``database``,
    ``sslmode``. ``DB_*`` read them through the kubelet; ``envFrom`` also exposes every key as
    is. The claim's own variables come last and win. The administrator's credentials are never
    in this namespace.
    """
    backend = app.backend
    container: dict[str, Any] = {
        "name": BACKEND,
        "image": backend.image,
        "ports": [{"name": "http", "containerPort": backend.port, "protocol": "TCP"}],
        "env": [
            *(secret_env(name, CONNECTION_SECRET, key) for name, key in APP_ENV),
            *({"name": item.name, "value": item.value} for item in backend.env),
        ],
        "envFrom": [{"secretRef": {"name": CONNECTION_SECRET}}],
    }
    if backend.probes:
        container["readinessProbe"] = _probe(app, initial_delay=5, period=10)
        container["livenessProbe"] = _probe(app, initial_delay=15, period=20)
    resources = _resources(app)
    if resources:
        container["resources"] = resources
    return _backend_object(
        app,
        "apps/v1",
        "Deployment",
        {
            "replicas": backend.replicas,
            "selector": {"matchLabels": _labels()},
            "template": {
                "metadata": {"labels": _labels()},
                "spec": {"containers": [container]},
            },
        },
    )


def service(app: App) -> dict[str, Any]:
    """A ClusterIP Service in front of the backend's pods."""
    return _backend_object(
        app,
        "v1",
        "Service",
        {
            "type": "ClusterIP",
            "selector": _labels(),
            "ports": [
                {"name": "http", "port": app.backend.port, "targetPort": "http", "protocol": "TCP"}
            ],
        },
    )


def service_address(app: App) -> str:
    """The backend Service's in-cluster address."""
    return f"{BACKEND}.{app.namespace}.svc.cluster.local:{app.backend.port}"


def ingress(app: App, host: str, path: str, class_name: str | None) -> dict[str, Any]:
    """The backend on the platform's ingress at ``https://<host><path>``: the CDN's origin for
    ``<path>/*``. TLS is the ingress controller's (the platform's wildcard certificate for the
    origin domain), so no certificate is composed per environment."""
    spec: dict[str, Any] = {
        "rules": [
            {
                "host": host,
                "http": {
                    "paths": [
                        {
                            "path": path,
                            "pathType": "Prefix",
                            "backend": {"service": {"name": BACKEND, "port": {"name": "http"}}},
                        }
                    ]
                },
            }
        ],
    }
    if class_name:
        spec["ingressClassName"] = class_name
    return _backend_object(app, "networking.k8s.io/v1", "Ingress", spec)
