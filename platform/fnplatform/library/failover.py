"""Failover across regions: the health-checked DNS name, and whether a cloud replicates buckets.

A cloud registers its builder with ``@add_<capability>.on("<cloud>")`` and its answers with
``@<value>.on("<cloud>")`` in ``clouds/<cloud>/failover.py``, the home each object declares.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass
from typing import Literal

from fnplatform.library.capability import Capability, Flag, Value

#: How a health-checked DNS name chooses between its two sites.
DnsRouting = Literal["failover", "latency"]


@dataclass(frozen=True)
class FailoverDnsSpec:
    """A health-checked DNS name over two sites, ``primary`` in the placed region and
    ``secondary`` in ``secondary_region``.

    ``routing`` ``failover``: answers with ``primary`` while its health check passes, else
    ``secondary``. ``latency``: answers each resolver with the site of lower latency (where the
    cloud measures it; GCP answers by the nearer region) among those whose checks pass, so
    either site's failure still moves everyone to the other.
    ``zone`` is the cloud's own zone handle (AWS hosted zone id, GCP managed zone name, Azure:
    the Traffic Manager profile's relative DNS name); targets are host names or IPv4 addresses.
    """

    zone: str
    record_name: str
    primary: str
    secondary: str
    secondary_region: str
    health_check_path: str = "/health"
    port: int = 443
    routing: DnsRouting = "failover"

    @staticmethod
    def is_address(target: str) -> bool:
        """Whether ``target`` is an IPv4 address (else a host name): clouds health-check and
        record the two differently (an A record and an address check, or a CNAME and a host
        name check), and some take only addresses."""
        try:
            ipaddress.IPv4Address(target)
        except ValueError:
            return False
        return True


add_failover_dns = Capability[FailoverDnsSpec](
    "failover_dns",
    "A DNS name that moves from primary to secondary when a health check fails.",
    home="failover",
)


failover_address = Value[[str, FailoverDnsSpec], str | None](
    "failover_address", "The DNS name that fails over, once composed.", home="failover"
)


bucket_replication = Flag(
    "bucket_replication",
    "The cloud replicates a bucket to another region (BucketSpec.replicate_to).",
    home="failover",
)


bucket_geo_replication = Flag(
    "bucket_geo_replication",
    "The cloud replicates a bucket inside itself to a second region "
    "(BucketSpec.geo_replica_region).",
    home="failover",
)
