"""The contact-center composer: compliant CCaaS endpoints on AWS, Azure and GCP.

Reads like the endpoint it builds. Rules first, before anything is composed (region allowlist,
trusted ranges, ports, storage compliance); then placement and tags; then the network, the
SIP/RTP ingress rules, the recordings' key and bucket (with a replica where the cloud
replicates buckets), failover DNS, and a status that says which controls are in force.
Everything cloud-specific is behind the library's capabilities; what a cloud cannot do is a
condition (``comp.gap``), never a silently dropped field.
"""

from __future__ import annotations

from fnplatform.api.validation import parse
from fnplatform.api.xrspec import user_spec
from fnplatform.composers.contact_center import regions, rules
from fnplatform.composers.contact_center.model import ContactCenterSpec
from fnplatform.composition import CLAIM_NAME, CLAIM_NAMESPACE, Composition
from fnplatform.errors import InputError
from fnplatform.gaps import Gap
from fnplatform.library.bucket import (
    BucketPart,
    BucketReplica,
    BucketSpec,
    add_bucket,
    bucket_address,
    bucket_deleted_with_objects,
    bucket_parts,
)
from fnplatform.library.failover import (
    FailoverDnsSpec,
    add_failover_dns,
    bucket_geo_replication,
    bucket_replication,
    failover_address,
)
from fnplatform.library.ingress import (
    IngressRule,
    IngressRulesSpec,
    add_ingress_rules,
    ingress_rules_id,
    ingress_rules_parts,
)
from fnplatform.library.key import KeySpec, add_key, key_deletable, key_id
from fnplatform.library.network import NetworkSpec, add_network
from fnplatform.library.resource_group import ResourceGroupSpec, add_resource_group
from fnplatform.merge import get_path
from fnplatform.naming import dns_label
from fnplatform.placement import required_scope
from fnplatform.rules.controls import Control, assess
from fnplatform.rules.provider_health import provider_health_first

NETWORK, INGRESS, KEY, BUCKET = "network", "sip-ingress", "recordings-key", "recordings"
REPLICA_KEY, REPLICA, FAILOVER, GROUP = "replica-key", "recordings-replica", "failover", "group"
SECONDARY_NETWORK, SECONDARY_INGRESS = "secondary-network", "secondary-sip-ingress"
KEY_ROTATION_DAYS = 365
#: Gaps that leave a compliance control out (the others, replication, failover, versioning
#: replaced by a retention policy, are resilience features reported in their own condition).
#: Access logging and the lock are no gap on any cloud: every cloud's bucket builder provides
#: them (or refuses the spec), so only the TLS minimum can be missing.
COMPLIANCE_GAPS = frozenset({Gap.BUCKET_MIN_TLS})
COMPLIANT = "Compliant"

#: The controls ``Compliant`` lists (keys of :func:`implemented_by`).
INGRESS_ONLY, ENCRYPTION_AT_REST, NEVER_PUBLIC = "ingress", "encryption at rest", "never public"
TLS_IN_TRANSIT, VERSIONED, LIFECYCLE, TAGS = "TLS in transit", "versioned", "lifecycle", "tags"
LOCK, ACCESS_LOGGING, REPLICATED = "compliance lock", "access logging", "replicated"
GEO_REPLICATED, DNS_FAILOVER, SECONDARY_SITE = "geo-replicated", "DNS failover", "secondary site"
_KEY = (BUCKET, KEY, f"{KEY}-*")  # the bucket encrypted, the key and its parts (alias, grants)
_FAILOVER = (FAILOVER, f"{FAILOVER}-*")


