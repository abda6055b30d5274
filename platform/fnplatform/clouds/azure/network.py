"""Azure network: a VNet with one node subnet and, for private clusters, NAT egress resources.

AKS runs Azure CNI *overlay*: pods get addresses from the pods range, outside the VNet, so the
VNet only needs room for nodes. The pods and services ranges must therefore not overlap the
node subnet (AKS refuses them only after a long provisioning attempt; we refuse them at once).

Egress of private clusters: a Standard ``PublicIP`` and a ``NATGateway`` are emitted, but the
kinds that attach them (``NATGatewayPublicIPAssociation``, ``SubnetNATGatewayAssociation``) are
not in the pinned provider schemas, so they cannot be wired to the subnet from here. AKS
therefore keeps ``outboundType: loadBalancer`` (its own Standard load balancer's outbound
rules); switching to ``userAssignedNATGateway`` needs those association kinds first.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping
from typing import Any

from fnplatform.clouds.azure.common import (
    NAT_GATEWAY,
    PUBLIC_IP,
    SUBNET,
    VIRTUAL_NETWORK,
    resource_group,
    subnet_name,
)
from fnplatform.composition import Composition
from fnplatform.errors import InputError
from fnplatform.library.registry import provides
from fnplatform.library.specs import NetworkSpec

Network = ipaddress.IPv4Network | ipaddress.IPv6Network

_RANGE_FIELDS = {
    "subnet_cidr": "environment.network.subnetCidr",
    "pods_cidr": "environment.network.podsCidr",
    "services_cidr": "environment.network.servicesCidr",
}


@provides("network", "azure")
def network(
    comp: Composition,
    name: str,
    spec: NetworkSpec,
    *,
    uses: tuple[str, ...],
    template: Mapping[str, Any] | None,
) -> None:
    """VNet ``name``, its node subnet ``<name>-nodes`` and, when private, NAT egress resources."""
    _check_ranges(spec)
    group = resource_group(comp)
    comp.emit(
        name,
        VIRTUAL_NETWORK.new(
            {
                "location": spec.region,
                "resourceGroupName": group,
                "addressSpace": [spec.subnet_cidr],
            }
        ),
        uses=uses,
        template=template,
    )
    comp.emit(subnet_name(name), _subnet(comp, name, group, spec))
    if spec.private:
        _nat_egress(comp, name, group, spec.region)


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


def _nat_egress(comp: Composition, network_name: str, group: str, region: str) -> None:
    """A static Standard public IP and a NAT gateway for the private network's egress."""
    comp.emit(
        f"{network_name}-nat-ip",
        PUBLIC_IP.new(
            {
                "location": region,
                "resourceGroupName": group,
                "allocationMethod": "Static",
                "sku": "Standard",
            }
        ),
    )
    comp.emit(
        f"{network_name}-nat",
        NAT_GATEWAY.new(
            {
                "location": region,
                "resourceGroupName": group,
                "skuName": "Standard",
                "idleTimeoutInMinutes": 4,
            }
        ),
    )


def _parse_range(field: str, value: str) -> Network:
    try:
        return ipaddress.ip_network(value, strict=True)
    except ValueError as err:
        raise InputError(_RANGE_FIELDS[field], f"not a CIDR range ({err})") from None


def _check_ranges(spec: NetworkSpec) -> None:
    """Reject ranges AKS overlay would reject: every one valid, none overlapping another."""
    ranges = {field: _parse_range(field, getattr(spec, field)) for field in _RANGE_FIELDS}
    checked = sorted(ranges)
    for index, first in enumerate(checked):
        for second in checked[index + 1 :]:
            a, b = ranges[first], ranges[second]
            if a.version == b.version and a.overlaps(b):
                raise InputError(
                    _RANGE_FIELDS[first],
                    f"{a} overlaps {_RANGE_FIELDS[second]} {b}; AKS needs separate ranges",
                )
    services = ranges["services_cidr"]
    if services.num_addresses < 16:
        raise InputError(_RANGE_FIELDS["services_cidr"], "too small: needs at least a /28")


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
