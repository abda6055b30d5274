"""Azure DNS: a public ``DNSZone``, or a ``PrivateDNSZone`` linked to the cluster's VNet.

Both are named by the domain itself (their external name), so the same domain can exist once
publicly and once privately in the resource group (split-horizon DNS).
"""

from __future__ import annotations

from fnplatform.clouds.azure.common import (
    resource_group,
)
from fnplatform.clouds.azure.kinds import (
    DNS_ZONE,
    PRIVATE_DNS_ZONE,
    PRIVATE_DNS_ZONE_LINK,
)
from fnplatform.composition import Composition
from fnplatform.library.dns import DnsZoneSpec, add_dns_zone


@add_dns_zone.on("azure")
def dns_zone(
    comp: Composition,
    name: str,
    spec: DnsZoneSpec,
) -> None:
    """Zone ``name`` for ``spec.domain``; a private one also gets ``<name>-link`` to its VNet."""
    group = resource_group(comp)
    kind = PRIVATE_DNS_ZONE if spec.private else DNS_ZONE
    comp.emit(
        name,
        kind.new({"resourceGroupName": group}),
        external_name=spec.domain,
    )
    if not spec.private:
        return
    if spec.network is None:
        msg = f"private DNS zone {name!r} needs the network it is visible in"
        raise ValueError(msg)
    # The link waits for the zone (uses): Azure refuses to delete a zone that still has links,
    # so the Usage also makes deletion go link first.
    comp.emit(
        f"{name}-link",
        PRIVATE_DNS_ZONE_LINK.new(
            {
                "resourceGroupName": group,
                "privateDnsZoneNameRef": comp.ref(name),
                "virtualNetworkIdRef": comp.ref(spec.network),
                "registrationEnabled": False,
            }
        ),
        uses=(name,),
    )