def implemented_by(comp: Composition) -> dict[str, tuple[str, ...]]:
    """By control, the composition names of the resources implementing it on the placed cloud
    (``<prefix>*``: every resource of that prefix), as the capability builders emit them: the
    bucket's and the ingress rules' own parts each cloud names (``bucket_parts``,
    ``ingress_rules_parts``), the key and failover with their parts. ``Compliant`` lists
    a control as in force only while each of them is Synced and Ready
    (:mod:`fnplatform.rules.controls`)."""

    def bucket(part: BucketPart) -> tuple[str, ...]:
        return bucket_parts(comp, BUCKET, part)

    return {
        INGRESS_ONLY: ingress_rules_parts(comp, INGRESS),
        ENCRYPTION_AT_REST: (*_KEY, *bucket(BucketPart.ENCRYPTION)),
        NEVER_PUBLIC: bucket(BucketPart.NEVER_PUBLIC),
        TLS_IN_TRANSIT: bucket(BucketPart.TLS),
        VERSIONED: bucket(BucketPart.VERSIONING),
        LIFECYCLE: bucket(BucketPart.LIFECYCLE),
        # every composed resource carries the tags once its provider has applied it
        TAGS: ("*",),
        LOCK: bucket(BucketPart.LOCK),
        ACCESS_LOGGING: bucket(BucketPart.ACCESS_LOGGING),
        # the replica bucket with its key and settings, and the replication
        REPLICATED: (
            REPLICA,
            f"{REPLICA}-*",
            REPLICA_KEY,
            f"{REPLICA_KEY}-*",
            *bucket(BucketPart.REPLICATION),
        ),
        GEO_REPLICATED: bucket(BucketPart.GEO_REPLICATION),
        DNS_FAILOVER: _FAILOVER,
        SECONDARY_SITE: (
            SECONDARY_NETWORK,
            f"{SECONDARY_NETWORK}-*",
            *ingress_rules_parts(comp, SECONDARY_INGRESS),
        ),
    }


def compose(comp: Composition) -> None:
    """Compose one ContactCenterEndpoint."""
    if not get_path(comp.composite, "metadata.name"):
        raise InputError(
            "metadata.name",
            "required: every composed resource (and the global "
            "bucket name) is named after the endpoint",
        )
    spec = parse(ContactCenterSpec, user_spec(comp.spec), "spec")
    _check_regions(comp, spec)
    ingress = rules.ingress_rules(spec)
    storage = rules.storage_policy(spec)
    secondary_cidr = rules.secondary_cidr(spec)
    _check_updates(comp, spec, storage)
    _place(comp, spec)
    provider_health_first(
        comp, spec.cloud, str(get_path(comp.env, f"providerConfigs.{spec.cloud}") or "default")
    )
    comp.tag_with(_tags(comp, spec), field="spec.taggingPolicy")
    _signaling_tls(comp, spec)

    if add_resource_group.provided_on(comp.cloud):
        add_resource_group(comp, GROUP, ResourceGroupSpec(group_name=comp.scope))
    group_uses = (GROUP,) if GROUP in comp.desired else ()
    add_network(
        comp,
        NETWORK,
        NetworkSpec(subnet_cidr=spec.network.cidr),
        uses=group_uses,
        fields={"subnet_cidr": "spec.network.cidr"},
    )
    add_ingress_rules(
        comp,
        INGRESS,
        IngressRulesSpec(
            network=NETWORK,
            rules=ingress,
            description=f"SIP/RTP of {spec.platform} trunks",
        ),
        fields={"rules": "spec.sip.trustedCidrs"},
    )
    if spec.failoverPolicy is not None and secondary_cidr is not None:
        _secondary_site(comp, spec, secondary_cidr, ingress, group_uses)
    geo_copy = _geo_replica_region(comp, spec)
    add_key(
        comp,
        KEY,
        KeySpec(
            description=f"Call recordings of {comp.name}",
            rotation_days=KEY_ROTATION_DAYS,
            geo_replica_region=geo_copy,
        ),
        uses=group_uses,
    )
    replica = _replica(comp, spec, storage)
    add_bucket(
        comp,
        BUCKET,
        BucketSpec(
            key=KEY,
            retention_days=storage.retention_days,
            lock=storage.lock,
            access_logging=storage.access_logging,
            expire_after_days=storage.retention_days,
            replicate_to=replica,
            geo_replica_region=geo_copy,
        ),
        uses=(*group_uses, KEY),
        fields={  # the key outlives the recordings it decrypts
            "retention_days": "spec.recording.retentionDays",
            "expire_after_days": "spec.recording.retentionDays",
            "bucket_name": "metadata.name",
            "geo_replica_region": _replica_region_field(spec),
        },
    )
    failover: FailoverDnsSpec | None = None
    if spec.failoverPolicy is not None:
        policy = spec.failoverPolicy
        failover = FailoverDnsSpec(
            zone=policy.dns.zone,
            record_name=policy.dns.recordName,
            primary=policy.primaryTarget,
            secondary=policy.secondaryTarget,
            secondary_region=policy.secondaryRegion,
            health_check_path=policy.healthCheckPath,
            routing=policy.routing,
        )
        add_failover_dns(
            comp,
            FAILOVER,
            failover,
            fields={
                "zone": "spec.failoverPolicy.dns.zone",
                "primary": "spec.failoverPolicy.primaryTarget",
                "secondary": "spec.failoverPolicy.secondaryTarget",
            },
        )
    _on_delete(comp, spec, storage)
    _status(comp, spec, storage, replica.bucket if replica else None, failover)


