"""A thin layer over the official Python Kubernetes client (kubernetes.dynamic): apply YAML the
way `kubectl apply --server-side` does, read any kind, and read conditions.

Why the official client (docs/live.md): it is the Kubernetes project's own, its DynamicClient
serves every CRD without generated models (XRDs and provider CRDs appear at run time), and it
speaks server-side apply, watch and the status subresource.
"""

from __future__ import annotations

import contextlib
import ssl
import threading
import urllib.request
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import yaml
from kubernetes import client, config, dynamic
from kubernetes.dynamic.exceptions import NotFoundError, ResourceNotFoundError

FIELD_MANAGER = "live-tests"


def docs_of(*paths: Path) -> list[dict[str, Any]]:
    """The YAML documents of the files (and of the *.yaml files of directories), in order."""
    out: list[dict[str, Any]] = []
    for path in paths:
        files = sorted(path.rglob("*.yaml")) if path.is_dir() else [path]
        for f in files:
            out += [d for d in yaml.safe_load_all(f.read_text()) if d]
    return out


class Kube:
    """One API client for the tests and the stand-ins (thread-safe discovery cache)."""

    def __init__(self, kubeconfig: Path) -> None:
        self.api = config.new_client_from_config(str(kubeconfig))
        self.core = client.CoreV1Api(self.api)
        self._lock = threading.Lock()
        self._dyn: dynamic.DynamicClient | None = None

    @property
    def dyn(self) -> dynamic.DynamicClient:
        """The dynamic client, made on first use (it asks the apiserver for discovery)."""
        if self._dyn is None:
            self._dyn = dynamic.DynamicClient(self.api)
        return self._dyn

    def readyz(self) -> bool:
        """The apiserver's /readyz says ok."""
        cfg = self.api.configuration
        ctx = ssl.create_default_context(cafile=cfg.ssl_ca_cert)
        req = urllib.request.Request(
            f"{cfg.host}/readyz", headers={"Authorization": cfg.api_key["BearerToken"]}
        )
        with urllib.request.urlopen(req, context=ctx, timeout=5) as r:
            return bool(r.read().decode().strip() == "ok")

    def invalidate(self) -> None:
        """Forget discovery (kinds whose scope or versions changed are looked up again)."""
        with self._lock:
            self.dyn.resources.invalidate_cache()

    def resource(self, api_version: str, kind: str) -> Any:
        """The dynamic resource of a kind; refreshes discovery once for kinds new since."""
        with self._lock:
            try:
                return self.dyn.resources.get(api_version=api_version, kind=kind)
            except ResourceNotFoundError:
                self.dyn.resources.invalidate_cache()
                return self.dyn.resources.get(api_version=api_version, kind=kind)

    def apply(self, doc: dict[str, Any], manager: str = FIELD_MANAGER,
              dry_run: bool = False) -> Any:
        """Server-side apply one object (create or update the fields this manager owns);
        ``dry_run``: the API server validates and admits it (CRD schema, CEL, webhooks) and
        stores nothing."""
        res = self.resource(doc["apiVersion"], doc["kind"])
        meta = doc["metadata"]
        return res.server_side_apply(
            body=doc,
            name=meta["name"],
            namespace=meta.get("namespace") if res.namespaced else None,
            field_manager=manager,
            force_conflicts=True,
            dry_run="All" if dry_run else None,
        )

    def apply_all(self, docs: Iterable[dict[str, Any]]) -> None:
        """Apply each document in order."""
        for doc in docs:
            self.apply(doc)

    def get(self, api_version: str, kind: str, name: str, namespace: str | None = None) -> Any:
        """The object, or None when it does not exist."""
        res = self.resource(api_version, kind)
        try:
            return res.get(name=name, namespace=namespace if res.namespaced else None)
        except NotFoundError:
            return None

    def list(self, api_version: str, kind: str, namespace: str | None = None) -> list[Any]:
        """Every object of the kind (in the namespace, or all)."""
        res = self.resource(api_version, kind)
        return list(res.get(namespace=namespace).items)

    def delete(self, api_version: str, kind: str, name: str, namespace: str | None = None) -> None:
        """Delete the object (foreground is not asked: Crossplane orders deletion itself)."""
        res = self.resource(api_version, kind)
        with contextlib.suppress(NotFoundError):
            res.delete(name=name, namespace=namespace if res.namespaced else None)

    def patch_status(self, obj: Any, status: dict[str, Any], manager: str) -> None:
        """Server-side apply status fields on the status subresource, as a controller does."""
        res = self.resource(obj.apiVersion, obj.kind)
        body = {
            "apiVersion": obj.apiVersion,
            "kind": obj.kind,
            "metadata": {"name": obj.metadata.name},
            "status": status,
        }
        if res.namespaced:
            body["metadata"]["namespace"] = obj.metadata.namespace
        res.status.server_side_apply(
            body=body,
            name=obj.metadata.name,
            namespace=obj.metadata.namespace if res.namespaced else None,
            field_manager=manager,
            force_conflicts=True,
        )

    def patch(self, obj: Any, body: dict[str, Any]) -> None:
        """Merge-patch the object (finalizers, annotations)."""
        res = self.resource(obj.apiVersion, obj.kind)
        res.patch(
            body=body,
            name=obj.metadata.name,
            namespace=obj.metadata.namespace if res.namespaced else None,
            content_type="application/merge-patch+json",
        )

    def events(self, namespace: str | None = None) -> list[Any]:
        """Core events (of the namespace, or all)."""
        return self.list("v1", "Event", namespace)


def condition(obj: Any, kind: str) -> dict[str, Any] | None:
    """The status condition of type kind, as a dict, or None."""
    status = (obj.to_dict() if obj is not None else {}).get("status") or {}
    for c in status.get("conditions") or []:
        if c.get("type") == kind:
            return dict(c)
    return None


def is_true(obj: Any, kind: str) -> bool:
    """The condition of type kind is True."""
    c = condition(obj, kind)
    return bool(c and c.get("status") == "True")


def xrd_serving(obj: Any, xrd: dict[str, Any]) -> bool:
    """The XRD ``xrd`` (as applied) is Established and, where it defines a claim, Offered:
    its composite (and claim) API is served."""
    return is_true(obj, "Established") and (
        "claimNames" not in xrd["spec"] or is_true(obj, "Offered"))


def iter_crds(docs: Iterable[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    """The CustomResourceDefinitions among docs."""
    return (d for d in docs if d.get("kind") == "CustomResourceDefinition")
