"""AWS failover DNS: a Route 53 health check on the primary and PRIMARY/SECONDARY records,
or latency records with a health check per site.

``<name>`` is the ``HealthCheck`` (HTTPS on ``port``, ``health_check_path``, from Route 53's
checkers in several regions, 3 failures to flip), ``<name>-primary`` and ``<name>-secondary``
the failover ``Record`` pair in hosted zone ``zone``: Route 53 answers with the primary while
its health check passes, else with the secondary (which has no check: it is the last resort).
Targets that are IPv4 addresses give A records, host names CNAME records.
"""

from __future__ import annotations

from fnplatform.clouds.aws.kinds import HEALTH_CHECK, RECORD
from fnplatform.composition import Composition
from fnplatform.library.failover import (
    FailoverDnsSpec,
    add_failover_dns,
    bucket_replication,
    failover_address,
)

TTL = 60  # seconds: how long resolvers may keep answering with a failed primary
FAILURE_THRESHOLD, REQUEST_INTERVAL = 3, 30


@add_failover_dns.on("aws")
def failover_dns(comp: Composition, name: str, spec: FailoverDnsSpec) -> None:
    """Health check ``name`` and the records ``<name>-primary``/``-secondary``.

    ``failover``: PRIMARY/SECONDARY failover records, the primary health-checked. ``latency``:
    one latency record per site (``latencyRoutingPolicy.region``: Route 53 answers with the
    record of the region of lowest latency to the resolver), each with its own health check
    (``<name>`` the primary's, ``<name>-secondary-check`` the secondary's), so an unhealthy
    site is left out of the answers (Route 53 Developer Guide, "Latency-based routing" and
    "How Amazon Route 53 chooses records when health checking is configured").
    """
    comp.emit(name, HEALTH_CHECK.new(_health_check(spec, spec.primary)))
    latency = spec.routing == "latency"
    if latency:
        comp.emit(f"{name}-secondary-check", HEALTH_CHECK.new(_health_check(spec, spec.secondary)))
    sites = (
        ("PRIMARY", spec.primary, comp.region, name),
        (
            "SECONDARY",
            spec.secondary,
            spec.secondary_region,
            f"{name}-secondary-check" if latency else None,
        ),
    )
    for role, target, region, check in sites:
        record: dict[str, object] = {
            "zoneId": spec.zone,
            "name": spec.record_name.rstrip("."),
            "type": "A" if spec.is_address(target) else "CNAME",
            "ttl": TTL,
            "records": [target],
            # the same in both routings: the record's identity (with zone, name and type)
            # stays, so changing the routing updates the records in place
            "setIdentifier": role.lower(),
        }
        if latency:
            record["latencyRoutingPolicy"] = {"region": region}
        else:
            record["failoverRoutingPolicy"] = {"type": role}
        if check is not None:
            record["healthCheckIdRef"] = comp.ref(check)
        comp.emit(
            f"{name}-{role.lower()}", RECORD.new(record), uses=(check,) if check is not None else ()
        )


def _health_check(spec: FailoverDnsSpec, target: str) -> dict[str, object]:
    """An HTTPS check of ``target`` (an address or a host name, with SNI)."""
    check: dict[str, object] = {
        "type": "HTTPS",
        "port": spec.port,
        "resourcePath": spec.health_check_path,
        "failureThreshold": FAILURE_THRESHOLD,
        "requestInterval": REQUEST_INTERVAL,
        "enableSni": True,
    }
    if spec.is_address(target):
        check["ipAddress"] = target
    else:
        check["fqdn"] = target
    return check


@failover_address.on("aws")
def aws_failover_address(comp: Composition, name: str, spec: FailoverDnsSpec) -> str | None:
    """The DNS name that fails over (the records' name, as :func:`failover_dns` writes it)."""
    return spec.record_name.rstrip(".")


#: S3 replicates a bucket to a bucket in another region (``BucketSpec.replicate_to``).
bucket_replication.on("aws")