def _check_regions(comp: Composition, spec: ContactCenterSpec) -> None:
    """The seed's validate-region step: every region the endpoint uses must be allowed, and
    inside the compliance level's data residency (GDPR: EU/EEA)."""
    regions.check_region(comp, spec.cloud, spec.platform, spec.region, "spec.region")
    regions.check_residency(
        comp, spec.cloud, spec.taggingPolicy.complianceLevel, spec.region, "spec.region"
    )
    if spec.failoverPolicy is not None:
        _check_second_region(
            comp, spec, spec.failoverPolicy.secondaryRegion, "spec.failoverPolicy.secondaryRegion"
        )
    if spec.recording.replicationRegion is not None:
        _check_second_region(
            comp, spec, spec.recording.replicationRegion, "spec.recording.replicationRegion"
        )


def _check_updates(
    comp: Composition,
    spec: ContactCenterSpec,
    storage: rules.StoragePolicy,
) -> None:
    """Refuse the changes the clouds cannot make to what exists, before anything is composed.

    A composed resource cannot move region: the provider would look for it in the new region,
    not find it, and create a second one, leaving the first (with recordings, for a bucket)
    behind unmanaged. And a compliance lock is one-way: S3 object lock cannot be turned off
    (``objectLockEnabled`` only at creation), a locked GCS retention policy and a locked Azure
    WORM policy can only be extended. So each is a fatal result naming the field, with what
    to do instead, rather than a resource that fails forever.
    """
    moves = (
        ("spec.region", spec.region, comp.recorded("region"), comp.is_observed(NETWORK)),
        (
            "spec.failoverPolicy.secondaryRegion",
            spec.failoverPolicy.secondaryRegion if spec.failoverPolicy else None,
            comp.recorded("secondarySite.region"),
            comp.is_observed(SECONDARY_NETWORK),
        ),
        (
            "spec.recording.replicationRegion"
            if spec.recording.replicationRegion
            else "spec.failoverPolicy.secondaryRegion",
            spec.recording.replicationRegion
            or (spec.failoverPolicy.secondaryRegion if spec.failoverPolicy else None),
            comp.observed_value(REPLICA, "spec.forProvider.region"),
            comp.is_observed(REPLICA),
        ),
    )
    for field, wanted, existing, exists in moves:
        comp.refuse_change(
            field,
            existing,
            wanted,
            f"cannot move from {existing} to {wanted}: what exists there cannot "
            f"change region; create a new endpoint in {wanted} and delete this "
            "one",
            exists=exists,
        )
    locked = comp.recorded("lockedRetentionDays")
    if isinstance(locked, int) and comp.is_observed(BUCKET):
        if not storage.lock:
            raise InputError(
                "spec.recording.objectLock",
                f"the recordings are held under a "
                f"{locked}-day compliance lock, which cannot be lifted; keep "
                "objectLock true",
            )
        if storage.retention_days < locked:
            raise InputError(
                "spec.recording.retentionDays",
                f"the compliance lock holds "
                f"recordings {locked} days and can only be extended: "
                f"{storage.retention_days} would shorten it",
            )


