"""GCP failover DNS: a Cloud DNS primary-backup routing policy with a health check.

The pinned schemas (provider-upjet-gcp v3.0.0) express it: ``RecordSet.routingPolicy`` has
``primaryBackup`` (primary targets, backup targets by region) and ``healthCheck`` naming a
``compute`` ``HealthCheck``; for public zones the health-checked targets are
``externalEndpoints``, which are IP addresses. So ``<name>`` is the ``HealthCheck`` (HTTPS
on ``port``, ``health_check_path``, probed from three source regions as Cloud DNS requires)
and ``<name>-record`` the A ``RecordSet`` in managed zone ``zone``. Host-name targets cannot
be health-checked by Cloud DNS: that is a condition, and no failover is composed.

Cloud DNS has no latency-based routing policy: its routing policies are weighted round robin,
geolocation and failover (primary-backup). ``latency`` routing is therefore the nearest
alternative, the geolocation policy ``routingPolicy.geo``: each resolver is answered with the
target of the region nearest to where its query comes from, among the health-checked targets
that pass (with geo-fencing off, an unhealthy region's queries go to the next nearest one).
That substitute is said in the ``latency-routing`` gap, never silently (Cloud DNS
"Routing policies overview").
"""

from __future__ import annotations

from fnplatform.clouds.gcp import kinds
from fnplatform.clouds.gcp.common import project
from fnplatform.composition import Composition
from fnplatform.gaps import Gap
from fnplatform.library.failover import (
    FailoverDnsSpec,
    add_failover_dns,
    bucket_geo_replication,
    failover_address,
)

TTL = 60
#: Cloud DNS health checks of external endpoints run from exactly three source regions.
PROBE_REGIONS = ("europe-west1", "us-central1", "us-east4")


@add_failover_dns.on("gcp")
def failover_dns(comp: Composition, name: str, spec: FailoverDnsSpec) -> None:
    """Health check ``name`` and record set ``<name>-record``, or a condition."""
    if not (spec.is_address(spec.primary) and spec.is_address(spec.secondary)):
        comp.gap(
            Gap.FAILOVER_DNS,
            "Cloud DNS health-checked routing takes IPv4 addresses of "
            "external endpoints, not host names: give primaryTarget and secondaryTarget "
            "as addresses for failover on GCP; none composed",
        )
        return
    comp.emit(
        name,
        kinds.HEALTH_CHECK.new(
            {
                "project": project(comp),
                "checkIntervalSec": 30,
                "timeoutSec": 10,
                "healthyThreshold": 2,
                "unhealthyThreshold": 3,
                "httpsHealthCheck": {"port": spec.port, "requestPath": spec.health_check_path},
                "sourceRegions": list(PROBE_REGIONS),
            }
        ),
    )
    record = _record_name(spec)
    policy: dict[str, object] = {"healthCheckRef": comp.ref(name)}
    if spec.routing == "latency":
        comp.gap(
            Gap.LATENCY_ROUTING,
            "Cloud DNS has no latency-based routing: the record uses "
            "geolocation routing instead, answering each resolver with the healthy target "
            f"of the nearer of {comp.region} and {spec.secondary_region} (by where the "
            "query comes from, not by measured latency)",
        )
        policy["enableGeoFencing"] = False  # an unhealthy region's queries go to the other
        policy["geo"] = [
            {"location": region, "healthCheckedTargets": {"externalEndpoints": [target]}}
            for region, target in sorted(
                ((comp.region, spec.primary), (spec.secondary_region, spec.secondary))
            )
        ]
    else:
        policy["primaryBackup"] = {
            "primary": {"externalEndpoints": [spec.primary]},
            "backupGeo": [
                {
                    "location": spec.secondary_region,
                    "healthCheckedTargets": {"externalEndpoints": [spec.secondary]},
                }
            ],
            "trickleRatio": 0,
        }
    comp.emit(
        f"{name}-record",
        kinds.RECORD_SET.new(
            {
                "project": project(comp),
                "managedZone": spec.zone,
                "name": record,
                "type": "A",
                "ttl": TTL,
                "routingPolicy": policy,
            }
        ),
        uses=(name,),
    )


def _record_name(spec: FailoverDnsSpec) -> str:
    """The record set's name: Cloud DNS takes fully qualified names (a trailing dot)."""
    return spec.record_name if spec.record_name.endswith(".") else f"{spec.record_name}."


@failover_address.on("gcp")
def gcp_failover_address(comp: Composition, name: str, spec: FailoverDnsSpec) -> str | None:
    """The DNS name that fails over, when :func:`failover_dns` composes it (IP targets)."""
    if not (spec.is_address(spec.primary) and spec.is_address(spec.secondary)):
        return None
    return _record_name(spec)


#: A dual-region bucket keeps its own copy in the failover region, where the two regions form
#: one (``BucketSpec.geo_replica_region``, ``bucket.py`` and ``dual_region.py``).
bucket_geo_replication.on("gcp")
