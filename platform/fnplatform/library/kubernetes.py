"""Kinds that act inside a Kubernetes cluster: provider-kubernetes and provider-helm.

Cloud-agnostic: whatever cloud made the cluster, Helm and Kubernetes ProviderConfigs read its
kubeconfig from the connection secret, and releases and objects go through them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any, ClassVar

from fnplatform.composition import Composition
from fnplatform.kinds import Readiness, register, wrapped_kind

OBJECT = register("kubernetes.crossplane.io/v1alpha2", "Object")
KUBERNETES_PROVIDER_CONFIG = register(
    "kubernetes.crossplane.io/v1alpha1",
    "ProviderConfig",
    managed=False,
    readiness=Readiness.EXISTS,
)
HELM_RELEASE = register("helm.crossplane.io/v1beta1", "Release")
#: A namespace holds whatever its users put there (Secrets, PVCs): deleting it loses data.
NAMESPACE = register("v1", "Namespace", managed=False, stateful=True)
HELM_PROVIDER_CONFIG = register(
    "helm.crossplane.io/v1beta1", "ProviderConfig", managed=False, readiness=Readiness.EXISTS
)
#: How long Helm waits for a release's resources (and, on uninstall, for their deletion).
#: provider-helm's default is 5m, too short for a first install whose pods wait for nodes
#: the cluster autoscaler is still adding.
RELEASE_WAIT_TIMEOUT = "15m"
#: Failed installs/upgrades provider-helm retries (uninstall or roll back, then deploy again).
#: Without a limit it never retries a failed release whose values didn't change.
RELEASE_ROLLBACK_LIMIT = 5


def add_cluster_provider_configs(
    comp: Composition,
    name: str,
    *,
    secret_name: str,
    secret_namespace: str,
    identity: Mapping[str, Any] | None = None,
    uses: Iterable[str] = (),
    reasons: Mapping[str, str] | None = None,
) -> tuple[str, str]:
    """Helm and Kubernetes ProviderConfigs for a composed cluster; returns their names."""
    credentials = {
        "source": "Secret",
        "secretRef": {"namespace": secret_namespace, "name": secret_name, "key": "kubeconfig"},
    }
    spec: dict[str, Any] = {"credentials": credentials}
    if identity:
        spec["identity"] = dict(identity)
    needed = list(uses)
    helm = comp.emit(f"{name}-helm", HELM_PROVIDER_CONFIG.new(**spec), uses=needed, reasons=reasons)
    kube = comp.emit(
        f"{name}-kubernetes", KUBERNETES_PROVIDER_CONFIG.new(**spec), uses=needed, reasons=reasons
    )
    return helm["metadata"]["name"], kube["metadata"]["name"]


def add_helm_release(
    comp: Composition,
    name: str,
    *,
    chart: str,
    repository: str,
    version: str,
    namespace: str,
    values: Mapping[str, Any],
    provider_config: str,
    uses: Iterable[str] = (),
    reasons: Mapping[str, str] | None = None,
) -> None:
    """A Helm release installed through ``provider_config``, waited on and retried.

    ``wait`` with ``waitTimeout``: provider-helm hands both to Helm's install, upgrade,
    rollback *and uninstall* actions (``pkg/clients/helm/client.go``, ``NewClient``), so a
    release is Ready only once its resources are, and on deletion it is gone only once its
    resources are (a LoadBalancer Service keeps its cleanup finalizer until the cloud load
    balancer is deleted). ``rollbackLimit``: provider-helm retries a failed release only when
    it is set (``shouldRollBack`` in ``pkg/controller/cluster/release/release.go``: a failed
    first revision is uninstalled and installed again, a later one rolled back); without it
    a release that failed once (hooks with no node to run on) stays failed for good.
    """
    body = HELM_RELEASE.new(
        {
            "chart": {"name": chart, "repository": repository, "version": version},
            "namespace": namespace,
            "values": dict(values),
            "wait": True,
            "waitTimeout": RELEASE_WAIT_TIMEOUT,
        },
        rollbackLimit=RELEASE_ROLLBACK_LIMIT,
    )
    comp.emit(name, body, uses=uses, reasons=reasons, provider_config=provider_config)


class ObjectReadiness:
    """How an Object's readiness is derived (provider-kubernetes ``spec.readiness``).

    provider-kubernetes' own default is ``SuccessfulCreate``: Ready as soon as the API server
    accepted the manifest, whatever the object then does. Every other policy reads the live
    object's status, so an Object with one of them watches it (:func:`watches_by_default`).
    """

    SUCCESSFUL_CREATE: ClassVar[dict[str, str]] = {"policy": "SuccessfulCreate"}
    #: Ready when the object's own Ready condition is True (or it has no conditions).
    DERIVED: ClassVar[dict[str, str]] = {"policy": "DeriveFromObject"}
    #: Ready when a Deployment reports Available.
    AVAILABLE: ClassVar[dict[str, str]] = {
        "policy": "DeriveFromCelQuery",
        "celQuery": (
            "has(object.status) && has(object.status.conditions) && "
            "object.status.conditions.exists(c, c.type == 'Available' && c.status == 'True')"
        ),
    }

    @staticmethod
    def cel(query: str) -> dict[str, str]:
        """Ready when the CEL ``query`` over ``object`` is true."""
        return {"policy": "DeriveFromCelQuery", "celQuery": query}


def watches_by_default(readiness: Mapping[str, str] | None) -> bool:
    """Whether an Object with this ``spec.readiness`` should watch the object it manages.

    Its readiness is then derived from the live object's status (a Job complete, a Deployment
    available, a Shoot's last operation...), and something waits for it: a composer holding
    back what needs it, Crossplane deriving the composite's readiness. Without ``watch``
    provider-kubernetes re-reads the object only at its poll interval (``--poll``, 10 minutes
    by default), so each such step could take up to 10 minutes. With ``spec.watch: true`` and
    the provider's ``--enable-watches`` (examples/install/10-providers.yaml), its Observe
    starts an informer for the wrapped kind on the Object's cluster (provider-kubernetes
    ``internal/controller/cluster/object/object.go``: ``shouldWatch`` then
    ``WatchResources``, ``informers.go``), and every change of that object, its status
    included, requeues the Objects that manage it (``indexes.go``,
    ``enqueueObjectsForReferences``, only Objects with ``spec.watch``), within seconds.

    ``SuccessfulCreate`` (the provider's default, also when no readiness is given) does not
    read the object after creation: nothing waits on its status, and drift is repaired at the
    next poll, so no informer is opened for it.
    """
    return (readiness or {}).get("policy", ObjectReadiness.SUCCESSFUL_CREATE["policy"]) != (
        ObjectReadiness.SUCCESSFUL_CREATE["policy"]
    )


def secret_env(name: str, secret: str, key: str) -> dict[str, Any]:
    """A container env var read from ``key`` of Secret ``secret`` by the kubelet: the value
    never passes through the function."""
    return {"name": name, "valueFrom": {"secretKeyRef": {"name": secret, "key": key}}}


#: Management policies of an Object created once and then only observed and deleted:
#: without ``Update`` the managed reconciler never patches it (provider-kubernetes reports it
#: up to date or not, crossplane-runtime skips the update), so a desired state that changed
#: after creation is not sent to an object whose fields are immutable.
CREATE_ONLY = ("Observe", "Create", "Delete")
#: Read only: the Object never creates, updates nor deletes the object, it reports it.
OBSERVE_ONLY = ("Observe",)

#: Who manages every Kubernetes object a composite owns (``app.kubernetes.io/managed-by``).
MANAGED_BY = "crossplane"


def workload_labels(
    *,
    name: str | None = None,
    component: str | None = None,
    part_of: str | None = None,
    managed_by: str | None = MANAGED_BY,
) -> dict[str, str]:
    """Kubernetes' recommended ``app.kubernetes.io`` labels, the one scheme every module uses.

    Each given value becomes its label. A selector passes only ``name`` (and
    ``managed_by=None``): selectors are immutable, so they carry only what never changes.
    """
    given = {"name": name, "component": component, "part-of": part_of, "managed-by": managed_by}
    return {f"app.kubernetes.io/{key}": value for key, value in given.items() if value}


def app_labels(comp: Composition, component: str) -> dict[str, str]:
    """The recommended labels of an object this composite owns: part of the composite."""
    return workload_labels(component=component, part_of=comp.name)


def add_object(
    comp: Composition,
    name: str,
    manifest: Mapping[str, Any],
    *,
    provider_config: str | None = None,
    readiness: Mapping[str, str] | None = None,
    watch: bool | None = None,
    orphan: bool = False,
    create_only: bool = False,
    observe_only: bool = False,
    component: str | None = None,
    resource_name: str | None = None,
    uses: Iterable[str] = (),
    reasons: Mapping[str, str] | None = None,
    references: Sequence[Mapping[str, Any]] = (),
) -> dict[str, Any]:
    """``manifest`` applied through provider-kubernetes as the Object ``name``; returns it.

    * ``readiness``: an :class:`ObjectReadiness`; default the wrapped kind's registered
      ``object_readiness``, else provider-kubernetes' ``SuccessfulCreate``.
    * ``watch``: the provider watches the live object, so status follows it within seconds
      instead of at the next poll. Default (None): :func:`watches_by_default` of the chosen
      readiness, i.e. exactly the Objects whose readiness is derived from the live object's
      status. Pass True for an Object whose live object a composer reads although its
      readiness does not (or to repair drift at once), False to never watch.
    * ``orphan``: deleting the Object leaves the object in the cluster (shared objects).
    * ``create_only``: created once, never updated (:data:`CREATE_ONLY` management
      policies): for objects whose fields are immutable once created (a Job's pod template),
      where any later change would be an update the API server refuses on every reconcile.
    * ``observe_only``: only read (:data:`OBSERVE_ONLY`): an object someone else owns, whose
      live state a composer checks (its readiness says what is checked).
    * ``component``: add :func:`app_labels` under the manifest's own labels.
    * ``resource_name``: the Object's ``metadata.name`` when not the composite-derived one.
    * ``provider_config``: default the one rule of
      :meth:`fnplatform.composition.Composition.provider_config` (``kubernetes``).
    * ``references``: the Object's ``spec.references``: what provider-kubernetes patches into
      the manifest as it applies it (``patchesFrom`` another object's field, a Secret's
      ``data``), so values the function must never see still reach the object.

    A wrapped kind registered ``stateful`` makes the Object stateful (see :mod:`guard`).
    """
    wrapped = dict(manifest)
    if component is not None:
        metadata = dict(wrapped.get("metadata") or {})
        metadata["labels"] = {**app_labels(comp, component), **(metadata.get("labels") or {})}
        wrapped["metadata"] = metadata
    body = OBJECT.new({"manifest": wrapped})
    if resource_name is not None:
        body["metadata"] = {"name": resource_name}
    traits = wrapped_kind(body)
    chosen = readiness or (
        dict(traits.object_readiness) if traits and traits.object_readiness else None
    )
    if chosen:
        body["spec"]["readiness"] = dict(chosen)
    if watches_by_default(chosen) if watch is None else watch:
        body["spec"]["watch"] = True
    if orphan:
        body["spec"]["deletionPolicy"] = "Orphan"
    if create_only:
        body["spec"]["managementPolicies"] = list(CREATE_ONLY)
    if observe_only:
        body["spec"]["managementPolicies"] = list(OBSERVE_ONLY)
    if references:
        body["spec"]["references"] = [dict(reference) for reference in references]
    return comp.emit(name, body, uses=uses, reasons=reasons, provider_config=provider_config)
