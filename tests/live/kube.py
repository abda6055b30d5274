"""A thin layer over the official Python Kubernetes client (kubernetes.dynamic): apply YAML the
way `kubectl apply --server-side` does, read any kind, and read conditions.

Why the official client (docs/live.md): it is the Kubernetes project's own, its DynamicClient
serves every CRD without generated models (XRDs and provider CRDs appear at run time), and it
speaks server-side apply, watch and the status subresource.
"""

from __future__ import annotations

import contextlib
import json
import ssl
import threading
import urllib.request
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

import yaml
from kubernetes import client, config, dynamic
from kubernetes.client.exceptions import ApiException
from kubernetes.dynamic.exceptions import NotFoundError, ResourceNotFoundError
from kubernetes.watch.watch import iter_resp_lines

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
        self._informers: dict[tuple[str, str], Informer] = {}

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

    def apply(
        self, doc: dict[str, Any], manager: str = FIELD_MANAGER, dry_run: bool = False
    ) -> Any:
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

    def cached(self, api_version: str, kind: str) -> Informer:
        """The kind's :class:`Informer` (started on first use and kept for the session): what
        the stand-ins and the load's waits read, as controllers read their informers' caches,
        instead of listing every object once a second."""
        key = (api_version, kind)
        with self._lock:
            informer = self._informers.get(key)
            if informer is None:
                informer = self._informers[key] = Informer(self, api_version, kind)
        return informer

    def stop_informers(self) -> None:
        """Stop every informer's watch (the control plane is going away)."""
        with self._lock:
            informers, self._informers = list(self._informers.values()), {}
        for informer in informers:
            informer.stop()

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

    def patch(self, obj: Any, body: dict[str, Any], manager: str | None = None) -> None:
        """Merge-patch the object (finalizers, annotations); ``manager``: the field manager
        the API server records the change under (an Update operation), as `kubectl edit`
        records `kubectl-edit`."""
        res = self.resource(obj.apiVersion, obj.kind)
        res.patch(
            body=body,
            name=obj.metadata.name,
            namespace=obj.metadata.namespace if res.namespaced else None,
            content_type="application/merge-patch+json",
            field_manager=manager,
        )

    def events(self, namespace: str | None = None) -> list[Any]:
        """Core events (of the namespace, or all)."""
        return self.list("v1", "Event", namespace)


class View:
    """A cached object (a dict from the API server's JSON) read the way the dynamic client's
    ResourceInstance is (``obj.metadata.name``, ``obj.kind``, ``obj.to_dict()``), without
    building one: wrapping thousands of objects a second in ResourceFields was most of what the
    stand-ins cost under load."""

    __slots__ = ("_d",)

    def __init__(self, d: dict[str, Any]) -> None:
        self._d = d

    def to_dict(self) -> dict[str, Any]:
        """The object as the API server sent it (shared with the cache: do not modify)."""
        return self._d

    def get(self, key: str, default: Any = None) -> Any:
        """A field, wrapped when it is an object."""
        value = self._d.get(key, default)
        return View(value) if isinstance(value, dict) else value

    def __getattr__(self, key: str) -> Any:
        return self.get(key)


