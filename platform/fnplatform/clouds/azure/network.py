"""Azure network: a VNet with one node subnet; egress goes through AKS's own load balancer.

AKS runs Azure CNI *overlay*: pods get addresses from the pods range, outside the VNet, so the
VNet only needs room for nodes. The pods and services ranges must therefore not overlap the
node subnet (AKS refuses them only after a long provisioning attempt; we refuse them at once).

Egress, private clusters included, uses AKS's ``outboundType: loadBalancer``: the outbound
rules of the cluster's Standard load balancer, with a public IP AKS manages; nodes still get no
public IPs. No NAT gateway is composed, because nothing in the pinned provider schemas
(provider-upjet-azure v2.7.0) can attach one: the association kinds
(``SubnetNATGatewayAssociation``, ``NATGatewayPublicIPAssociation``) are absent, the storage
versions of ``Subnet`` (v1beta2) and ``NATGateway`` (v1beta1) have no field naming the other or
a public IP, and AKS's own ``managedNATGateway`` outbound type works only in a VNet AKS creates
itself. An unattached gateway and IP cost money and carry no traffic. Handing AKS a composed
``PublicIP`` as its load balancer's outbound IP
(``networkProfile.loadBalancerProfile.outboundIpAddressIds``) is not done either: the
cluster's identity would need a role on that IP, and there is no role assignment kind in the
schemas to grant it. ``userAssignedNATGateway`` becomes possible once the association kinds are.
"""

from __future__ import annotations

import ipaddress
from typing import Any

from fnplatform.clouds.azure.common import (
    SUBNET,
    VIRTUAL_NETWORK,
    resource_group,
    subnet_name,
)
from fnplatform.composition import Composition
from fnplatform.errors import SpecError
from fnplatform.library.registry import provides
from fnplatform.library.specs import NetworkSpec

Network = ipaddress.IPv4Network | ipaddress.IPv6Network

_RANGE_FIELDS = ("subnet_cidr", "pods_cidr", "services_cidr")


@provides("network", "azure")
def network(
    comp: Composition,
    name: str,
    spec: NetworkSpec,
) -> None:
    """VNet ``name`` and its node subnet ``<name>-nodes`` (no NAT: see the module docstring)."""
    _check_ranges(spec)
    group = resource_group(comp)
    comp.emit(
        name,
        VIRTUAL_NETWORK.new(
            {
                "location": comp.region,
                "resourceGroupName": group,
                "addressSpace": [spec.subnet_cidr],
            }
        ),
    )
    comp.emit(subnet_name(name), _subnet(comp, name, group, spec))


def _subnet(comp: Composition, network_name: str, group: str, spec: NetworkSpec) -> dict[str, Any]:
    """The node subnet. Default outbound access is off: AKS always has an explicit egress path,
    and Azure retires implicit outbound IPs for new subnets anyway."""
    return SUBNET.new(
        {
            "resourceGroupName": group,
            "virtualNetworkNameRef": comp.ref(network_name),
            "addressPrefixes": [spec.subnet_cidr],
            "defaultOutboundAccessEnabled": False,
        }
    )


def _parse_range(field: str, value: str) -> Network:
    try:
        return ipaddress.ip_network(value, strict=True)
    except ValueError as err:
        raise SpecError(field, f"not a CIDR range ({err})") from None


def _check_ranges(spec: NetworkSpec) -> None:
    """Reject ranges AKS overlay would reject: every one valid, none overlapping another."""
    ranges = {field: _parse_range(field, getattr(spec, field)) for field in _RANGE_FIELDS
              if getattr(spec, field) is not None}
    checked = sorted(ranges)
    for index, first in enumerate(checked):
        for second in checked[index + 1 :]:
            a, b = ranges[first], ranges[second]
            if a.version == b.version and a.overlaps(b):
                raise SpecError(
                    first, f"{a} overlaps the {second} range {b}; AKS needs separate ranges"
                )
    services = ranges.get("services_cidr")
    if services is not None and services.num_addresses < 16:
        raise SpecError("services_cidr", "too small: needs at least a /28")


def dns_service_ip(services_cidr: str) -> str:
    """The cluster DNS Service address: the conventional 10th address of the services range."""
    return str(ipaddress.ip_network(services_cidr)[10])


@provides("internal_load_balancer", "azure")
def internal_load_balancer(comp: Composition) -> dict[str, str]:
    """Makes the cloud provider put a LoadBalancer Service on an internal Azure load balancer.

    Its frontend IP comes from the node subnet; health probes need no annotation because
    ingress-nginx uses ``externalTrafficPolicy: Local`` (probed on the health check node port).
    """
    return {"service.beta.kubernetes.io/azure-load-balancer-internal": "true"}