def _check_second_region(
    comp: Composition, spec: ContactCenterSpec, region: str, field: str
) -> None:
    """A failover or replication region (``field``): allowed (that it is not the primary one
    is a claim rule of ``ContactCenterSpec``, checked as the spec is parsed)."""
    regions.check_region(comp, spec.cloud, spec.platform, region, field)
    regions.check_residency(comp, spec.cloud, spec.taggingPolicy.complianceLevel, region, field)


def _place(comp: Composition, spec: ContactCenterSpec) -> None:
    """Cloud and region from the spec; account/project from the environment; on a cloud with
    resource groups (Azure) the one this endpoint composes for itself."""
    if add_resource_group.provided_on(spec.cloud):  # the endpoint composes its own group
        scope, field = dns_label(comp.name, "contact-center"), "metadata.name"
    else:
        required = required_scope(comp.env, spec.cloud)
        scope, field = str(required.value), required.field
    comp.place(
        spec.cloud,
        cloud_field="spec.cloud",
        region=spec.region,
        region_field="spec.region",
        scope=scope,
        scope_field=field,
    )


def _tags(comp: Composition, spec: ContactCenterSpec) -> dict[str, str]:
    """costCenter and complianceLevel, and the claim's name and namespace, on everything.

    The tagging policy needs the claim: an endpoint is requested through a
    ContactCenterEndpointClaim, whose name and namespace Crossplane puts in these labels.
    """
    if not comp.claim_name or not comp.namespace:
        raise InputError(
            "metadata.labels",
            f"{CLAIM_NAME} and {CLAIM_NAMESPACE} required: "
            "every resource is tagged with the claim's name and namespace; "
            "request endpoints through a ContactCenterEndpointClaim",
        )
    return {
        "costCenter": spec.taggingPolicy.costCenter,
        "complianceLevel": spec.taggingPolicy.complianceLevel,
        "claimName": comp.claim_name,
        "claimNamespace": comp.namespace,
    }


def _signaling_tls(comp: Composition, spec: ContactCenterSpec) -> None:
    """Say what ``encryptionStandard`` does: never claim an enforcement that is not there.

    SIP-TLS is terminated by the CCaaS platform's SBCs and the customer's, not by anything
    this module composes (a security group or firewall passes TCP to the signaling ports, it
    cannot require a TLS version). So the condition is Unknown, ``NotEnforcedHere``, naming
    where the version is set; False when the platform cannot negotiate it at all.
    """
    problem = rules.tls_problem(spec)
    if problem is None:
        comp.condition(
            "SignalingTls",
            None,
            "NotEnforcedHere",
            f"{spec.encryptionStandard} for SIP signaling is negotiated between "
            f"{spec.platform} and your SBC or carrier; nothing this endpoint composes "
            "terminates SIP-TLS, so set the minimum TLS version on the trunk in "
            f"{spec.platform}. Recording storage refuses anything older than TLS 1.2",
        )
    else:
        comp.condition("SignalingTls", False, "UnsupportedByPlatform", problem)


def _secondary_site(
    comp: Composition,
    spec: ContactCenterSpec,
    cidr: str,
    ingress: tuple[IngressRule, ...],
    group_uses: tuple[str, ...],
) -> None:
    """The network and SIP/RTP ingress of the secondary region, which DNS fails over to.

    The same trusted ranges and ports as the primary site, in a network of its own range
    (:func:`rules.secondary_cidr`): the user's secondary SBC (``secondaryTarget``) runs there,
    as the primary one runs in the primary network; without it the failover record would
    point at a site nothing built.
    """
    policy = spec.failoverPolicy
    assert policy is not None  # the caller checked
    region = policy.secondaryRegion
    add_network(
        comp,
        SECONDARY_NETWORK,
        NetworkSpec(subnet_cidr=cidr, region=region),
        uses=group_uses,
        fields={"subnet_cidr": "spec.failoverPolicy.networkCidr"},
    )
    add_ingress_rules(
        comp,
        SECONDARY_INGRESS,
        IngressRulesSpec(
            network=SECONDARY_NETWORK,
            rules=ingress,
            region=region,
            description=f"SIP/RTP of {spec.platform} trunks (secondary site)",
        ),
        fields={"rules": "spec.sip.trustedCidrs"},
    )


