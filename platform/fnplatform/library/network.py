"""A network: its spec, the call composing it, and the values each cloud answers about it.

A cloud registers its builder with ``@add_<capability>.on("<cloud>")`` and its answers with
``@<value>.on("<cloud>")`` in ``clouds/<cloud>/network.py``, the home each object declares.
"""

from __future__ import annotations

from dataclasses import dataclass

from fnplatform.library.capability import Capability, Labels, Value


@dataclass(frozen=True)
class NetworkSpec:
    """A network with one primary range; Kubernetes ranges and tags only when asked.

    ``pods_cidr``/``services_cidr`` are the secondary ranges a VPC-native GKE or an AKS overlay
    cluster allocates from (None: no secondary ranges). ``private`` puts workloads on subnets
    without public IPs; ``nat`` gives those egress (None: NAT exactly when private, the cluster
    module's choice). ``kubernetes`` adds the subnet tags Kubernetes load balancers are placed
    by (AWS ``kubernetes.io/role/elb``).
    """

    subnet_cidr: str
    pods_cidr: str | None = None
    services_cidr: str | None = None
    private: bool = False
    nat: bool | None = None
    kubernetes: bool = False
    #: None: the placed region. A second site's network (a failover region) names its own.
    region: str | None = None

    @property
    def egress_nat(self) -> bool:
        """Whether private subnets get a NAT for egress."""
        return self.private if self.nat is None else self.nat


add_network = Capability[NetworkSpec](
    "network",
    "A network, its subnets and (when private) router and NAT.",
    home="network",
)


internal_load_balancer = Value[[], Labels](
    "internal_load_balancer",
    "Annotations that make a LoadBalancer Service internal.",
    home="network",
)
