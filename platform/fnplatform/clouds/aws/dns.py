"""AWS DNS: Route53 hosted zones; a private one is associated with the network's VPC."""

from __future__ import annotations

from typing import Any

from fnplatform.clouds.aws.kinds import ZONE
from fnplatform.composition import Composition
from fnplatform.errors import SpecError
from fnplatform.library.dns import DnsZoneSpec, add_dns_zone


@add_dns_zone.on("aws")
def dns_zone(comp: Composition, name: str, spec: DnsZoneSpec) -> None:
    """A Route53 hosted zone; a private one is associated with the network's VPC."""
    visibility = "private" if spec.private else "public"
    for_provider: dict[str, Any] = {  # Route53 is global: a Zone has no region
        "name": spec.domain,
        "comment": f"{visibility} zone of {comp.name}, managed by Crossplane",
    }
    if spec.private:
        if not spec.network:
            raise SpecError("network", "a private zone needs a network")
        for_provider["vpc"] = [{"vpcIdRef": comp.ref(spec.network), "vpcRegion": comp.region}]
    comp.emit(name, ZONE.new(for_provider))
