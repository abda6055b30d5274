"""AWS network: a VPC over two availability zones, public subnets behind an Internet gateway,
and (when private) private subnets, with one NAT gateway per zone when they need egress.
Subnets carry the Kubernetes load-balancer role tags only for Kubernetes networks.

Composed names (``<name>`` is the caller's): ``<name>`` (VPC), ``<name>-igw``,
``<name>-public-{a,b}``, ``<name>-public-rt``, ``<name>-public-default``,
``<name>-public-{a,b}-rta``; when private also ``<name>-private-{a,b}``,
``<name>-nat-{a,b}-eip``, ``<name>-nat-{a,b}``, ``<name>-private-{a,b}-rt``,
``<name>-private-{a,b}-default``, ``<name>-private-{a,b}-rta``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from fnplatform.api.validation import ip_network
from fnplatform.clouds.aws.common import name_tag
from fnplatform.clouds.aws.kinds import (
    EIP,
    INTERNET_GATEWAY,
    NAT_GATEWAY,
    ROUTE,
    ROUTE_TABLE,
    ROUTE_TABLE_ASSOCIATION,
    SUBNET,
    VPC,
)
from fnplatform.composition import Composition
from fnplatform.errors import SpecError
from fnplatform.library.network import NetworkSpec, add_network, internal_load_balancer

ZONES = ("a", "b")  # two availability zones: EKS needs control-plane subnets in two
ANYWHERE = "0.0.0.0/0"
ELB_ROLE_TAG = "kubernetes.io/role/elb"
INTERNAL_ELB_ROLE_TAG = "kubernetes.io/role/internal-elb"
MIN_VPC_PREFIX, MAX_VPC_PREFIX = 16, 24  # AWS VPCs are /16../28; four subnets need /24 or larger


def subnet_cidrs(vpc_cidr: str) -> dict[str, str]:
    """Split the VPC range in four fixed quarters: private a, private b, public a, public b.

    The layout never depends on ``private``, so switching a cluster between private and public
    never changes (and so never replaces) an existing subnet.
    """
    try:
        network = ip_network(vpc_cidr)
    except ValueError as err:
        raise SpecError("subnet_cidr", str(err)) from None
    if network.version != 4 or not MIN_VPC_PREFIX <= network.prefixlen <= MAX_VPC_PREFIX:
        raise SpecError(
            "subnet_cidr",
            f"{vpc_cidr} must be an IPv4 range from /{MIN_VPC_PREFIX} to /{MAX_VPC_PREFIX}",
        )
    quarters = [str(q) for q in network.subnets(prefixlen_diff=2)]
    return {
        "private-a": quarters[0],
        "private-b": quarters[1],
        "public-a": quarters[2],
        "public-b": quarters[3],
    }


def node_subnets(network: str, private: bool) -> list[str]:
    """Composition names of the subnets nodes and the control plane live in, in ``network``
    (``private``: its NetworkSpec's).

    Private networks put them in the private subnets (egress through NAT); public ones in the
    public subnets, since without NAT only those reach the Internet.
    """
    return [f"{network}-{'private' if private else 'public'}-{zone}" for zone in ZONES]


def all_subnets(network: str) -> list[str]:
    """Composition names of every subnet :func:`network` may compose in ``network``."""
    return [*node_subnets(network, True), *node_subnets(network, False)]


@add_network.on("aws")
def network(
    comp: Composition,
    name: str,
    spec: NetworkSpec,
) -> None:
    """A VPC over two availability zones: public subnets behind an Internet gateway, and when
    ``spec.private`` private subnets with one NAT gateway per zone (no single-AZ egress)."""
    cidrs = subnet_cidrs(spec.subnet_cidr)
    region = spec.region or comp.region  # a failover site names its own
    vpc = {
        "region": region,
        "cidrBlock": spec.subnet_cidr,
        "enableDnsSupport": True,
        "enableDnsHostnames": True,
        "tags": name_tag(comp, name),
    }
    comp.emit(name, VPC.new(vpc))
    gateway = f"{name}-igw"
    comp.emit(
        gateway,
        INTERNET_GATEWAY.new(
            {"region": region, "vpcIdRef": comp.ref(name), "tags": name_tag(comp, gateway)}
        ),
    )
    public_table = _route_table(comp, f"{name}-public-rt", name, region)
    _default_route(
        comp, f"{name}-public-default", public_table, region, {"gatewayIdRef": comp.ref(gateway)}
    )
    for zone in ZONES:
        subnet = _subnet(
            comp, name, f"public-{zone}", cidrs, region, public=True, kubernetes=spec.kubernetes
        )
        _associate(comp, subnet, public_table, region)
    if spec.private:
        for zone in ZONES:
            _private_zone(
                comp,
                name,
                zone,
                cidrs,
                region=region,
                gateway=gateway if spec.egress_nat else None,
                kubernetes=spec.kubernetes,
            )


def _subnet(
    comp: Composition,
    network_name: str,
    part: str,
    cidrs: Mapping[str, str],
    region: str,
    *,
    public: bool,
    kubernetes: bool,
) -> str:
    name = f"{network_name}-{part}"
    tags = name_tag(comp, name)
    if kubernetes:
        tags[ELB_ROLE_TAG if public else INTERNAL_ELB_ROLE_TAG] = "1"
    comp.emit(
        name,
        SUBNET.new(
            {
                "region": region,
                "vpcIdRef": comp.ref(network_name),
                "cidrBlock": cidrs[part],
                "availabilityZone": f"{region}{part[-1]}",
                "mapPublicIpOnLaunch": public,
                "tags": tags,
            }
        ),
    )
    return name


def _route_table(comp: Composition, name: str, network_name: str, region: str) -> str:
    comp.emit(
        name,
        ROUTE_TABLE.new(
            {"region": region, "vpcIdRef": comp.ref(network_name), "tags": name_tag(comp, name)}
        ),
    )
    return name


def _default_route(
    comp: Composition,
    name: str,
    table: str,
    region: str,
    target: Mapping[str, Any],
    *,
    uses: tuple[str, ...] = (),
) -> None:
    comp.emit(
        name,
        ROUTE.new(
            {
                "region": region,
                "routeTableIdRef": comp.ref(table),
                "destinationCidrBlock": ANYWHERE,
                **target,
            }
        ),
        uses=uses,
    )


def _associate(comp: Composition, subnet: str, table: str, region: str) -> None:
    comp.emit(
        f"{subnet}-rta",
        ROUTE_TABLE_ASSOCIATION.new(
            {"region": region, "subnetIdRef": comp.ref(subnet), "routeTableIdRef": comp.ref(table)}
        ),
    )


def _private_zone(
    comp: Composition,
    network_name: str,
    zone: str,
    cidrs: Mapping[str, str],
    *,
    region: str,
    gateway: str | None,
    kubernetes: bool,
) -> None:
    """Private subnet of ``zone``; with ``gateway``, its own NAT gateway (in the zone's public
    subnet) and a default route through it, else no route out of the VPC."""
    subnet = _subnet(
        comp, network_name, f"private-{zone}", cidrs, region, public=False, kubernetes=kubernetes
    )
    if gateway is None:
        return
    nat = f"{network_name}-nat-{zone}"
    comp.emit(
        f"{nat}-eip",
        EIP.new({"region": region, "domain": "vpc", "tags": name_tag(comp, f"{nat}-eip")}),
    )
    comp.emit(
        nat,
        NAT_GATEWAY.new(
            {
                "region": region,
                "connectivityType": "public",
                "allocationIdRef": comp.ref(f"{nat}-eip"),
                "subnetIdRef": comp.ref(f"{network_name}-public-{zone}"),
                "tags": name_tag(comp, nat),
            }
        ),
        uses=[gateway],
    )  # a public NAT gateway fails to create without the Internet gateway
    table = _route_table(comp, f"{network_name}-private-{zone}-rt", network_name, region)
    # Uses the NAT gateway: held back while the gateway is (it waits for the Internet
    # gateway), so the route never references a gateway that doesn't exist; and on deletion
    # the route goes first.
    _default_route(
        comp,
        f"{network_name}-private-{zone}-default",
        table,
        region,
        {"natGatewayIdRef": comp.ref(nat)},
        uses=(nat,),
    )
    _associate(comp, subnet, table, region)


@internal_load_balancer.on("aws")
def aws_internal_load_balancer(comp: Composition) -> dict[str, str]:
    """Annotations making a LoadBalancer Service internal: the in-tree AWS cloud provider reads
    ``aws-load-balancer-internal``, the AWS Load Balancer Controller ``-scheme``."""
    return {
        "service.beta.kubernetes.io/aws-load-balancer-internal": "true",
        "service.beta.kubernetes.io/aws-load-balancer-scheme": "internal",
    }
