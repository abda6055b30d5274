"""Layer 1: the agnostic calls composers use. Each dispatches to the placed cloud's builder.

Every call has one shape, ``add_<capability>(comp, name, spec, *, uses=(), fields=None,
cloud=None)``, made once by :class:`Capability`:

* ``spec`` is a frozen dataclass from :mod:`fnplatform.library.specs` that knows no cloud;
* ``uses`` is attached here to the main resource ``name`` after the builder ran (held back
  until those exist, Usages order deletion), so builders don't thread it through;
* ``fields`` maps spec attributes to the user's field paths: a builder's
  :class:`~fnplatform.errors.SpecError` about ``cidr`` becomes an InputError on, say,
  ``spec.network.cidr``;
* ``cloud`` overrides the composite's placement for one call (an SQS queue for an actor
  whose composite has no cloud of its own).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Any, Generic, TypeVar

from fnplatform.composition import Composition
from fnplatform.errors import InputError, SpecError
from fnplatform.library import registry
from fnplatform.library.specs import (
    BucketSpec,
    CdnSpec,
    ClusterSpec,
    DatabaseSpec,
    DnsZoneSpec,
    FailoverDnsSpec,
    IngressRulesSpec,
    KeySpec,
    NetworkSpec,
    NodePoolSpec,
    QueueSpec,
    ResourceGroupSpec,
    WorkloadIdentitySpec,
)

SpecT = TypeVar("SpecT")


@dataclass(frozen=True)
class Capability(Generic[SpecT]):
    """An agnostic call for ``name``: ``add_network = Capability[NetworkSpec]("network")``."""

    name: str
    doc: str = ""

    def __call__(
        self,
        comp: Composition,
        name: str,
        spec: SpecT,
        *,
        uses: Iterable[str] = (),
        fields: Mapping[str, str] | None = None,
        cloud: str | None = None,
    ) -> None:
        target = cloud or comp.cloud
        build = registry.builder(self.name, target, comp.placement.cloud.field)
        try:
            build(comp, name, spec)
            for extra in registry.extras(self.name, str(target)):
                extra(comp, name, spec)
        except SpecError as err:
            field = (fields or {}).get(err.attribute, f"{self.name}.{err.attribute}")
            raise InputError(field, err.reason) from None
        needed = tuple(uses)
        if needed and name in comp.desired:
            emitted = comp.desired[name]
            comp.desired[name] = replace(emitted, uses=(*emitted.uses, *needed))


add_network = Capability[NetworkSpec](
    "network", "A network, its subnets and (when private) router and NAT."
)
add_cluster = Capability[ClusterSpec](
    "cluster", "A managed Kubernetes cluster writing its kubeconfig to spec.connection_secret."
)
add_node_pool = Capability[NodePoolSpec]("node_pool", "A node pool of the cluster spec.cluster.")
add_dns_zone = Capability[DnsZoneSpec]("dns_zone", "A public or private DNS zone.")
add_workload_identity = Capability[WorkloadIdentitySpec](
    "workload_identity", "A cloud identity bound to a Kubernetes service account."
)
add_queue = Capability[QueueSpec]("queue", "A message queue.")
add_key = Capability[KeySpec](
    "key", "A customer-managed key with rotation, and the grants its cloud's storage needs."
)
add_bucket = Capability[BucketSpec](
    "bucket", "A never-public, versioned, TLS-only bucket encrypted with a composed key."
)
add_ingress_rules = Capability[IngressRulesSpec](
    "ingress_rules", "Inbound allow rules on a network, one resource per (protocol, ports, source)."
)
add_failover_dns = Capability[FailoverDnsSpec](
    "failover_dns", "A DNS name that moves from primary to secondary when a health check fails."
)
add_resource_group = Capability[ResourceGroupSpec](
    "resource_group", "A resource group the composite owns (clouds that have them)."
)
add_database = Capability[DatabaseSpec](
    "database", "A private PostgreSQL server with a provider-generated password."
)
add_cdn = Capability[CdnSpec]("cdn", "A CDN in front of a private bucket, one cache path each.")


def cluster_credentials(comp: Composition, cluster: str, spec: ClusterSpec) -> dict[str, Any]:
    """The ProviderConfig ``identity`` a Helm or Kubernetes provider needs on this cloud."""
    result: dict[str, Any] = cloud_value(comp, "cluster_credentials", cluster, spec)
    return result


def cloud_value(
    comp: Composition,
    capability: str,
    *args: Any,
    cloud: str | None = None,
    fields: Mapping[str, str] | None = None,
) -> Any:
    """A cloud-specific value (annotations, credentials, names) computed by the cloud module.

    ``fields`` maps the value's SpecError attributes to user fields, as for resource calls.
    """
    target = cloud or comp.cloud
    value_of = registry.builder(capability, target, comp.placement.cloud.field)
    try:
        return value_of(comp, *args)
    except SpecError as err:
        field = (fields or {}).get(err.attribute, f"{capability}.{err.attribute}")
        raise InputError(field, err.reason) from None
