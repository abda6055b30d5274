"""GCP network: a custom-mode VPC, one regional subnetwork carrying the GKE secondary ranges,
and (for private clusters) a Cloud Router with Cloud NAT, so nodes without public IPs still
reach the internet (image pulls, Helm chart repositories, ACME)."""

from __future__ import annotations

from typing import Any

from fnplatform.clouds.gcp import kinds
from fnplatform.clouds.gcp.common import external_name, project, subnet_name
from fnplatform.composition import Composition
from fnplatform.library.network import NetworkSpec, add_network, internal_load_balancer

#: Names of the subnetwork's secondary ranges; the GKE cluster's ipAllocationPolicy uses them.
PODS_RANGE, SERVICES_RANGE = "pods", "services"
#: Which of the subnet's ranges Cloud NAT serves: the primary one and the named secondaries.
NAT_SOURCE_RANGES = ("PRIMARY_IP_RANGE", "LIST_OF_SECONDARY_IP_RANGES")


@add_network.on("gcp")
def network(
    comp: Composition,
    name: str,
    spec: NetworkSpec,
) -> None:
    """The VPC as ``name``; subnetwork ``<name>-subnet``; router and NAT for private
    networks with egress.

    The helpers point at the VPC (and each other) through ``*Ref`` fields, which the provider
    resolves itself, so all of them are created in the same pass instead of one per pass.
    """
    body = kinds.NETWORK.new(
        {
            "project": project(comp),
            # Custom mode: one subnet per region we choose, never the auto /20 per region.
            "autoCreateSubnetworks": False,
            "routingMode": "REGIONAL",
            "description": f"Network of {comp.name}",
        }
    )
    comp.emit(name, body, external_name=external_name(comp, name))
    _subnetwork(comp, name, spec)
    if spec.private and spec.egress_nat:
        _router_and_nat(comp, name, spec)


def _subnetwork(comp: Composition, network_name: str, spec: NetworkSpec) -> None:
    """The nodes' subnet, with the pod and service ranges VPC-native GKE allocates from."""
    subnet = subnet_name(network_name)
    secondary = _secondary_ranges(spec)
    body = kinds.SUBNETWORK.new(
        {
            "project": project(comp),
            "region": spec.region or comp.region,  # a failover site names its own
            "networkRef": comp.ref(network_name),
            "ipCidrRange": spec.subnet_cidr,
            **({"secondaryIpRange": secondary} if secondary else {}),
            # Private nodes reach Google APIs (Artifact Registry, logging) without NAT.
            "privateIpGoogleAccess": True,
            "logConfig": {
                "aggregationInterval": "INTERVAL_5_MIN",
                "flowSampling": 0.5,
                "metadata": "INCLUDE_ALL_METADATA",
            },
        }
    )
    comp.emit(subnet, body, external_name=external_name(comp, subnet))


def _nat_ranges(comp: Composition, subnet: str, spec: NetworkSpec) -> dict[str, Any]:
    """Which of the subnet's ranges Cloud NAT serves.

    Nodes (primary range) and, on Kubernetes networks, pods (their alias range, used as the
    source when traffic isn't masqueraded to the node); ClusterIP services never leave the
    node, so their range gets no NAT.
    """
    if not spec.pods_cidr:
        return {"nameRef": comp.ref(subnet), "sourceIpRangesToNat": ["PRIMARY_IP_RANGE"]}
    return {
        "nameRef": comp.ref(subnet),
        "sourceIpRangesToNat": list(NAT_SOURCE_RANGES),
        "secondaryIpRangeNames": [PODS_RANGE],
    }


def _secondary_ranges(spec: NetworkSpec) -> list[dict[str, str]]:
    """The pods and services ranges, those that are asked for (Kubernetes networks only)."""
    ranges = ((PODS_RANGE, spec.pods_cidr), (SERVICES_RANGE, spec.services_cidr))
    return [{"rangeName": name, "ipCidrRange": cidr} for name, cidr in ranges if cidr]


def _router_and_nat(comp: Composition, network_name: str, spec: NetworkSpec) -> None:
    """Cloud Router and Cloud NAT for the subnet's primary and pod ranges."""
    router, nat, subnet = f"{network_name}-router", f"{network_name}-nat", subnet_name(network_name)
    comp.emit(
        router,
        kinds.ROUTER.new(
            {
                "project": project(comp),
                "region": spec.region or comp.region,
                "networkRef": comp.ref(network_name),
            }
        ),
        external_name=external_name(comp, router),
    )
    comp.emit(
        nat,
        kinds.ROUTER_NAT.new(
            {
                "project": project(comp),
                "region": spec.region or comp.region,
                "routerRef": comp.ref(router),
                "natIpAllocateOption": "AUTO_ONLY",
                "sourceSubnetworkIpRangesToNat": "LIST_OF_SUBNETWORKS",
                "subnetwork": [_nat_ranges(comp, subnet, spec)],
                "logConfig": {"enable": True, "filter": "ERRORS_ONLY"},
            }
        ),
        external_name=external_name(comp, nat),
    )


INTERNAL_LB_ANNOTATION = "networking.gke.io/load-balancer-type"


@internal_load_balancer.on("gcp")
def gcp_internal_load_balancer(comp: Composition) -> dict[str, str]:
    """A GKE Service of type LoadBalancer becomes an internal passthrough Network LB."""
    return {INTERNAL_LB_ANNOTATION: "Internal"}
