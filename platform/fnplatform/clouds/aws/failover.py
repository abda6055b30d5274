"""AWS failover DNS: a Route 53 health check on the primary and PRIMARY/SECONDARY records.

``<name>`` is the ``HealthCheck`` (HTTPS on ``port``, ``health_check_path``, from Route 53's
checkers in several regions, 3 failures to flip), ``<name>-primary`` and ``<name>-secondary``
the failover ``Record`` pair in hosted zone ``zone``: Route 53 answers with the primary while
its health check passes, else with the secondary (which has no check: it is the last resort).
Targets that are IPv4 addresses give A records, host names CNAME records.
"""

from __future__ import annotations

import ipaddress

from fnplatform.clouds.aws.kinds import HEALTH_CHECK, RECORD
from fnplatform.composition import Composition
from fnplatform.library import values
from fnplatform.library.calls import add_failover_dns
from fnplatform.library.specs import FailoverDnsSpec

TTL = 60  # seconds: how long resolvers may keep answering with a failed primary
FAILURE_THRESHOLD, REQUEST_INTERVAL = 3, 30


def _is_ip(target: str) -> bool:
    try:
        ipaddress.IPv4Address(target)
    except ValueError:
        return False
    return True


@add_failover_dns.on("aws")
def failover_dns(comp: Composition, name: str, spec: FailoverDnsSpec) -> None:
    """Health check ``name`` and the failover records ``<name>-primary``/``-secondary``."""
    check: dict[str, object] = {
        "type": "HTTPS",
        "port": spec.port,
        "resourcePath": spec.health_check_path,
        "failureThreshold": FAILURE_THRESHOLD,
        "requestInterval": REQUEST_INTERVAL,
        "enableSni": True,
    }
    if _is_ip(spec.primary):
        check["ipAddress"] = spec.primary
    else:
        check["fqdn"] = spec.primary
    comp.emit(name, HEALTH_CHECK.new(check))
    for role, target in (("PRIMARY", spec.primary), ("SECONDARY", spec.secondary)):
        record: dict[str, object] = {
                "zoneId": spec.zone,
            "name": spec.record_name.rstrip("."),
            "type": "A" if _is_ip(target) else "CNAME",
            "ttl": TTL,
            "records": [target],
            "setIdentifier": role.lower(),
            "failoverRoutingPolicy": {"type": role},
        }
        if role == "PRIMARY":
            record["healthCheckIdRef"] = comp.ref(name)
        comp.emit(f"{name}-{role.lower()}", RECORD.new(record),
                  uses=(name,) if role == "PRIMARY" else ())


@values.failover_address.on("aws")
def failover_address(comp: Composition, name: str) -> str | None:
    """The DNS name that fails over."""
    emitted = comp.desired.get(f"{name}-primary")
    return str(emitted.body["spec"]["forProvider"]["name"]) if emitted else None


#: S3 replicates a bucket to a bucket in another region (``BucketSpec.replicate_to``).
values.bucket_replication.on("aws")