class Informer:
    """A list-and-watch cache of one kind, as a controller's informer keeps one (client-go
    ``tools/cache`` Reflector: list, then watch from the list's resourceVersion with bookmarks,
    and list again when the watch answers 410 Gone). The stand-ins of the live plane play
    controllers, and real controllers read their caches: listing every object of every kind
    once a second, as they did before, was what saturated the API server at a few hundred
    composites (bench/results.md, "Scale").

    Objects are the API server's JSON as dicts. A kind not served (yet, or any more: an XRD
    of the other form) reads as empty and is listed again every few seconds.
    """

    WATCH_S = 300  # a watch's timeoutSeconds: then it is opened again from the last version
    RETRY_S = 2.0
    #: How often a kind not served is looked up again (each lookup refreshes discovery)
    UNSERVED_S = 5.0

    def __init__(self, kube: Kube, api_version: str, kind: str) -> None:
        self.kube = kube
        self.api_version = api_version
        self.kind = kind
        self._objects: dict[tuple[str, str], dict[str, Any]] = {}
        self._lock = threading.Lock()
        self._synced = threading.Event()
        self._stop = threading.Event()
        self._served = False
        self._response: Any = None
        #: why the last list or watch failed (kept for a timeout's message)
        self.last_error = ""
        self._thread = threading.Thread(target=self._run, name=f"informer-{kind}", daemon=True)
        self._thread.start()

    def items(self, namespace: str | None = None, timeout: float = 30.0) -> list[dict[str, Any]]:
        """Every object of the kind (in ``namespace``, or all), once the first list is in;
        raises NotFoundError-like :class:`LookupError` when the kind is not served."""
        self.wait_synced(timeout)
        with self._lock:
            objects = list(self._objects.values())
        if namespace is not None:
            objects = [o for o in objects if o["metadata"].get("namespace") == namespace]
        return objects

    def get(self, name: str, namespace: str | None = None) -> dict[str, Any] | None:
        """The object, or None (``namespace`` is ignored for a cluster-scoped object, as the
        API ignores it)."""
        self.wait_synced()
        with self._lock:
            found = self._objects.get((namespace or "", name))
            return found if found is not None else self._objects.get(("", name))

    def wait_synced(self, timeout: float = 30.0) -> None:
        """Until the first list has been answered (served or not); LookupError if not served."""
        if not self._synced.wait(timeout):
            raise TimeoutError(
                f"{self.kind}: the first list took over {timeout} s "
                f"(last error: {self.last_error or 'none'})"
            )
        if not self._served:
            raise LookupError(f"{self.api_version} {self.kind} is not served")

    def stop(self) -> None:
        """Stop watching: the thread (a daemon) ends at the watch's next event or bookmark, or
        with the API server. Closing the response from here would wait for the reading thread's
        buffer lock, that is for the next event: up to a minute per informer."""
        self._stop.set()

    def _request(self, path: str, query: list[tuple[str, Any]], timeout: Any) -> Any:
        """The urllib3 response of a GET, unread (a watch streams); the dynamic client's
        exceptions (NotFoundError: 404) on an error status."""
        return self.kube.dyn.request(
            "get",
            path,
            query_params=query,
            serialize=False,
            header_params={"Accept": "application/json"},
            _request_timeout=timeout,
        )

    def _list(self, path: str) -> str:
        response = self._request(path, [], 60)
        try:
            listed = json.loads(response.data)
        finally:
            response.release_conn()
        objects = {}
        for obj in listed.get("items") or []:
            obj.setdefault("apiVersion", self.api_version)
            obj.setdefault("kind", self.kind)
            meta = obj["metadata"]
            objects[(meta.get("namespace") or "", meta["name"])] = obj
        with self._lock:
            self._objects = objects
            self._served = True
        self._synced.set()
        return str(listed["metadata"]["resourceVersion"])

    def _unserved(self) -> None:
        with self._lock:
            self._objects = {}
            self._served = False
        self._synced.set()

    def _run(self) -> None:
        version = ""
        while not self._stop.is_set():
            try:
                path = self.kube.resource(self.api_version, self.kind).path()
                if not version:
                    version = self._list(path)
                version = self._watch(path, version)
            except (ResourceNotFoundError, NotFoundError):
                self._unserved()
                version = ""
                self._stop.wait(self.UNSERVED_S)
            except ApiException as e:
                if e.status == 404:
                    self._unserved()
                version = ""
                self._stop.wait(self.UNSERVED_S if e.status == 404 else self.RETRY_S)
            except Exception as e:  # the API server restarting, a dropped connection: list again
                self.last_error = f"{type(e).__name__}: {e}"[:300]
                version = ""
                self._stop.wait(self.RETRY_S)

    def _watch(self, path: str, version: str) -> str:
        """Follow the watch from ``version``; the version to go on from ("" to list again)."""
        self._response = self._request(
            path,
            [
                ("watch", "true"),
                ("resourceVersion", version),
                ("allowWatchBookmarks", "true"),
                ("timeoutSeconds", self.WATCH_S),
            ],
            (10, self.WATCH_S + 30),
        )
        try:
            for line in iter_resp_lines(self._response):
                if self._stop.is_set():
                    return version
                if not line:
                    continue
                event = json.loads(line)
                obj = event.get("object") or {}
                if event.get("type") == "ERROR":
                    return ""  # 410 Gone (the version left the watch cache) and the like
                version = str((obj.get("metadata") or {}).get("resourceVersion") or version)
                if event.get("type") == "BOOKMARK":
                    continue
                meta = obj["metadata"]
                key = (meta.get("namespace") or "", meta["name"])
                with self._lock:
                    if event.get("type") == "DELETED":
                        self._objects.pop(key, None)
                    else:
                        self._objects[key] = obj
        finally:
            with contextlib.suppress(Exception):
                self._response.close()
        return version


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
        "claimNames" not in xrd["spec"] or is_true(obj, "Offered")
    )


def iter_crds(docs: Iterable[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    """The CustomResourceDefinitions among docs."""
    return (d for d in docs if d.get("kind") == "CustomResourceDefinition")
