"""Kinds that act inside a Kubernetes cluster: provider-kubernetes and provider-helm.

Cloud-agnostic: whatever cloud made the cluster, Helm and Kubernetes ProviderConfigs read its
kubeconfig from the connection secret, and releases and objects go through them.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from fnplatform.composition import Composition
from fnplatform.kinds import Readiness, register

OBJECT = register("kubernetes.crossplane.io/v1alpha2", "Object")
KUBERNETES_PROVIDER_CONFIG = register(
    "kubernetes.crossplane.io/v1alpha1", "ProviderConfig", managed=False,
    readiness=Readiness.EXISTS,
)
HELM_RELEASE = register("helm.crossplane.io/v1beta1", "Release")
HELM_PROVIDER_CONFIG = register(
    "helm.crossplane.io/v1beta1", "ProviderConfig", managed=False, readiness=Readiness.EXISTS
)


def add_cluster_provider_configs(
    comp: Composition,
    name: str,
    *,
    secret_name: str,
    secret_namespace: str,
    identity: Mapping[str, Any] | None = None,
    uses: Iterable[str] = (),
) -> tuple[str, str]:
    """Helm and Kubernetes ProviderConfigs for a composed cluster; returns their names."""
    credentials = {
        "source": "Secret",
        "secretRef": {"namespace": secret_namespace, "name": secret_name, "key": "kubeconfig"},
    }
    spec: dict[str, Any] = {"credentials": credentials}
    if identity:
        spec["identity"] = dict(identity)
    helm = comp.emit(f"{name}-helm", HELM_PROVIDER_CONFIG.new(**spec), uses=uses)
    kube = comp.emit(f"{name}-kubernetes", KUBERNETES_PROVIDER_CONFIG.new(**spec), uses=uses)
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
) -> None:
    """A Helm release installed through ``provider_config``."""
    body = HELM_RELEASE.new(
        {
            "chart": {"name": chart, "repository": repository, "version": version},
            "namespace": namespace,
            "values": dict(values),
        }
    )
    comp.emit(name, body, uses=uses, provider_config=provider_config)


def add_kubernetes_object(
    comp: Composition,
    name: str,
    manifest: Mapping[str, Any],
    *,
    provider_config: str,
    uses: Iterable[str] = (),
    readiness: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """A Kubernetes manifest applied through provider-kubernetes; returns the Object body."""
    body = OBJECT.new({"manifest": dict(manifest)})
    if readiness:
        body["spec"]["readiness"] = dict(readiness)
    return comp.emit(name, body, uses=uses, provider_config=provider_config)
