"""Azure failover DNS: a Traffic Manager profile with priority routing and two endpoints
(``Performance`` routing for ``latency``: Traffic Manager answers with the healthy endpoint
whose ``endpointLocation`` has the lowest latency from the resolver's network, by its
internet latency table; priorities do not apply then, so none is written).

``<name>`` is the ``TrafficManagerProfile`` (Priority routing, HTTPS probe of
``health_check_path``, 30 s interval, 3 tolerated failures; DNS name
``<zone>.trafficmanager.net``, ``zone`` being the profile's relative name), ``<name>-primary``
(priority 1) and ``<name>-secondary`` (priority 2) its ``TrafficManagerExternalEndpoint``s.
A CNAME from the user's ``record_name`` to the profile's FQDN lives in the user's zone.
"""

from __future__ import annotations

from fnplatform.clouds.azure.common import (
    resource_group,
)
from fnplatform.clouds.azure.kinds import (
    TRAFFIC_MANAGER_EXTERNAL_ENDPOINT,
    TRAFFIC_MANAGER_PROFILE,
)
from fnplatform.composition import Composition
from fnplatform.errors import SpecError
from fnplatform.library.failover import (
    FailoverDnsSpec,
    add_failover_dns,
    bucket_geo_replication,
    failover_address,
)

TTL = 60


@add_failover_dns.on("azure")
def failover_dns(comp: Composition, name: str, spec: FailoverDnsSpec) -> None:
    """Profile ``name`` and its two endpoints."""
    latency = spec.routing == "latency"
    relative = spec.zone.lower()
    if not relative.replace("-", "").isalnum() or len(relative) > 63:
        raise SpecError(
            "zone",
            "on Azure the Traffic Manager relative DNS name: letters, digits and '-', at most 63",
        )
    comp.emit(
        name,
        TRAFFIC_MANAGER_PROFILE.new(
            {
                "resourceGroupName": resource_group(comp),
                "trafficRoutingMethod": "Performance" if latency else "Priority",
                "dnsConfig": {"relativeName": relative, "ttl": TTL},
                "monitorConfig": {
                    "protocol": "HTTPS",
                    "port": spec.port,
                    "path": spec.health_check_path,
                    "intervalInSeconds": 30,
                    "timeoutInSeconds": 10,
                    "toleratedNumberOfFailures": 3,
                },
            }
        ),
    )
    for priority, (role, target, location) in enumerate(
        (
            ("primary", spec.primary, comp.region),
            ("secondary", spec.secondary, spec.secondary_region),
        ),
        start=1,
    ):
        endpoint: dict[str, object] = {
            "profileIdRef": comp.ref(name),
            "target": target,
            "endpointLocation": location,  # Performance routing measures from here
            "enabled": True,
        }
        if not latency:
            endpoint["priority"] = priority
        comp.emit(f"{name}-{role}", TRAFFIC_MANAGER_EXTERNAL_ENDPOINT.new(endpoint), uses=(name,))


@failover_address.on("azure")
def azure_failover_address(comp: Composition, name: str, spec: FailoverDnsSpec) -> str | None:
    """The profile's FQDN once it exists."""
    return comp.observed_string(name, "status.atProvider.fqdn")


#: A geo-redundant storage account keeps a copy in its region's pair
#: (``BucketSpec.geo_replica_region``, ``bucket.py``).
bucket_geo_replication.on("azure")