def _replica(
    comp: Composition,
    spec: ContactCenterSpec,
    storage: rules.StoragePolicy,
) -> BucketReplica | None:
    """A replica bucket (with its own key) in the replication or secondary region, where the
    cloud replicates to a second bucket (AWS); the region the recordings' own bucket keeps a
    copy in, where the cloud replicates inside it (Azure's geo-redundant account, GCP's
    dual-region bucket: :func:`_geo_replica_region`); a condition where it can't."""
    target = _replica_region(spec)
    if target is None or bucket_geo_replication(comp.cloud):
        return None
    if not bucket_replication(comp.cloud):
        comp.gap(
            Gap.RECORDING_REPLICATION,
            f"{comp.cloud} does not replicate a bucket to another "
            f"region's bucket; no replica in {target}: use a geo-redundant storage class",
        )
        return None
    add_key(
        comp,
        REPLICA_KEY,
        KeySpec(
            description=f"Replicated call recordings of {comp.name}",
            rotation_days=KEY_ROTATION_DAYS,
            region=target,
        ),
    )
    add_bucket(
        comp,
        REPLICA,
        BucketSpec(
            key=REPLICA_KEY,
            region=target,
            retention_days=storage.retention_days,
            lock=storage.lock,
            expire_after_days=storage.retention_days,
        ),
        uses=(REPLICA_KEY,),
    )
    return BucketReplica(REPLICA, region=target, key=REPLICA_KEY)


def _replica_region(spec: ContactCenterSpec) -> str | None:
    """Where recordings are to be copied: the replication region, else the failover one."""
    return spec.recording.replicationRegion or (
        spec.failoverPolicy.secondaryRegion if spec.failoverPolicy else None
    )


def _replica_region_field(spec: ContactCenterSpec) -> str:
    """The field :func:`_replica_region` comes from (the one to change, or to set)."""
    if spec.recording.replicationRegion or spec.failoverPolicy is None:
        return "spec.recording.replicationRegion"
    return "spec.failoverPolicy.secondaryRegion"


def _geo_copy(comp: Composition, spec: ContactCenterSpec, gaps: set[Gap]) -> str | None:
    """The region holding the recordings bucket's own copy, on a cloud that keeps one
    (Azure, GCP), unless it said it cannot."""
    if not bucket_geo_replication(comp.cloud) or Gap.BUCKET_REPLICATION in gaps:
        return None
    return _replica_region(spec)


def _geo_replica_region(comp: Composition, spec: ContactCenterSpec) -> str | None:
    """The copy region the recordings' bucket keeps itself, on clouds that replicate so."""
    return _replica_region(spec) if bucket_geo_replication(comp.cloud) else None


#: Composition-name prefixes of the recordings estate: buckets (with every setting resource,
#: log bucket and replication role), their keys with the grants that let storage use them.
RECORDINGS_ESTATE = (BUCKET, KEY, REPLICA_KEY)
_ESTATE_PREFIXES = tuple(f"{prefix}-" for prefix in RECORDINGS_ESTATE)


