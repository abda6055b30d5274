"""Azure network: a VNet with one node subnet; a private cluster's subnet egresses via NAT.

AKS runs Azure CNI *overlay*: pods get addresses from the pods range, outside the VNet, so the
VNet only needs room for nodes. The pods and services ranges must therefore not overlap the
node subnet (AKS refuses them only after a long provisioning attempt; we refuse them at once).

Egress. A private Kubernetes network (``spec.private`` and ``spec.kubernetes``, NAT not turned
off) gets a Standard ``NATGateway`` with one Standard static ``PublicIP``, joined by a
``NATGatewayPublicIPAssociation``, and the node subnet is associated with it by a
``SubnetNATGatewayAssociation``. Its AKS cluster then uses ``outboundType:
userAssignedNATGateway`` (:mod:`fnplatform.clouds.azure.cluster`): nodes leave through one
stable address the user owns, with up to 64,512 flows per IP instead of the load balancer's
SNAT port allocation, and no outbound rules on the cluster's load balancer. AKS requires the
gateway to be associated with the node subnet *before* the cluster is created ("Create a
managed or user-assigned NAT gateway", learn.microsoft.com/azure/aks/nat-gateway; AKS's own
``managedNATGateway`` works only in a VNet AKS creates itself), which is why the associations
are their own resources here and the cluster waits for the subnet's one to be Ready.

* No zones on the gateway or its IP: a zonal NAT gateway serves one zone only, and the node
  pools are not pinned to zones; "no zone" lets Azure place it (the AKS guide's own setup).
* ``idleTimeoutInMinutes: 4``, Azure's default, stated so the provider sees no drift: a short
  timeout frees SNAT ports of idle flows sooner; long-lived clients keep alive with TCP
  keepalives (Kubernetes clients do).
* The associations reference the gateway, IP and subnet (``*Ref``) and ``use`` them, so each
  is deleted before what it joins (Azure refuses to delete a gateway still attached).
* An adopted (imported) VNet gets none of it: it keeps its own egress, and nothing is
  created inside imported resources (:mod:`fnplatform.rules.inside_imported`).

Public clusters (and non-Kubernetes networks) keep AKS's ``outboundType: loadBalancer``: the
outbound rules of the cluster's Standard load balancer with a public IP AKS manages.
"""

from __future__ import annotations

import ipaddress
from typing import Any

from fnplatform.api.validation import ip_network
from fnplatform.clouds.azure.common import (
    nat_gateway_name,
    nat_ip_association_name,
    nat_ip_name,
    resource_group,
    subnet_name,
    subnet_nat_association_name,
)
from fnplatform.clouds.azure.kinds import (
    NAT_GATEWAY,
    NAT_GATEWAY_PUBLIC_IP_ASSOCIATION,
    PUBLIC_IP,
    SUBNET,
    SUBNET_NAT_GATEWAY_ASSOCIATION,
    VIRTUAL_NETWORK,
)
from fnplatform.composition import Composition
from fnplatform.errors import SpecError
from fnplatform.library.network import NetworkSpec, add_network, internal_load_balancer

Network = ipaddress.IPv4Network | ipaddress.IPv6Network

_RANGE_FIELDS = ("subnet_cidr", "pods_cidr", "services_cidr")
NAT_IDLE_TIMEOUT_MINUTES = 4  # Azure's default, stated: see the module docstring


@add_network.on("azure")
def network(
    comp: Composition,
    name: str,
    spec: NetworkSpec,
) -> None:
    """VNet ``name``, its node subnet ``<name>-nodes`` and, for a private Kubernetes network,
    the NAT gateway the subnet egresses through (see the module docstring)."""
    _check_ranges(spec)
    group = resource_group(comp)
    comp.emit(
        name,
        VIRTUAL_NETWORK.new(
            {
                "location": spec.region or comp.region,  # a failover site names its own
                "resourceGroupName": group,
                "addressSpace": [spec.subnet_cidr],
            }
        ),
    )
    comp.emit(subnet_name(name), _subnet(comp, name, group, spec))
    if spec.kubernetes and spec.egress_nat and not comp.import_spec.adopts(name):
        # An adopted VNet keeps its own egress.
        _nat_gateway(comp, name, group, spec.region or comp.region)


def _nat_gateway(comp: Composition, network_name: str, group: str, region: str) -> None:
    """A Standard NAT gateway with one static public IP, associated with the node subnet."""
    gateway, address = nat_gateway_name(network_name), nat_ip_name(network_name)
    comp.emit(
        address,
        PUBLIC_IP.new(
            {
                "location": region,
                "resourceGroupName": group,
                "sku": "Standard",
                "allocationMethod": "Static",  # Standard public IPs are static only
            }
        ),
    )
    comp.emit(
        gateway,
        NAT_GATEWAY.new(
            {
                "location": region,
                "resourceGroupName": group,
                "skuName": "Standard",
                "idleTimeoutInMinutes": NAT_IDLE_TIMEOUT_MINUTES,
            }
        ),
    )
    comp.emit(
        nat_ip_association_name(network_name),
        NAT_GATEWAY_PUBLIC_IP_ASSOCIATION.new(
            {
                "natGatewayIdRef": comp.ref(gateway),
                "publicIpAddressIdRef": comp.ref(address),
            }
        ),
        uses=(gateway, address),
    )
    subnet = subnet_name(network_name)
    comp.emit(
        subnet_nat_association_name(network_name),
        SUBNET_NAT_GATEWAY_ASSOCIATION.new(
            {
                "natGatewayIdRef": comp.ref(gateway),
                "subnetIdRef": comp.ref(subnet),
            }
        ),
        uses=(gateway, subnet),
    )


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
        return ip_network(value, strict=True)
    except ValueError as err:
        raise SpecError(field, f"not a CIDR range ({err})") from None


def _check_ranges(spec: NetworkSpec) -> None:
    """Reject ranges AKS overlay would reject: every one valid, none overlapping another."""
    ranges = {
        field: _parse_range(field, getattr(spec, field))
        for field in _RANGE_FIELDS
        if getattr(spec, field) is not None
    }
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
    return str(ip_network(services_cidr)[10])


@internal_load_balancer.on("azure")
def azure_internal_load_balancer(comp: Composition) -> dict[str, str]:
    """Makes the cloud provider put a LoadBalancer Service on an internal Azure load balancer.

    Its frontend IP comes from the node subnet; health probes need no annotation because
    ingress-nginx uses ``externalTrafficPolicy: Local`` (probed on the health check node port).
    """
    return {"service.beta.kubernetes.io/azure-load-balancer-internal": "true"}
