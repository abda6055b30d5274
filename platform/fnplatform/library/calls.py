"""Layer 1: the agnostic calls composers use. Each dispatches to the composite's cloud."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from fnplatform.composition import Composition
from fnplatform.library import registry
from fnplatform.library.specs import (
    ClusterSpec,
    DnsZoneSpec,
    NetworkSpec,
    NodePoolSpec,
    QueueSpec,
    WorkloadIdentitySpec,
)


def _add(
    capability: str,
    comp: Composition,
    name: str,
    spec: object,
    *,
    uses: Iterable[str],
    template: Mapping[str, Any] | None,
    cloud: str | None,
) -> None:
    target = cloud or comp.cloud
    build = registry.builder(capability, target)
    build(comp, name, spec, uses=tuple(uses), template=template)
    for extra in registry.extras(capability, str(target)):
        extra(comp, name, spec)


def add_network(
    comp: Composition, name: str, spec: NetworkSpec, *, uses: Iterable[str] = (),
    template: Mapping[str, Any] | None = None, cloud: str | None = None,
) -> None:
    """A network, its subnets and (when private) router and NAT; the main resource is ``name``."""
    _add("network", comp, name, spec, uses=uses, template=template, cloud=cloud)


def add_cluster(
    comp: Composition, name: str, spec: ClusterSpec, *, uses: Iterable[str] = (),
    template: Mapping[str, Any] | None = None, cloud: str | None = None,
) -> None:
    """A managed Kubernetes cluster writing its kubeconfig to ``spec.connection_secret``."""
    _add("cluster", comp, name, spec, uses=uses, template=template, cloud=cloud)


def add_node_pool(
    comp: Composition, name: str, spec: NodePoolSpec, *, uses: Iterable[str] = (),
    template: Mapping[str, Any] | None = None, cloud: str | None = None,
) -> None:
    """A node pool of the cluster ``spec.cluster``."""
    _add("node_pool", comp, name, spec, uses=uses, template=template, cloud=cloud)


def add_dns_zone(
    comp: Composition, name: str, spec: DnsZoneSpec, *, uses: Iterable[str] = (),
    template: Mapping[str, Any] | None = None, cloud: str | None = None,
) -> None:
    """A public or private DNS zone."""
    _add("dns_zone", comp, name, spec, uses=uses, template=template, cloud=cloud)


def add_workload_identity(
    comp: Composition, name: str, spec: WorkloadIdentitySpec, *, uses: Iterable[str] = (),
    template: Mapping[str, Any] | None = None, cloud: str | None = None,
) -> None:
    """A cloud identity bound to a Kubernetes service account."""
    _add("workload_identity", comp, name, spec, uses=uses, template=template, cloud=cloud)


def add_queue(
    comp: Composition, name: str, spec: QueueSpec, *, uses: Iterable[str] = (),
    template: Mapping[str, Any] | None = None, cloud: str | None = None,
) -> None:
    """A message queue."""
    _add("queue", comp, name, spec, uses=uses, template=template, cloud=cloud)


def cluster_credentials(comp: Composition, cluster: str, spec: ClusterSpec) -> dict[str, Any]:
    """The ProviderConfig ``identity`` a Helm or Kubernetes provider needs on this cloud."""
    result: dict[str, Any] = cloud_value(comp, "cluster_credentials", cluster, spec)
    return result


def cloud_value(comp: Composition, capability: str, *args: Any) -> Any:
    """A cloud-specific value (annotations, credentials) computed by the cloud module."""
    return registry.builder(capability, comp.cloud)(comp, *args)