def _on_delete(comp: Composition, spec: ContactCenterSpec, storage: rules.StoragePolicy) -> None:
    """What deleting the endpoint does to the recordings, done and said (``RecordingsOnDelete``).

    Under a compliance lock nothing can delete the recordings before the lock ends (S3
    COMPLIANCE mode, a locked GCS retention policy, a locked Azure WORM policy): a managed
    resource deleting them would retry forever and keep the claim from ever going away, while
    its neighbours -- the key, the public access block, the TLS policy -- were deleted around
    the data. So the whole recordings estate is kept on delete (``deletionPolicy: Orphan``; on
    Azure also the resource group that holds the account): the claim deletes completely and the
    recordings stay as they were, locked, private and readable.

    Without a lock the recordings go with the endpoint, except that a bucket is never emptied
    by force (``forceDestroy`` off): its deletion waits until the user empties it, and its key
    waits for it (a Usage), so no bucket outlives the key that decrypts it. Cloud KMS cannot
    delete a CryptoKey -- deleting the resource destroys every key version, which would make a
    bucket still holding recordings unreadable for good -- so on GCP the key is always kept.
    """
    kept: list[str] = []
    for name in sorted(comp.desired):
        estate = name in (GROUP, *RECORDINGS_ESTATE) or name.startswith(_ESTATE_PREFIXES)
        key_only = name == KEY or name.startswith(f"{KEY}-")
        if estate and (storage.lock or (key_only and not key_deletable(comp.cloud))):
            comp.keep_on_delete(name)
            kept.append(name)
    buckets = ", ".join(
        str(bucket_address(comp, n, None).get("name") or n)
        for n in (BUCKET, REPLICA)
        if n in comp.desired
    )
    if storage.lock:
        comp.condition(
            "RecordingsOnDelete",
            True,
            "RetainedUnderLock",
            f"deleting this endpoint keeps the recordings ({buckets}), their keys "
            f"and settings in {spec.cloud} (kept on delete), locked for "
            f"{storage.retention_days} days from each recording; delete them with "
            f"{spec.cloud}'s own tools once the lock has expired"
            + (
                "; their global names carry this endpoint's uid "
                f"({comp.uid_suffix}), so an endpoint re-created with the same name "
                "gets new ones and never meets them"
                if comp.namespaced
                else ""
            ),
        )
        return
    kept_key = (
        f"; the key is kept ({', '.join(kept)}): Cloud KMS cannot delete keys, only "
        "destroy their versions"
        if kept
        else ""
    )
    how = (
        "deletes the storage account with its recordings"
        if bucket_deleted_with_objects(spec.cloud)
        else "deletes the recordings bucket once it is empty: it is never emptied by force, so "
        "the deletion waits until you delete the recordings (objects still under the "
        "retention period cannot be deleted before it ends)"
    )
    comp.condition(
        "RecordingsOnDelete",
        False,
        "DeletedWithEndpoint",
        f"deleting this endpoint {how}{kept_key}",
    )


def _status(
    comp: Composition,
    spec: ContactCenterSpec,
    storage: rules.StoragePolicy,
    replica: str | None,
    failover: FailoverDnsSpec | None,
) -> None:
    """Ids of what exists, the endpoints, and the Compliant condition with the controls.

    ``Compliant`` is True only while every control is in force: each resource implementing it
    Synced and Ready (:func:`fnplatform.rules.controls.assess`); ``status.controls`` lists those.
    A control the cloud lacks (a gap) keeps it False as ``ControlGaps``.
    """
    comp.set_status("cloud", spec.cloud)
    comp.set_status("region", spec.region)
    comp.status_from(NETWORK, "status.atProvider.id", "networkId")
    comp.remember("securityGroupId", ingress_rules_id(comp, INGRESS))
    comp.remember("kmsKeyId", key_id(comp, KEY, None, _geo_replica_region(comp, spec)))
    for name, field in ((BUCKET, "recordingBucket"), (replica, "replicaBucket")):
        if name is None:
            continue
        address = bucket_address(comp, name, None)  # names derived, not given
        comp.set_status(f"{field}.name", address.get("name"))
        comp.remember(f"{field}.id", address.get("id"))
    if spec.failoverPolicy is not None and failover is not None:
        comp.set_status("endpoints.primary", spec.failoverPolicy.primaryTarget)
        comp.set_status("endpoints.secondary", spec.failoverPolicy.secondaryTarget)
        comp.set_status("endpoints.routing", spec.failoverPolicy.routing)
        comp.remember("endpoints.dns", failover_address(comp, FAILOVER, failover))
        comp.set_status("secondarySite.region", spec.failoverPolicy.secondaryRegion)
        comp.status_from(SECONDARY_NETWORK, "status.atProvider.id", "secondarySite.networkId")
        comp.remember("secondarySite.securityGroupId", ingress_rules_id(comp, SECONDARY_INGRESS))
    # Remembered while the bucket is briefly unobserved: a lock, once on, stays on.
    comp.remember("lockedRetentionDays", storage.retention_days if storage.lock else None)
    gaps = set(comp.notes.gaps)
    geo_copy = _geo_copy(comp, spec, gaps)
    comp.set_status("replicaRegion", geo_copy)
    verdict = assess(
        comp, _controls(comp, spec, storage, replica=replica, gaps=gaps, geo_copy=geo_copy)
    )
    comp.set_status("controls", list(verdict.met))
    missing = sorted(gaps & COMPLIANCE_GAPS)
    gap_note = f"Not enforceable on {spec.cloud}: {', '.join(missing)} (see CapabilitiesAvailable)"
    if not verdict.ok:
        comp.condition(
            COMPLIANT,
            False,
            verdict.reason,
            verdict.summary() + (f". {gap_note}" if missing else ""),
        )
    elif missing:
        comp.condition(
            COMPLIANT, False, "ControlGaps", f"in force: {'; '.join(verdict.met)}. {gap_note}"
        )
    else:
        comp.condition(COMPLIANT, True, "ControlsInForce", "; ".join(verdict.met))


