"""Cloud DNS zones: public, or private to the composite's VPC network."""

from __future__ import annotations

from typing import Any

from fnplatform.clouds.gcp import kinds
from fnplatform.clouds.gcp.common import (
    external_name,
    project,
)
from fnplatform.composition import Composition
from fnplatform.errors import SpecError
from fnplatform.library.dns import DnsZoneSpec, add_dns_zone


@add_dns_zone.on("gcp")
def dns_zone(comp: Composition, name: str, spec: DnsZoneSpec) -> None:
    """A Cloud DNS zone for ``spec.domain``; private zones are visible in ``spec.network`` only."""
    visibility = "private" if spec.private else "public"
    for_provider: dict[str, Any] = {
        "project": project(comp),
        "dnsName": f"{spec.domain.rstrip('.')}.",
        "visibility": visibility,
        "description": f"{visibility.capitalize()} zone {spec.domain} of {comp.name}",
        # Never delete records others wrote (cert-manager, external-dns) with the zone.
        "forceDestroy": False,
    }
    if spec.private:
        if not spec.network:
            raise SpecError("network", "a private zone needs a network")
        for_provider["privateVisibilityConfig"] = {
            "networks": [{"networkUrlRef": comp.ref(spec.network)}]
        }
    comp.emit(
        name,
        kinds.MANAGED_ZONE.new(for_provider),
        external_name=external_name(comp, name),
    )
