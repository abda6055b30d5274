"""The rules that make a contact-center endpoint compliant by construction.

Each check raises an InputError naming the exact field (and list index) the user wrote, before
anything is composed; what is allowed is then turned into library specs here.
"""

from __future__ import annotations

from dataclasses import dataclass

from fnplatform.api.validation import ip_network
from fnplatform.composers.contact_center.model import (
    LOCKED_LEVELS,
    ContactCenterSpec,
)
from fnplatform.errors import InputError
from fnplatform.library.ingress import IngressRule

#: The TLS versions each platform's trunks negotiate for SIP signaling. Genesys Cloud BYOC
#: Cloud trunks accept TLS 1.2 only (the issue's design source); for NICE CXone no such
#: restriction is known here, so both standards pass.
PLATFORM_TLS: dict[str, tuple[str, ...]] = {
    "genesys-cloud": ("TLS1.2",),
    "nice-cxone": ("TLS1.2", "TLS1.3"),
}


@dataclass(frozen=True)
class Ports:
    """A port range of the spec, with the field it came from."""

    first: int
    last: int


def port_range(value: str, field: str) -> Ports:
    """``5060-5080`` (or ``5060``) as a checked range; an InputError on ``field`` otherwise."""
    first_text, _, last_text = value.partition("-")
    first, last = int(first_text), int(last_text or first_text)
    if not 1 <= first <= last <= 65535:
        raise InputError(field, f"{value} is not a port range within 1-65535, low to high")
    return Ports(first, last)


def trusted_ranges(spec: ContactCenterSpec) -> list[str]:
    """The trusted CIDRs, normalised; never the whole internet, never malformed."""
    ranges: list[str] = []
    for index, raw in enumerate(spec.sip.trustedCidrs):
        field = f"spec.sip.trustedCidrs[{index}]"
        try:
            network = ip_network(raw.strip(), strict=False)
        except ValueError:
            raise InputError(field, f"{raw!r} is not a CIDR range") from None
        if network.prefixlen == 0:
            raise InputError(
                field,
                f"{raw} admits the whole internet; list the carriers' and "
                "platform's SBC ranges instead",
            )
        ranges.append(str(network))
    return ranges


def ingress_rules(spec: ContactCenterSpec) -> tuple[IngressRule, ...]:
    """SIP signaling (UDP and TCP/TLS) and RTP media (UDP) from each trusted range, nothing else."""
    signaling = port_range(spec.sip.signalingPorts, "spec.sip.signalingPorts")
    media = port_range(spec.sip.mediaPorts, "spec.sip.mediaPorts")
    if signaling.first <= media.last and media.first <= signaling.last:
        raise InputError(
            "spec.sip.mediaPorts",
            f"{spec.sip.mediaPorts} overlaps the signaling ports {spec.sip.signalingPorts}",
        )
    rules: list[IngressRule] = []
    for source in trusted_ranges(spec):
        rules.extend(
            (
                IngressRule("udp", signaling.first, signaling.last, source, "SIP signaling (UDP)"),
                IngressRule(
                    "tcp", signaling.first, signaling.last, source, "SIP signaling (TCP/TLS)"
                ),
                IngressRule("udp", media.first, media.last, source, "RTP media"),
            )
        )
    return tuple(rules)


def secondary_cidr(spec: ContactCenterSpec) -> str | None:
    """The secondary site's network range: ``failoverPolicy.networkCidr``, or the sibling
    block of ``network.cidr``; never overlapping the primary one.

    Non-overlapping rather than the same range: the two sites stay routable to each other
    (VPC/VNet peering, a transit gateway, one GCP VPC later), which the same range would rule
    out for good -- a network's range cannot change without replacing it. The sibling (the
    other half of the primary range's supernet: 10.60.0.0/16 -> 10.61.0.0/16) has the same
    size and stays inside the private block the primary is in, except for the edge case of a
    whole private block (192.168.0.0/16), which must name its range.
    """
    if spec.failoverPolicy is None:
        return None
    primary = ip_network(spec.network.cidr)
    field = "spec.failoverPolicy.networkCidr"
    wanted = spec.failoverPolicy.networkCidr
    if wanted is not None:
        chosen = ip_network(wanted)
        if chosen.version != 4:
            raise InputError(field, f"{wanted} must be an IPv4 range, like network.cidr")
        if chosen.overlaps(primary):
            raise InputError(
                field,
                f"{wanted} overlaps network.cidr {primary}: the secondary "
                "site needs its own range so the sites can be routed together",
            )
        return str(chosen)
    if primary.prefixlen == 0:
        raise InputError(field, f"network.cidr {primary} has no sibling range; set it")
    supernet = primary.supernet()
    sibling = next(half for half in supernet.subnets() if half != primary)
    if primary.is_private and not sibling.is_private:
        raise InputError(
            field,
            f"required with network.cidr {primary}: its sibling range "
            f"{sibling} is not private; name a private range that does not "
            f"overlap {primary}",
        )
    return str(sibling)


@dataclass(frozen=True)
class StoragePolicy:
    """How recordings are kept, as the compliance level demands."""

    retention_days: int
    lock: bool
    access_logging: bool


#: Compliance levels that log every access to recordings.
LOGGED_LEVELS = ("PCI-DSS", "HIPAA", "SOC2")


def storage_policy(spec: ContactCenterSpec) -> StoragePolicy:
    """Lock, access logging and retention as the compliance level demands.

    PCI-DSS and HIPAA: compliance-mode lock for the retention period, and access logging;
    HIPAA also at least six years of retention. SOC2: access logging (its CC7 monitoring
    criteria). GDPR and none: as the spec says. A lock turned off or a HIPAA retention too
    short is refused by the model's claim rules (``model.ContactCenterSpec``) before this.
    """
    level = spec.taggingPolicy.complianceLevel
    locked = level in LOCKED_LEVELS
    lock = spec.recording.objectLock
    return StoragePolicy(
        retention_days=spec.recording.retentionDays,
        lock=locked if lock is None else lock,
        access_logging=level in LOGGED_LEVELS,
    )


def tls_problem(spec: ContactCenterSpec) -> str | None:
    """Why the platform can't honour the requested signaling TLS standard, or None."""
    accepted = PLATFORM_TLS[spec.platform]
    if spec.encryptionStandard in accepted:
        return None
    return (
        f"{spec.platform} BYOC trunks accept {' and '.join(accepted)} only: "
        f"{spec.encryptionStandard} cannot be negotiated for SIP signaling, which will use "
        f"{accepted[-1]}; recording storage still refuses anything older than TLS 1.2"
    )