def _controls(
    comp: Composition,
    spec: ContactCenterSpec,
    storage: rules.StoragePolicy,
    *,
    replica: str | None,
    gaps: set[Gap],
    geo_copy: str | None,
) -> list[Control]:
    """The controls this endpoint's composition puts in place, in words an auditor reads, each
    with the resources implementing it on this cloud (:func:`implemented_by`).

    A control the cloud reported as a gap (``comp.gap``) is left out: the list says only what
    the composed resources can enforce, and :func:`fnplatform.rules.controls.assess` says which of
    them the providers have applied.
    """
    resources = implemented_by(comp)

    def control(name: str, key: str) -> Control:
        return Control(name, resources[key])

    controls = [
        control(
            f"ingress: SIP {spec.sip.signalingPorts} (udp, tcp) and RTP "
            f"{spec.sip.mediaPorts} (udp) from {len(spec.sip.trustedCidrs)} trusted "
            "range(s) only",
            INGRESS_ONLY,
        ),
        control(
            f"encryption at rest: customer-managed key rotated every {KEY_ROTATION_DAYS} days",
            ENCRYPTION_AT_REST,
        ),
        control("recordings never public", NEVER_PUBLIC),
        control("recordings versioned or retained", VERSIONED),
        control(f"lifecycle: no expiry before {storage.retention_days} days", LIFECYCLE),
        control(
            f"tags: costCenter={spec.taggingPolicy.costCenter}, "
            f"complianceLevel={spec.taggingPolicy.complianceLevel}",
            TAGS,
        ),
    ]
    if Gap.BUCKET_MIN_TLS not in gaps:
        controls.insert(
            3, control("TLS 1.2 or newer required in transit to recordings", TLS_IN_TRANSIT)
        )
    if storage.lock:
        controls.append(control(f"compliance-mode lock: {storage.retention_days} days", LOCK))
    if storage.access_logging:
        controls.append(control("access logging", ACCESS_LOGGING))
    if replica is not None:
        controls.append(control("recordings replicated to a second region", REPLICATED))
    elif geo_copy is not None:
        controls.append(
            control(
                f"recordings replicated to {geo_copy} (geo-redundant "
                "storage: the same lock and key)",
                GEO_REPLICATED,
            )
        )
    if spec.failoverPolicy is not None and "failover-dns" not in gaps:
        controls.append(
            control(
                "DNS latency routing between the healthy sites"
                if spec.failoverPolicy.routing == "latency"
                else "DNS failover on health check",
                DNS_FAILOVER,
            )
        )
    if spec.failoverPolicy is not None:
        controls.append(
            control(
                f"secondary site in {spec.failoverPolicy.secondaryRegion}: its "
                "own network with the same SIP/RTP ingress",
                SECONDARY_SITE,
            )
        )
    return controls
