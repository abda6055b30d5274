"""A managed Kubernetes cluster and its node pools: specs, calls and values.

A cloud registers its builder with ``@add_<capability>.on("<cloud>")`` and its answers with
``@<value>.on("<cloud>")`` in ``clouds/<cloud>/cluster.py``, the home each object declares.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

from fnplatform.library.capability import Capability, Document, Flag, Value
from fnplatform.library.rules import NameRule


@dataclass(frozen=True)
class ClusterSpec:
    """A managed Kubernetes control plane."""

    network: str  # composition name of the network
    private: bool
    connection_secret: str  # Secret name (in the provider namespace) for the kubeconfig
    connection_namespace: str = "crossplane-system"
    version: str | None = None
    pods_cidr: str | None = None  # pod range, for clouds whose cluster (not network) owns it
    #: The nodes' own range (the network's subnet): where a cloud lets API-server clients in
    #: when the platform names no allowlist (GKE's authorized networks).
    node_cidr: str | None = None
    services_cidr: str | None = None  # Service range the control plane allocates from
    default_machine_type: str | None = None  # for pools the cloud creates with the cluster
    #: The cloud's name for the cluster (its external name); None: derived from the composite.
    cluster_name: str | None = None
    #: The network's NetworkSpec.private (nodes in private subnets) and .egress_nat (a NAT
    #: gateway for their egress), so a builder needs not look at what the network emitted.
    private_network: bool = False
    network_nat: bool = False


@dataclass(frozen=True)
class Taint:
    """A Kubernetes node taint; ``effect`` as Kubernetes spells it (``NoSchedule``...)."""

    key: str
    value: str
    effect: str

    @property
    def api_effect(self) -> str:
        """The effect as the GKE and EKS APIs spell it: ``NoSchedule`` -> ``NO_SCHEDULE``."""
        return "".join(f"_{c}" if c.isupper() else c for c in self.effect).lstrip("_").upper()


@dataclass(frozen=True)
class NodePoolSpec:
    """A group of worker nodes.

    ``disk_type`` is the cloud's own name (GKE ``pd-balanced``, EBS ``gp3``, AKS ``Managed``):
    each builder checks it. ``zones`` are the cloud's zone names (GKE ``europe-west1-b``, AWS
    ``eu-west-1a``, AKS ``1``). Spot capacity, disk and zones can't change on an existing pool
    on every cloud: a builder refuses what would replace the pool (a SpecError naming it).
    """

    cluster: str  # composition name of the cluster
    network: str  # composition name of the network
    pool: str  # the user's pool name
    machine_type: str
    min_nodes: int
    max_nodes: int
    disk_size_gb: int | None = None
    disk_type: str | None = None
    labels: Mapping[str, str] = field(default_factory=dict)
    taints: tuple[Taint, ...] = ()
    spot: bool = False
    zones: tuple[str, ...] = ()
    #: The cluster's ClusterSpec.cluster_name (None: derived), for clouds whose pools name it.
    cluster_name: str | None = None
    #: The cluster's ClusterSpec.version (None: the cloud picks), for pools that state it.
    version: str | None = None
    #: The network's NetworkSpec.private: the nodes live in its private subnets.
    private_network: bool = False


add_cluster = Capability[ClusterSpec](
    "cluster",
    "A managed Kubernetes cluster writing its kubeconfig to spec.connection_secret.",
    home="cluster",
)


add_node_pool = Capability[NodePoolSpec](
    "node_pool",
    "A node pool of the cluster spec.cluster.",
    home="cluster",
)


cluster_credentials = Value[[str, ClusterSpec], Document](
    "cluster_credentials",
    "The ProviderConfig ``identity`` the Helm and Kubernetes providers need on this cloud.",
    home="cluster",
)


kubeconfig_source = Value[[str], str](
    "kubeconfig_source",
    "The composed resource whose connection Secret holds the cluster's kubeconfig.",
    home="cluster",
)


cluster_access = Value[[str], list[str]](
    "cluster_access",
    "Composed resources the providers' access needs besides the kubeconfig (RBAC grants).",
    home="cluster",
)


cluster_status = Value[[str], None](
    "cluster_status",
    "Copy the observed cluster's endpoint, CA, name and issuer to status.",
    home="cluster",
)


cluster_name_rule = Value[[], NameRule](
    "cluster_name_rule",
    "What the cloud accepts as a managed Kubernetes cluster name.",
    home="cluster",
)


running_version = Value[[str], str | None](
    "running_version",
    "The Kubernetes version the cloud reports for the running cluster.",
    home="cluster",
)


#: The cluster composite's plane (its ``planeId`` label) names the scope the cluster goes in
#: (the GCP project, the Azure resource group); a cloud without the flag scopes clusters by
#: its provider's credentials (the AWS account).
cluster_scope_from_plane = Flag(
    "cluster_scope_from_plane",
    "The cluster composite's plane id names its scope (project, resource group).",
    home="cluster",
)


autoscaler_values = Value[[str, ClusterSpec], Document](
    "autoscaler_values",
    "cluster-autoscaler values, on clouds whose pools do not resize themselves.",
    home="cluster",
)
