"""The contact-center module over gRPC: every rule (and its rejection), every cloud, failover.

Requests are the seed's endpoint (:func:`tests.support.cases.contact_center_composite`) with
one change per test; :func:`tests.support.cases.converge` plays Crossplane until everything
exists, so the assertions read the complete desired state, as on a live control plane.
"""

from __future__ import annotations

import copy
import dataclasses
import json
from pathlib import Path
from typing import Any

import providersim
import pytest
import yaml
from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from fnplatform.cloud import cloud_profile
from fnplatform.kinds import kind_of
from fnplatform.tagging import render_tags

from tests.support.cases import (
    CONTACT_CENTER_ENVIRONMENT,
    CONTACT_CENTER_SECONDARY,
    ModuleCase,
    as_reported,
    contact_center_case,
    contact_center_composite,
    converge,
    environment_config,
    family_provider,
    namespaced_twin,
)
from tests.support.controls import BREAKAGES, SYNCED_FALSE, Breakage, broken, resolve
from tests.support.deletion import deletion_order
from tests.support.harness import FunctionClient, Rendered
from tests.support.schemas import Catalog
from tests.support.table import case

CLOUDS = ("aws", "gcp", "azure")
TRUE, FALSE = fnv1.STATUS_CONDITION_TRUE, fnv1.STATUS_CONDITION_FALSE
UNKNOWN = fnv1.STATUS_CONDITION_UNKNOWN
EXPECTED_KINDS = {
    "aws": {
        "VPC",
        "Subnet",
        "InternetGateway",
        "SecurityGroup",
        "SecurityGroupIngressRule",
        "Key",
        "Alias",
        "Bucket",
        "BucketVersioning",
        "BucketServerSideEncryptionConfiguration",
        "BucketPublicAccessBlock",
        "BucketOwnershipControls",
        "BucketPolicy",
        "BucketObjectLockConfiguration",
        "BucketLifecycleConfiguration",
        "BucketLogging",
        "BucketReplicationConfiguration",
        "Role",
        "Policy",
        "RolePolicyAttachment",
        "HealthCheck",
        "Record",
    },
    "gcp": {
        "Network",
        "Subnetwork",
        "Firewall",
        "KeyRing",
        "CryptoKey",
        "CryptoKeyIAMMember",
        "Bucket",
        "BucketIAMMember",
        "HealthCheck",
        "RecordSet",
    },
    "azure": {
        "ResourceGroup",
        "VirtualNetwork",
        "Subnet",
        "SecurityGroup",
        "SecurityRule",
        "SubnetNetworkSecurityGroupAssociation",
        "Vault",
        "AccessPolicy",
        "Key",
        "UserAssignedIdentity",
        "Account",
        "Container",
        "ContainerImmutabilityPolicy",
        "Workspace",
        "MonitorDiagnosticSetting",
        "TrafficManagerProfile",
        "TrafficManagerExternalEndpoint",
    },
}


def run(
    client: FunctionClient,
    cloud: str,
    *,
    environment: dict[str, Any] | None = None,
    mutate: Any = None,
    **spec: Any,
) -> Rendered:
    """One pass for the seed's endpoint on ``cloud`` (failover on), changed by ``spec``."""
    case = contact_center_case(cloud)
    composite = contact_center_composite(cloud, failover=True, **spec)
    if mutate is not None:
        mutate(composite["spec"])
    required = case.fetched()
    if environment is not None:
        required["environment-0"] = [environment_config(f"contact-center-{cloud}", environment)]
    return client.run(case.request(composite=composite, required=required))


def converged(client: FunctionClient, cloud: str, mutate: Any = None, **spec: Any) -> Rendered:
    """Everything composed and Ready for the seed's endpoint on ``cloud`` changed by ``spec``."""
    case = contact_center_case(cloud)
    composite = contact_center_composite(cloud, failover=True, **spec)
    if mutate is not None:
        mutate(composite["spec"])
    rendered, _ = converge(client.run, case.with_composite(composite), passes=10)
    assert not rendered.fatal, rendered.fatal
    return rendered


def fatal_on(rendered: Rendered, field: str) -> str:
    """The fatal message, asserting it names ``field``."""
    assert rendered.fatal, f"expected a fatal result on {field}; got {rendered.messages}"
    message = rendered.fatal[0]
    assert message.startswith(field), message
    return message


def for_provider(rendered: Rendered, kind: str) -> list[dict[str, Any]]:
    return [
        body["spec"]["forProvider"]
        for body in rendered.resources.values()
        if body["kind"] == kind and "forProvider" in body["spec"]
    ]


# -- every cloud ------------------------------------------------------------------------------


@pytest.mark.parametrize("cloud", CLOUDS)
def test_converges_to_schema_valid_resources_on_every_cloud(
    client: FunctionClient,
    catalog: Catalog,
    cloud: str,
) -> None:
    rendered = converged(client, cloud)
    invalid = {n: e for n, b in rendered.resources.items() if (e := catalog.validate(b))}
    assert invalid == {}
    kinds = set(rendered.kinds.values())
    assert EXPECTED_KINDS[cloud] <= kinds, sorted(EXPECTED_KINDS[cloud] - kinds)
    composed = rendered.condition("Composed")
    assert composed is not None and composed.status == TRUE, composed


@pytest.mark.parametrize("cloud", CLOUDS)
def test_convergence_from_nothing_only_grows(client: FunctionClient, cloud: str) -> None:
    """Each pass's desired, fed back as observed Ready, never loses a resource."""
    case = contact_center_case(cloud)
    observed: dict[str, Any] = {}
    seen: set[str] = set()
    for _ in range(10):
        rendered = client.run(case.request(observed=observed))
        assert not rendered.fatal, rendered.fatal
        names = set(rendered.resources)
        assert seen <= names, f"dropped {seen - names}"
        if names == seen:
            break
        seen = names
        observed = as_reported(case, rendered.resources)
    assert rendered.condition("Composed").status == TRUE  # type: ignore[union-attr]


@pytest.mark.parametrize("cloud", CLOUDS)
def test_every_taggable_resource_carries_the_tagging_policy(
    client: FunctionClient,
    cloud: str,
) -> None:
    rendered = converged(client, cloud)
    wanted = {
        "costCenter": "cc-4711",
        "complianceLevel": "PCI-DSS",
        "claimName": "us-east-agent-cluster",
        "claimNamespace": "contact-center",
    }
    taggable = 0
    for name, body in rendered.resources.items():
        kind = kind_of(body)
        if kind.tag_style is None:
            continue
        taggable += 1
        tags = body["spec"]["forProvider"][kind.tags_field]
        expected = render_tags(kind.tag_style, wanted)
        assert expected.items() <= tags.items(), (name, tags)
    assert taggable >= 3  # GCP: the buckets and the crypto key; its network kinds have no labels
    if cloud == "gcp":
        assert render_tags(cloud_profile("gcp").tag_style, wanted)["compliancelevel"] == "pci-dss"


@pytest.mark.parametrize("cloud", CLOUDS)
def test_status_reports_ids_endpoints_and_compliant_controls(
    client: FunctionClient,
    cloud: str,
) -> None:
    rendered = converged(client, cloud)
    status = rendered.status
    assert status["cloud"] == cloud
    assert status["networkId"]
    assert status["securityGroupId"]
    assert status["recordingBucket"]["name"]
    assert status["recordingBucket"]["id"]
    assert status["kmsKeyId"]
    assert status["endpoints"]["primary"] == "203.0.113.10"
    assert status["endpoints"]["dns"]
    compliant = rendered.condition("Compliant")
    assert compliant is not None
    for control in (
        "compliance-mode lock: 400 days",
        "access logging",
        "customer-managed key",
        "never public",
    ):
        assert control in compliant.message, compliant.message
    if cloud == "gcp":
        # Cloud Storage cannot refuse plain-HTTP/old-TLS requests per bucket: not compliant,
        # and the claim says which control is missing instead of listing it as in force.
        assert compliant.status == FALSE and "bucket-min-tls" in compliant.message
        assert not any("TLS 1.2" in c for c in status["controls"])
    else:
        assert compliant.status == TRUE
        assert "TLS 1.2 or newer required in transit to recordings" in status["controls"]


# -- region allowlist -------------------------------------------------------------------------


@pytest.mark.parametrize("cloud", CLOUDS)
def test_unsupported_region_stops_with_the_allowed_ones(client: FunctionClient, cloud: str) -> None:
    message = fatal_on(run(client, cloud, region="antarctica-1"), "spec.region")
    assert "allowed:" in message and "antarctica-1" in message
    assert not run(client, cloud, region="antarctica-1").resources


def test_allowlist_comes_from_the_environment(client: FunctionClient) -> None:
    environment = {
        "aws": CONTACT_CENTER_ENVIRONMENT["aws"],
        "contactCenter": {"allowedRegions": {"aws": {"genesys-cloud": ["eu-west-1", "us-west-2"]}}},
    }
    message = fatal_on(run(client, "aws", environment=environment), "spec.region")
    assert message.endswith("allowed: eu-west-1, us-west-2")
    ok = run(client, "aws", environment=environment, region="eu-west-1")
    assert not ok.fatal, ok.fatal


@pytest.mark.parametrize(
    ("key", "listed", "field", "reason"),
    [
        case(
            "a typo in the platform's allowlist would allow a region no claim can use",
            "allowedRegions",
            {"aws": {"genesys-cloud": ["eu-west-1", "eu-wset-2"]}},
            "allowedRegions.aws.genesys-cloud[1]",
            "a typo in the platform's allowlist would allow a region no claim can use",
        ),
        case(
            "a residency list names regions the same way",
            "residency",
            {"GDPR": {"aws": ["eu-west-1", "mars-1"]}},
            "residency.GDPR.aws[1]",
            "a residency list names regions the same way",
        ),
    ],
)
def test_a_region_the_platform_lists_must_be_one_of_the_clouds(
    client: FunctionClient, key: str, listed: dict[str, Any], field: str, reason: str
) -> None:
    environment = {"aws": CONTACT_CENTER_ENVIRONMENT["aws"], "contactCenter": {key: listed}}

    def gdpr(spec: dict[str, Any]) -> None:
        spec["taggingPolicy"]["complianceLevel"] = "GDPR"
        spec["failoverPolicy"]["secondaryRegion"] = "eu-west-2"

    rendered = run(
        client,
        "aws",
        environment=environment,
        region="eu-west-1",
        mutate=gdpr if key == "residency" else None,
    )
    message = fatal_on(rendered, f"environment.contactCenter.{field}")
    assert " is not a region of aws; " in message, (reason, message)


@pytest.mark.parametrize("cloud", CLOUDS)
def test_the_default_region_lists_hold_only_the_clouds_regions(cloud: str) -> None:
    """The module's own tables (allowed per platform, EU residency) are subsets of the one
    table of the cloud's regions (clouds/<cloud>/regions.py)."""
    profile = cloud_profile(cloud)
    known = profile.regions
    assert set(profile.ccaas_regions) == {"genesys-cloud", "nice-cxone"}, profile.ccaas_regions
    for platform, allowed in profile.ccaas_regions.items():
        assert set(allowed) <= known, (platform, set(allowed) - known)
    assert set(profile.eu_regions) <= known, set(profile.eu_regions) - known


def test_secondary_and_replication_regions_are_checked_too(client: FunctionClient) -> None:
    def secondary(value: str) -> Any:
        return lambda spec: spec["failoverPolicy"].update(secondaryRegion=value)

    fatal_on(run(client, "aws", mutate=secondary("mars-1")), "spec.failoverPolicy.secondaryRegion")
    fatal_on(
        run(client, "aws", mutate=secondary("us-east-1")), "spec.failoverPolicy.secondaryRegion"
    )
    fatal_on(
        run(client, "aws", recording={"retentionDays": 30, "replicationRegion": "us-east-1"}),
        "spec.recording.replicationRegion",
    )


# -- ingress ----------------------------------------------------------------------------------


@pytest.mark.parametrize("everything", ["0.0.0.0/0", "::/0", "0.0.0.0/0 "])
def test_the_whole_internet_is_rejected_naming_field_and_index(
    client: FunctionClient,
    everything: str,
) -> None:
    sip = {"trustedCidrs": ["198.51.100.0/24", everything]}
    message = fatal_on(run(client, "aws", sip=sip), "spec.sip.trustedCidrs[1]")
    assert "whole internet" in message


@pytest.mark.parametrize(
    ("sip", "field"),
    [
        case(
            "a trusted CIDR that does not parse is refused naming its index: it would "
            "open the SIP security group to nothing or to all",
            {"trustedCidrs": ["not-a-cidr"]},
            "spec.sip.trustedCidrs[0]",
        ),
        case(
            "an empty trusted list is refused: SIP trunks with no trusted source cannot connect",
            {"trustedCidrs": []},
            "spec.sip.trustedCidrs",
        ),
        case(
            "a port range written high-low is refused naming signalingPorts",
            {"trustedCidrs": ["10.0.0.0/8"], "signalingPorts": "5080-5060"},
            "spec.sip.signalingPorts",
        ),
        case(
            "a media range overlapping the signaling ports is refused naming mediaPorts",
            {"trustedCidrs": ["10.0.0.0/8"], "mediaPorts": "5000-6000"},
            "spec.sip.mediaPorts",
        ),
        case(
            "a port above 65535 is refused naming mediaPorts",
            {"trustedCidrs": ["10.0.0.0/8"], "mediaPorts": "70000"},
            "spec.sip.mediaPorts",
        ),
    ],
)
def test_bad_sip_settings_are_refused(
    client: FunctionClient, sip: dict[str, Any], field: str
) -> None:
    fatal_on(run(client, "aws", sip=sip), field)


def test_an_unknown_sip_field_is_a_warning_naming_the_valid_ones(client: FunctionClient) -> None:
    """An API server serving the XRD prunes it too; the function says so instead of failing."""
    rendered = run(client, "aws", sip={"trustedCidrs": ["10.0.0.0/8"], "colour": "blue"})
    assert not rendered.fatal
    assert any(
        w.startswith("spec.sip.colour: unknown field") and "trustedCidrs" in w
        for w in rendered.warnings
    ), rendered.messages


def expected_rules(ranges: list[str]) -> set[tuple[str, int, int, str]]:
    return {
        (proto, low, high, cidr)
        for cidr in ranges
        for proto, low, high in (("udp", 5060, 5080), ("tcp", 5060, 5080), ("udp", 16384, 32767))
    }


def test_aws_admits_only_sip_and_rtp_from_trusted_ranges(client: FunctionClient) -> None:
    sip = {"trustedCidrs": ["198.51.100.0/24", "2001:db8::/48"]}
    rendered = converged(client, "aws", sip=sip)
    found = {
        (r["ipProtocol"], r["fromPort"], r["toPort"], r.get("cidrIpv4") or r["cidrIpv6"])
        for r in for_provider(rendered, "SecurityGroupIngressRule")
    }
    assert found == expected_rules(["198.51.100.0/24", "2001:db8::/48"])


def test_gcp_firewalls_admit_only_sip_and_rtp(client: FunctionClient) -> None:
    rendered = converged(client, "gcp")
    found = set()
    for rule in for_provider(rendered, "Firewall"):
        assert rule["direction"] == "INGRESS"
        (allow,) = rule["allow"]
        low, _, high = allow["ports"][0].partition("-")
        (source,) = rule["sourceRanges"]
        found.add((allow["protocol"], int(low), int(high or low), source))
    assert found == expected_rules(["52.129.96.0/20", "198.51.100.0/24"])


def test_azure_rules_have_unique_priorities_and_only_trusted_sources(
    client: FunctionClient,
) -> None:
    rendered = converged(client, "azure")
    for site in ("sip-ingress", "secondary-sip-ingress"):  # priorities are unique per NSG
        rules = [
            b["spec"]["forProvider"]
            for n, b in rendered.resources.items()
            if b["kind"] == "SecurityRule" and n.startswith(f"{site}-")
        ]
        assert len({r["priority"] for r in rules}) == len(rules) == 6
        found = {
            (
                r["protocol"].lower(),
                *map(int, r["destinationPortRange"].split("-")),
                r["sourceAddressPrefix"],
            )
            for r in rules
        }
        assert found == expected_rules(["52.129.96.0/20", "198.51.100.0/24"])
        assert all(r["access"] == "Allow" and r["direction"] == "Inbound" for r in rules)


def test_aws_security_group_description_is_set_at_creation_only(client: FunctionClient) -> None:
    """EC2 cannot change a group's description (the provider would replace the group, which
    upjet refuses): changing the platform must not leave the group failing to update."""
    rendered = converged(client, "aws")
    for name in ("sip-ingress", "secondary-sip-ingress"):
        group = rendered.resource(name)["spec"]
        assert "description" not in group["forProvider"]
        assert group["initProvider"]["description"].startswith("SIP/RTP of genesys-cloud")


def test_adding_a_trusted_range_renames_no_rule(client: FunctionClient) -> None:
    before = set(converged(client, "aws").resources)
    sip = {"trustedCidrs": ["203.0.113.0/24", "52.129.96.0/20", "198.51.100.0/24"]}
    after = set(converged(client, "aws", sip=sip).resources)
    assert before <= after
    assert len([n for n in after - before if n.startswith("sip-ingress-")]) == 3


# -- recordings -------------------------------------------------------------------------------


def test_pci_recordings_locked_logged_and_expiring_only_after_the_lock(
    client: FunctionClient,
) -> None:
    rendered = converged(client, "aws")
    lock = rendered.resource("recordings-lock")["spec"]["forProvider"]
    assert lock["rule"]["defaultRetention"] == {"mode": "COMPLIANCE", "days": 400}
    assert rendered.resource("recordings")["spec"]["forProvider"]["objectLockEnabled"] is True
    assert "recordings-logging" in rendered.resources
    rules = rendered.resource("recordings-lifecycle")["spec"]["forProvider"]["rule"]
    days = [r["expiration"][0]["days"] for r in rules if "expiration" in r]
    days += [
        r["noncurrentVersionExpiration"][0]["noncurrentDays"]
        for r in rules
        if "noncurrentVersionExpiration" in r
    ]
    assert days and min(days) >= 400
    policy = json.loads(rendered.resource("recordings-policy")["spec"]["forProvider"]["policy"])
    sids = {s["Sid"] for s in policy["Statement"]}
    assert {"DenyInsecureTransport", "DenyOutdatedTls"} <= sids


def test_pci_refuses_recordings_without_a_lock(client: FunctionClient) -> None:
    fatal_on(
        run(client, "gcp", recording={"retentionDays": 30, "objectLock": False}),
        "spec.recording.objectLock",
    )


@pytest.mark.parametrize("cloud", CLOUDS)
def test_gdpr_recordings_unlocked_unless_asked(client: FunctionClient, cloud: str) -> None:
    policy = {"costCenter": "cc-1", "complianceLevel": "GDPR"}
    plain = converged(client, cloud, taggingPolicy=policy, mutate=_in_the_eu(cloud))
    locked = converged(
        client,
        cloud,
        taggingPolicy=policy,
        mutate=_in_the_eu(cloud),
        recording={"retentionDays": 30, "objectLock": True},
    )
    assert "access logging" not in plain.status["controls"]
    assert not any(c.startswith("compliance-mode lock") for c in plain.status["controls"])
    assert "compliance-mode lock: 30 days" in locked.status["controls"]
    if cloud == "aws":
        assert "recordings-lock" not in plain.resources
        assert "recordings-lock" in locked.resources
    elif cloud == "gcp":
        bucket = plain.resource("recordings")["spec"]["forProvider"]
        assert bucket["retentionPolicy"]["isLocked"] is False
    else:
        assert plain.resource("recordings-immutability")["spec"]["forProvider"]["locked"] is False


# -- deletion (issue 23): locked recordings are kept, the claim still deletes -------------------

ESTATE = ("recordings", "recordings-key", "replica-key")


def _estate(name: str, cloud: str) -> bool:
    return (
        name in ESTATE
        or name.startswith(tuple(f"{p}-" for p in ESTATE))
        or (cloud == "azure" and name == "group")
    )


def _orphaned(body: dict[str, Any]) -> bool:
    return bool(body["spec"].get("deletionPolicy") == "Orphan")


@pytest.mark.parametrize("cloud", CLOUDS)
def test_locked_recordings_their_keys_and_settings_are_kept_on_delete(
    client: FunctionClient,
    catalog: Catalog,
    cloud: str,
) -> None:
    """PCI-DSS (compliance lock): the recordings estate is orphaned, so the claim deletes
    completely while the locked recordings stay private, readable and locked; nothing else is."""
    rendered = converged(client, cloud)
    kept = {n for n, b in rendered.resources.items() if _orphaned(b)}
    estate = {n for n in rendered.resources if _estate(n, cloud)}
    assert kept == estate
    assert {"recordings", "recordings-key"} <= kept
    if cloud == "aws":  # the public access block and TLS policy stay on the kept bucket
        assert {
            "recordings-public-access-block",
            "recordings-policy",
            "recordings-replica",
            "replica-key",
            "recordings-logs",
        } <= kept
    if cloud == "gcp":  # without its grant the storage agent could not decrypt
        assert "recordings-key-storage-grant" in kept
    if cloud == "azure":  # the account lives in the group: deleting the group deletes it
        assert {"group", "recordings-key-vault", "recordings-key-identity-access"} <= kept
    assert {n: e for n in kept if (e := catalog.validate(rendered.resources[n]))} == {}
    condition = rendered.condition("RecordingsOnDelete")
    assert condition is not None and condition.status == TRUE
    assert condition.reason == "RetainedUnderLock" and "400 days" in condition.message


def test_namespaced_kept_recordings_say_a_re_created_endpoint_gets_new_names(
    client: FunctionClient,
) -> None:
    """A v2 composite is named by the user; its global names (bucket, key ring, vault) carry
    its uid, so one re-created with the same name doesn't meet the kept ones: the condition
    says so (tests/test_global_names.py proves the names)."""
    twin = namespaced_twin(contact_center_case("gcp"))
    rendered, _ = converge(client.run, twin, passes=10)
    condition = rendered.condition("RecordingsOnDelete")
    assert condition is not None and condition.status == TRUE
    assert "re-created with the same name gets new ones" in condition.message
    assert all("deletionPolicy" not in b["spec"] for b in rendered.resources.values())
    kept = rendered.resource("recordings")["spec"]["managementPolicies"]
    assert "Delete" not in kept and "Create" in kept


@pytest.mark.parametrize("cloud", CLOUDS)
def test_unlocked_recordings_go_with_the_endpoint_after_their_key_waits(
    client: FunctionClient,
    cloud: str,
) -> None:
    """GDPR without a lock: nothing orphaned but the GCP crypto key (Cloud KMS would destroy
    its versions), the bucket never force-emptied, and its key waits for it (a Usage)."""
    policy = {"costCenter": "cc-1", "complianceLevel": "GDPR"}
    rendered = converged(client, cloud, taggingPolicy=policy, mutate=_in_the_eu(cloud))
    kept = {n for n, b in rendered.resources.items() if _orphaned(b)}
    if cloud == "gcp":
        assert kept == {"recordings-key", "recordings-key-ring", "recordings-key-storage-grant"}
    else:
        assert kept == set()
    # directly, or through the grant the bucket uses (GCP): only the Usages order needs
    assert ("recordings-key", "recordings") in deletion_order(rendered.resources), (
        "the key must not be deleted before the bucket it decrypts"
    )
    if cloud != "azure":
        assert (
            rendered.resource("recordings")["spec"]["forProvider"].get("forceDestroy", False)
            is False
        )
    condition = rendered.condition("RecordingsOnDelete")
    assert condition is not None and condition.status == FALSE
    assert condition.reason == "DeletedWithEndpoint"


# -- updates the clouds cannot make (issue 23) --------------------------------------------------


def _update(client: FunctionClient, cloud: str, change: Any) -> Rendered:
    """A reconcile of an endpoint that exists (its resources observed, its status written),
    after ``change`` to its spec."""
    case = contact_center_case(cloud)
    rendered, observed = converge(client.run, case, passes=10)
    composite = copy.deepcopy(case.composite)
    composite["status"] = rendered.status
    change(composite["spec"])
    return client.run(case.request(composite=composite, observed=observed, required=case.fetched()))


@pytest.mark.parametrize("cloud", CLOUDS)
def test_a_compliance_lock_is_extended_never_shortened_or_lifted(
    client: FunctionClient,
    cloud: str,
) -> None:
    """S3 object lock can't be turned off; locked GCS retention and Azure WORM only extend."""

    def retention(days: int) -> Any:
        return lambda spec: spec["recording"].update(retentionDays=days)

    def lift(spec: dict[str, Any]) -> None:
        spec["taggingPolicy"]["complianceLevel"] = "none"
        spec["recording"]["objectLock"] = False

    assert "400" in fatal_on(_update(client, cloud, retention(300)), "spec.recording.retentionDays")
    fatal_on(_update(client, cloud, lift), "spec.recording.objectLock")
    extended = _update(client, cloud, retention(500))
    assert not extended.fatal and extended.status["lockedRetentionDays"] == 500


@pytest.mark.parametrize("cloud", CLOUDS)
def test_what_exists_is_not_moved_to_another_region(client: FunctionClient, cloud: str) -> None:
    """A region change would strand the old resources (recordings included) and build new
    ones: refused, naming the field."""
    allowed = {
        "aws": ("us-east-2", "eu-west-1"),
        "gcp": ("us-east4", "us-central1"),
        "azure": ("eastus2", "uksouth"),
    }[cloud]

    def primary(spec: dict[str, Any]) -> None:
        spec["region"] = allowed[0]

    def secondary(spec: dict[str, Any]) -> None:
        spec["failoverPolicy"]["secondaryRegion"] = allowed[1]

    fatal_on(_update(client, cloud, primary), "spec.region")
    fatal_on(_update(client, cloud, secondary), "spec.failoverPolicy.secondaryRegion")
    unchanged = _update(client, cloud, lambda spec: None)
    assert not unchanged.fatal, unchanged.fatal


def test_gcp_bucket_uses_the_key_granted_to_the_storage_agent(client: FunctionClient) -> None:
    rendered = converged(client, "gcp")
    bucket = rendered.resource("recordings")["spec"]["forProvider"]
    key = bucket["encryption"]["defaultKmsKeyName"]
    assert key.endswith("/cryptoKeys/us-east-agent-cluster-x7k2p-recordings-key")
    grant = rendered.resource("recordings-key-storage-grant")["spec"]["forProvider"]
    assert grant["member"] == (
        "serviceAccount:service-123456789012@gs-project-accounts.iam.gserviceaccount.com"
    )
    assert bucket["retentionPolicy"] == {"retentionPeriod": 400 * 86400, "isLocked": True}


@pytest.mark.parametrize("entra_only", [False, True])
def test_azure_storage_refuses_shared_keys_once_the_provider_uses_entra(
    client: FunctionClient, entra_only: bool
) -> None:
    """Shared Key off only when the platform says its ProviderConfig has storageUseAzureAD:
    a provider still using the account key would get 403 on every read of the account."""
    settings = {
        "azure": {
            **CONTACT_CENTER_ENVIRONMENT["azure"],
            **({"storageUseAzureAD": True} if entra_only else {}),
        },
        "tags": {"owner": "cx-platform"},
    }
    case = dataclasses.replace(
        contact_center_case("azure"),
        environment=(environment_config("contact-center-azure", settings),),
    )
    rendered, _ = converge(client.run, case, passes=10)
    assert not rendered.fatal, rendered.fatal
    account = rendered.resource("recordings")["spec"]["forProvider"]
    assert account["defaultToOauthAuthentication"] is True
    if entra_only:
        assert account["sharedAccessKeyEnabled"] is False
    else:
        assert "sharedAccessKeyEnabled" not in account  # Azure's default: keys allowed


def _azure_case_with(**settings: Any) -> Any:
    environment = {
        "azure": {**CONTACT_CENTER_ENVIRONMENT["azure"], **settings},
        "tags": {"owner": "cx-platform"},
    }
    return dataclasses.replace(
        contact_center_case("azure"),
        environment=(environment_config("contact-center-azure", environment),),
    )


def test_the_vault_admits_only_the_providers_ranges_when_named(client: FunctionClient) -> None:
    """Key Vault's firewall: the provider's public ranges (a /32 as an address, which is all
    Key Vault takes), trusted Azure services (Storage unwrapping its key) bypass it."""
    rendered, _ = converge(
        client.run,
        _azure_case_with(keyVaultAllowedIpRanges=["198.51.100.0/24", "203.0.113.7/32"]),
        passes=10,
    )
    assert not rendered.fatal, rendered.fatal
    vault = rendered.resource("recordings-key-vault")["spec"]["forProvider"]
    assert vault["networkAcls"] == {
        "defaultAction": "Deny",
        "bypass": "AzureServices",
        "ipRules": ["198.51.100.0/24", "203.0.113.7"],
    }
    default, _ = converge(client.run, contact_center_case("azure"), passes=10)
    assert "networkAcls" not in default.resource("recordings-key-vault")["spec"]["forProvider"]


@pytest.mark.parametrize(
    ("ranges", "says"),
    [
        case(
            "Key Vault refuses private ranges in its firewall: a private CIDR is refused "
            "naming the field before Azure does",
            ["10.0.0.0/8"],
            "private",
        ),
        case(
            "Key Vault network rules take IPv4 only: an IPv6 range is refused saying IPv4",
            ["2001:db8::/32"],
            "IPv4",
        ),
        case(
            "a range with host bits set is refused saying so, rather than letting Azure "
            "reject or widen it",
            ["198.51.100.1/24"],
            "host bits",
        ),
    ],
)
def test_vault_ranges_key_vault_refuses_are_refused_naming_the_field(
    client: FunctionClient, ranges: list[str], says: str
) -> None:
    case = _azure_case_with(keyVaultAllowedIpRanges=ranges)
    rendered = client.run(case.request())
    (message,) = rendered.fatal
    assert message.startswith("environment.azure.keyVaultAllowedIpRanges"), message
    assert says in message


# -- TLS --------------------------------------------------------------------------------------


def test_genesys_cannot_do_tls13_and_says_so(client: FunctionClient) -> None:
    rendered = run(client, "aws", encryptionStandard="TLS1.3")
    assert not rendered.fatal
    condition = rendered.condition("SignalingTls")
    assert condition is not None and condition.status == FALSE
    assert condition.reason == "UnsupportedByPlatform"
    assert "TLS1.2 only" in condition.message


def test_platforms_without_that_limit_get_tls13(client: FunctionClient) -> None:
    rendered = run(client, "aws", encryptionStandard="TLS1.3", platform="nice-cxone")
    condition = rendered.condition("SignalingTls")
    assert condition is not None and condition.status != FALSE


def test_the_signaling_tls_standard_is_reported_as_not_enforced_here(
    client: FunctionClient,
) -> None:
    """Nothing composed terminates SIP-TLS: the condition must not claim success (item 22)."""
    rendered = run(client, "aws", encryptionStandard="TLS1.2")
    condition = rendered.condition("SignalingTls")
    assert condition is not None and condition.status == fnv1.STATUS_CONDITION_UNKNOWN
    assert condition.reason == "NotEnforcedHere"
    assert "set the minimum TLS version on the trunk in genesys-cloud" in condition.message


# -- data residency and compliance levels (issue 22 items 20 and 23) ----------------------------

EU = {
    "aws": ("eu-west-1", "eu-central-1"),
    "gcp": ("europe-west1", "europe-west3"),
    "azure": ("westeurope", "northeurope"),
}


def _in_the_eu(cloud: str) -> Any:
    def move(spec: dict[str, Any]) -> None:
        spec["region"], secondary = EU[cloud]
        if spec.get("failoverPolicy"):
            spec["failoverPolicy"]["secondaryRegion"] = secondary
        if spec.get("recording", {}).get("replicationRegion"):
            spec["recording"]["replicationRegion"] = secondary

    return move


@pytest.mark.parametrize("cloud", CLOUDS)
def test_gdpr_keeps_recordings_replicas_and_failover_in_the_eu(
    client: FunctionClient, cloud: str
) -> None:
    policy = {"costCenter": "cc-1", "complianceLevel": "GDPR"}
    assert converged(client, cloud, taggingPolicy=policy, mutate=_in_the_eu(cloud))

    def failover_to_the_us(spec: dict[str, Any]) -> None:
        _in_the_eu(cloud)(spec)
        spec["failoverPolicy"]["secondaryRegion"] = CONTACT_CENTER_SECONDARY[cloud]

    refused = run(client, cloud, taggingPolicy=policy, mutate=failover_to_the_us)
    message = fatal_on(refused, "spec.failoverPolicy.secondaryRegion")
    assert "outside the regions complianceLevel GDPR keeps call recordings in" in message
    assert not refused.resources  # refused before anything is created
    primary = fatal_on(run(client, cloud, taggingPolicy=policy), "spec.region")
    assert "complianceLevel GDPR" in primary


def test_a_platform_may_widen_gdpr_residency(client: FunctionClient) -> None:
    policy = {"costCenter": "cc-1", "complianceLevel": "GDPR"}
    environment = {
        "aws": CONTACT_CENTER_ENVIRONMENT["aws"],
        "contactCenter": {"residency": {"GDPR": {"aws": ["eu-west-1", "eu-west-2"]}}},
    }

    def to_london(spec: dict[str, Any]) -> None:
        spec["region"], spec["failoverPolicy"]["secondaryRegion"] = "eu-west-1", "eu-west-2"

    rendered = run(client, "aws", environment=environment, taggingPolicy=policy, mutate=to_london)
    assert not rendered.fatal, rendered.fatal


@pytest.mark.parametrize("cloud", CLOUDS)
def test_hipaa_locks_logs_and_keeps_six_years(client: FunctionClient, cloud: str) -> None:
    policy = {"costCenter": "cc-1", "complianceLevel": "HIPAA"}
    short = run(client, cloud, taggingPolicy=policy, recording={"retentionDays": 365})
    assert "HIPAA keeps records at least six years" in fatal_on(
        short, "spec.recording.retentionDays"
    )
    kept = converged(client, cloud, taggingPolicy=policy, recording={"retentionDays": 2190})
    assert "compliance-mode lock: 2190 days" in kept.status["controls"]
    assert "access logging" in kept.status["controls"] or "bucket-access-logging" in str(
        kept.response.conditions
    )


@pytest.mark.parametrize("cloud", CLOUDS)
def test_soc2_logs_access_without_a_lock(client: FunctionClient, cloud: str) -> None:
    policy = {"costCenter": "cc-1", "complianceLevel": "SOC2"}
    rendered = converged(client, cloud, taggingPolicy=policy)
    controls = rendered.status["controls"]
    assert not any(c.startswith("compliance-mode lock") for c in controls)
    assert "complianceLevel=SOC2" in " ".join(controls)


# -- failover ---------------------------------------------------------------------------------


def test_aws_failover_replica_replication_health_check_and_records(
    client: FunctionClient,
) -> None:
    rendered = converged(client, "aws")
    replica = rendered.resource("recordings-replica")["spec"]["forProvider"]
    assert replica["region"] == "us-west-2" and replica["objectLockEnabled"] is True
    assert rendered.resource("replica-key")["spec"]["forProvider"]["region"] == "us-west-2"
    replication = rendered.resource("recordings-replication-configuration")["spec"]
    (rule,) = replication["forProvider"]["rule"]
    assert rule["destination"]["bucketRef"] == {
        "name": "us-east-agent-cluster-x7k2p-recordings-replica"
    }
    assert rule["destination"]["encryptionConfiguration"] == {  # the key the replica reports
        "replicaKmsKeyId": (providersim.reported(rendered.resource("replica-key")) or {})["arn"]
    }
    assert replication["forProvider"]["role"] == (
        "arn:aws:iam::123456789012:role/us-east-agent-cluster-x7k2p-recordings-replication"
    )
    versioning = rendered.resource("recordings-replica-versioning")["spec"]["forProvider"]
    assert versioning["versioningConfiguration"]["status"] == "Enabled"
    check = rendered.resource("failover")["spec"]["forProvider"]
    assert check["type"] == "HTTPS" and check["resourcePath"] == "/health"
    assert check["ipAddress"] == "203.0.113.10"
    primary = rendered.resource("failover-primary")["spec"]["forProvider"]
    secondary = rendered.resource("failover-secondary")["spec"]["forProvider"]
    assert primary["failoverRoutingPolicy"] == {"type": "PRIMARY"}
    assert secondary["failoverRoutingPolicy"] == {"type": "SECONDARY"}
    assert primary["healthCheckIdRef"] == {"name": "us-east-agent-cluster-x7k2p-failover"}
    assert primary["zoneId"] == "Z0CONTACT000001"
    assert rendered.status["replicaBucket"]["name"].endswith("recordings-replica")


def test_aws_replication_role_uses_each_key_only_through_s3_in_its_region(
    client: FunctionClient,
) -> None:
    """Least privilege: decrypt via S3 in the source region, encrypt via S3 in the replica's."""
    rendered = converged(client, "aws")
    policy = json.loads(
        rendered.resource("recordings-replication-policy")["spec"]["forProvider"]["policy"]
    )
    kms = {
        tuple(st["Action"]): st["Condition"]["StringLike"]
        for st in policy["Statement"]
        if str(st["Action"][0]).startswith("kms:")
    }
    assert kms[("kms:Decrypt",)]["kms:ViaService"] == "s3.us-east-1.amazonaws.com"
    assert kms[("kms:Encrypt", "kms:GenerateDataKey")]["kms:ViaService"] == (
        "s3.us-west-2.amazonaws.com"
    )


def test_azure_failover_is_a_traffic_manager_profile(client: FunctionClient) -> None:
    rendered = converged(client, "azure")
    profile = rendered.resource("failover")["spec"]["forProvider"]
    assert profile["trafficRoutingMethod"] == "Priority"
    assert profile["monitorConfig"]["path"] == "/health"
    endpoints = sorted(
        for_provider(rendered, "TrafficManagerExternalEndpoint"), key=lambda e: e["priority"]
    )
    assert [(e["target"], e["priority"]) for e in endpoints] == [
        ("203.0.113.10", 1),
        ("203.0.113.20", 2),
    ]
    # eastus keeps a geo-redundant copy only in its pair, westus: not in westus2, said
    gaps = rendered.condition("CapabilitiesAvailable")
    assert gaps is not None and "bucket-replication" in gaps.message
    assert "paired region westus" in gaps.message and "no copy in westus2" in gaps.message
    assert rendered.resource("recordings")["spec"]["forProvider"]["accountReplicationType"] == (
        "ZRS"
    )
    assert "replicaRegion" not in rendered.status


def test_azure_replicates_recordings_to_the_paired_region_under_the_same_lock_and_key(
    client: FunctionClient,
    catalog: Catalog,
) -> None:
    """Issue 35 item 5: westeurope's pair is northeurope: the recordings account becomes
    RA-GZRS, its one container WORM policy and customer-managed key covering the copy."""

    def eu(spec: dict[str, Any]) -> None:
        spec["region"] = "westeurope"
        spec["failoverPolicy"]["secondaryRegion"] = "northeurope"

    rendered = converged(client, "azure", mutate=eu)
    account = rendered.resource("recordings")["spec"]["forProvider"]
    assert account["accountReplicationType"] == "RAGZRS"
    assert account["location"] == "westeurope"
    assert "customerManagedKey" in account
    assert rendered.resource("recordings-immutability")["spec"]["forProvider"]["locked"] is True
    assert rendered.status["replicaRegion"] == "northeurope"
    assert any(
        c.startswith("recordings replicated to northeurope") for c in rendered.status["controls"]
    )
    gaps = rendered.condition("CapabilitiesAvailable")
    assert gaps is None or "replication" not in gaps.message
    assert catalog.validate(rendered.resource("recordings")) == []


def _gcp_placement(rendered: Rendered, name: str = "recordings") -> dict[str, Any]:
    """The location fields of GCP bucket ``name``, and the location of its key."""
    bucket = rendered.resource(name)["spec"]["forProvider"]
    key = bucket["encryption"]["defaultKmsKeyName"].split("/locations/")[1].split("/")[0]
    return {
        **{k: bucket[k] for k in ("location", "customPlacementConfig", "rpo") if k in bucket},
        "key": key,
    }


def _ring_location(rendered: Rendered) -> str:
    return str(rendered.resource("recordings-key-ring")["spec"]["forProvider"]["location"])


def test_gcp_replicates_recordings_in_a_dual_region_under_the_same_lock_and_key(
    client: FunctionClient,
    catalog: Catalog,
) -> None:
    """Issue 35 item 5: us-east1 and us-west1 are a configurable dual-region of the US
    multi-region: the recordings bucket (and its log bucket) is that dual-region, its key ring
    in Cloud KMS's ``us`` as Cloud Storage requires, the one locked retention policy covering
    both copies."""
    rendered = converged(client, "gcp")
    dual = {
        "location": "US",
        "customPlacementConfig": {"dataLocations": ["US-EAST1", "US-WEST1"]},
        "rpo": "DEFAULT",
        "key": "us",
    }
    assert _gcp_placement(rendered) == dual
    assert _gcp_placement(rendered, "recordings-logs") == dual
    assert _ring_location(rendered) == "us"
    bucket = rendered.resource("recordings")["spec"]["forProvider"]
    assert bucket["retentionPolicy"] == {"retentionPeriod": 400 * 86400, "isLocked": True}
    assert bucket["labels"]["costcenter"] == "cc-4711"
    assert rendered.status["replicaRegion"] == "us-west1"
    assert "/locations/us/keyRings/" in rendered.status["kmsKeyId"]
    assert any(
        c.startswith("recordings replicated to us-west1") for c in rendered.status["controls"]
    )
    gaps = rendered.condition("CapabilitiesAvailable")
    assert gaps is None or "replication" not in gaps.message
    for name in ("recordings", "recordings-logs", "recordings-key-ring"):
        assert catalog.validate(rendered.resource(name)) == []


@pytest.mark.parametrize(
    ("pair", "level", "placement"),
    [
        case(
            "a predefined dual-region (us-east1 + us-central1 is NAM4) uses its own "
            "location code with its key ring in the same code",
            ("us-east1", "us-central1"),
            "PCI-DSS",
            {"location": "NAM4", "rpo": "DEFAULT", "key": "nam4"},
        ),
        case(
            "GDPR keeps both copies in the EU: a configurable dual-region in EU with the "
            "key in Cloud KMS's europe multi-region",
            ("europe-west1", "europe-west3"),
            "GDPR",
            {
                "location": "EU",
                "customPlacementConfig": {"dataLocations": ["EUROPE-WEST1", "EUROPE-WEST3"]},
                "rpo": "DEFAULT",
                "key": "europe",
            },
        ),
    ],
)
def test_gcp_dual_regions_and_their_key_locations(
    client: FunctionClient,
    catalog: Catalog,
    pair: tuple[str, str],
    level: str,
    placement: dict[str, Any],
) -> None:
    primary, copy = pair

    def place(spec: dict[str, Any]) -> None:
        spec["region"] = primary
        spec["failoverPolicy"]["secondaryRegion"] = copy
        spec["taggingPolicy"]["complianceLevel"] = level

    rendered = converged(client, "gcp", mutate=place)
    assert _gcp_placement(rendered) == placement
    assert _ring_location(rendered) == placement["key"]
    assert rendered.status["replicaRegion"] == copy
    assert catalog.validate(rendered.resource("recordings")) == []


@pytest.mark.parametrize(
    ("primary", "copy", "why"),
    [
        case(
            "two regions in no dual-region: the bucket stays single-region and "
            "CapabilitiesAvailable says why, instead of a bucket GCP refuses",
            "us-east1",
            "northamerica-northeast1",
            "us-east1 and northamerica-northeast1 are in no dual-region",
        ),
        case(
            "EUR7 is a dual-region but Cloud Storage names no Cloud KMS location for its "
            "key: a gap naming it, not an unkeyed bucket",
            "europe-west2",
            "europe-west3",
            "predefined dual-region EUR7",
        ),
    ],
)
def test_gcp_regions_in_no_keyed_dual_region_are_a_gap_naming_why(
    client: FunctionClient,
    primary: str,
    copy: str,
    why: str,
) -> None:
    def place(spec: dict[str, Any]) -> None:
        spec["region"] = primary
        spec["failoverPolicy"]["secondaryRegion"] = copy

    rendered = converged(client, "gcp", mutate=place)
    assert _gcp_placement(rendered) == {"location": primary.upper(), "key": primary}
    assert _ring_location(rendered) == primary
    gaps = rendered.condition("CapabilitiesAvailable")
    assert gaps is not None and "bucket-replication" in gaps.message
    assert why in gaps.message and f"no copy in {copy}" in gaps.message
    assert "replicaRegion" not in rendered.status
    assert not any("replicated" in c for c in rendered.status["controls"])


def _gcp_existing(client: FunctionClient, edit: Any) -> dict[str, Any]:
    """The converged GCP endpoint's observed state, its recordings estate changed by ``edit``
    (bucket bodies and the key ring's forProvider) as an older version had created it."""
    case = contact_center_case("gcp")
    _, observed = converge(client.run, case, passes=10)
    observed = copy.deepcopy(observed)
    edit(observed)
    return observed


def _single_region(observed: dict[str, Any]) -> None:
    for name in ("recordings", "recordings-logs"):
        body = observed[name]["spec"]["forProvider"]
        body["location"] = "US-EAST1"
        body.pop("customPlacementConfig")
        body.pop("rpo")
        body["encryption"]["defaultKmsKeyName"] = body["encryption"]["defaultKmsKeyName"].replace(
            "/locations/us/", "/locations/us-east1/"
        )
    observed["recordings-key-ring"]["spec"]["forProvider"]["location"] = "us-east1"


def test_gcp_existing_single_region_recordings_stay_where_they_are(
    client: FunctionClient,
) -> None:
    """An endpoint whose bucket was created in one region keeps it (a location is fixed at
    creation; the locked bucket could never be replaced) and its key ring (Cloud KMS never
    moves one): the gap says why there is no copy, status claims none."""
    observed = _gcp_existing(client, _single_region)
    rendered = client.run(contact_center_case("gcp").request(observed=observed))
    assert not rendered.fatal, rendered.fatal
    assert _gcp_placement(rendered) == {"location": "US-EAST1", "key": "us-east1"}
    assert _gcp_placement(rendered, "recordings-logs") == {
        "location": "US-EAST1",
        "key": "us-east1",
    }
    assert _ring_location(rendered) == "us-east1"
    assert "/locations/us-east1/" in rendered.status["kmsKeyId"]
    gaps = rendered.condition("CapabilitiesAvailable")
    assert gaps is not None and "exists in US-EAST1 alone" in gaps.message
    assert "no copy in us-west1" in gaps.message
    assert "replicaRegion" not in rendered.status
    assert not any("replicated" in c for c in rendered.status["controls"])


def test_gcp_a_new_bucket_whose_key_ring_exists_elsewhere_stays_with_its_key(
    client: FunctionClient,
) -> None:
    """A key ring that exists in the primary region (and the recordings bucket not yet): the
    bucket is made where its key can encrypt it, single-region, and the gap says so."""

    def ring_only(observed: dict[str, Any]) -> None:
        _single_region(observed)
        del observed["recordings"]

    observed = _gcp_existing(client, ring_only)
    rendered = client.run(contact_center_case("gcp").request(observed=observed))
    assert not rendered.fatal, rendered.fatal
    assert _gcp_placement(rendered) == {"location": "US-EAST1", "key": "us-east1"}
    gaps = rendered.condition("CapabilitiesAvailable")
    assert gaps is not None and "its key ring exists in us-east1" in gaps.message


@pytest.mark.parametrize(
    ("change", "field"),
    [
        case(
            "moving the replica of a created dual-region is refused naming "
            "replicationRegion: the location is fixed at creation",
            {"recording": {"retentionDays": 400, "replicationRegion": "us-east4"}},
            "spec.recording.replicationRegion",
        ),
        case(
            "dropping the failover that made the dual-region is refused the same way, "
            "before anything is replaced",
            {"failoverPolicy": None},
            "spec.recording.replicationRegion",
        ),
    ],
)
def test_gcp_a_dual_region_copy_cannot_move_or_go(
    client: FunctionClient,
    change: dict[str, Any],
    field: str,
) -> None:
    """The dual-region is fixed at creation: moving the copy, or dropping the region it comes
    from, is refused on the field to keep, before anything changes."""
    case = contact_center_case("gcp")
    _, observed = converge(client.run, case, passes=10)
    composite = contact_center_composite("gcp", failover=True)
    for key, value in change.items():
        if value is None:
            composite["spec"].pop(key)
        else:
            composite["spec"][key] = value
    rendered = client.run(case.request(composite=composite, observed=observed))
    message = fatal_on(rendered, field)
    assert "dual-region US (US-EAST1+US-WEST1), fixed at creation" in message


def test_gcp_failover_with_addresses_is_a_health_checked_routing_policy(
    client: FunctionClient,
) -> None:
    rendered = converged(client, "gcp")
    record = rendered.resource("failover-record")["spec"]["forProvider"]
    policy = record["routingPolicy"]
    assert policy["healthCheckRef"] == {"name": "us-east-agent-cluster-x7k2p-failover"}
    assert policy["primaryBackup"]["primary"]["externalEndpoints"] == ["203.0.113.10"]
    assert policy["primaryBackup"]["backupGeo"][0]["location"] == "us-west1"


def test_gcp_failover_to_host_names_is_a_condition_not_a_silent_drop(
    client: FunctionClient,
) -> None:
    def hostnames(spec: dict[str, Any]) -> None:
        spec["failoverPolicy"].update(
            primaryTarget="sbc-a.example.com", secondaryTarget="sbc-b.example.com"
        )

    rendered = converged(client, "gcp", mutate=hostnames)
    assert "failover-record" not in rendered.resources
    gaps = rendered.condition("CapabilitiesAvailable")
    assert gaps is not None and "failover-dns" in gaps.message


# -- provider health first (issue 35 item 6) -------------------------------------------------


def _with_providers(
    client: FunctionClient,
    cloud: str,
    providers: list[dict[str, Any]] | None,
    observed: dict[str, Any] | None = None,
) -> Rendered:
    case = contact_center_case(cloud)
    required = case.fetched()
    if providers is None:
        del required["providers"]
    else:
        required["providers"] = providers
    return client.run(case.request(observed=observed or {}, required=required))


@pytest.mark.parametrize("cloud", CLOUDS)
def test_a_new_endpoint_waits_while_its_provider_is_not_healthy(
    client: FunctionClient,
    cloud: str,
) -> None:
    rendered = _with_providers(client, cloud, [family_provider(cloud, healthy=False)])
    assert not rendered.fatal and rendered.resources == {}
    health = rendered.condition("ProviderHealthy")
    assert health is not None and health.status == FALSE
    assert f"Provider crossplane-contrib-provider-family-{cloud} (provider-family-{cloud})" in (
        health.message
    )
    assert "cannot pull package: unauthorized" in health.message
    composed = rendered.condition("Composed")
    assert composed is not None and composed.status == FALSE
    assert composed.reason == "WaitingForProvider"
    assert f"provider-family-{cloud}" in composed.message
    # the Providers are asked for every pass: all of them, selected by package afterwards
    assert rendered.requirements["providers"]["kind"] == "Provider"


@pytest.mark.parametrize("cloud", CLOUDS)
def test_an_existing_endpoint_keeps_everything_while_its_provider_is_not_healthy(
    client: FunctionClient,
    cloud: str,
) -> None:
    ready, observed = converge(client.run, contact_center_case(cloud), passes=10)
    rendered = _with_providers(
        client, cloud, [family_provider(cloud, healthy=False)], observed=observed
    )
    assert not rendered.fatal
    assert set(rendered.resources) == set(ready.resources)
    health = rendered.condition("ProviderHealthy")
    assert health is not None and health.status == FALSE
    assert "existing resources are kept" in health.message


@pytest.mark.parametrize("cloud", CLOUDS)
def test_a_healthy_provider_is_said_and_composes(client: FunctionClient, cloud: str) -> None:
    rendered = _with_providers(client, cloud, [family_provider(cloud)])
    assert rendered.resources
    health = rendered.condition("ProviderHealthy")
    assert health is not None and health.status == TRUE


def test_providers_of_other_families_do_not_count(client: FunctionClient) -> None:
    """An unhealthy GCP provider does not hold an AWS endpoint; no AWS family provider at all
    is Unknown, naming the package looked for, and composes."""
    rendered = _with_providers(client, "aws", [family_provider("gcp", healthy=False)])
    assert rendered.resources
    health = rendered.condition("ProviderHealthy")
    assert health is not None and health.status == UNKNOWN
    assert "provider-family-aws" in health.message


def test_a_new_endpoint_composes_nothing_before_the_providers_are_read(
    client: FunctionClient,
) -> None:
    rendered = _with_providers(client, "aws", None)
    assert rendered.resources == {} and not rendered.fatal
    assert "providers" in rendered.requirements


# -- latency routing (issue 35 item 4) ------------------------------------------------------


def _latency(spec: dict[str, Any]) -> None:
    spec["failoverPolicy"]["routing"] = "latency"


@pytest.mark.parametrize("cloud", CLOUDS)
def test_latency_routing_converges_schema_valid_with_its_status(
    client: FunctionClient,
    catalog: Catalog,
    cloud: str,
) -> None:
    rendered = converged(client, cloud, mutate=_latency)
    invalid = {n: e for n, b in rendered.resources.items() if (e := catalog.validate(b))}
    assert invalid == {}
    assert rendered.status["endpoints"]["routing"] == "latency"
    assert "DNS latency routing between the healthy sites" in rendered.status["controls"]
    assert "DNS failover on health check" not in rendered.status["controls"]
    assert all(rendered.ready(name) for name in rendered.resources)


def test_aws_latency_records_one_per_region_each_health_checked(client: FunctionClient) -> None:
    """Route 53 latency records: an unhealthy site leaves the answers only with its own check."""
    rendered = converged(client, "aws", mutate=_latency)
    checks = {
        rendered.resource(n)["spec"]["forProvider"]["ipAddress"]
        for n in ("failover", "failover-secondary-check")
    }
    assert checks == {"203.0.113.10", "203.0.113.20"}
    primary = rendered.resource("failover-primary")["spec"]["forProvider"]
    secondary = rendered.resource("failover-secondary")["spec"]["forProvider"]
    assert primary["latencyRoutingPolicy"] == {"region": "us-east-1"}
    assert secondary["latencyRoutingPolicy"] == {"region": "us-west-2"}
    assert "failoverRoutingPolicy" not in primary and "failoverRoutingPolicy" not in secondary
    # the set identifiers stay: switching routing updates the records, never replaces them
    assert (primary["setIdentifier"], secondary["setIdentifier"]) == ("primary", "secondary")
    assert primary["healthCheckIdRef"] == {"name": "us-east-agent-cluster-x7k2p-failover"}
    assert secondary["healthCheckIdRef"] == {
        "name": "us-east-agent-cluster-x7k2p-failover-secondary-check"
    }


def test_azure_latency_is_traffic_manager_performance_routing(client: FunctionClient) -> None:
    rendered = converged(client, "azure", mutate=_latency)
    assert rendered.resource("failover")["spec"]["forProvider"]["trafficRoutingMethod"] == (
        "Performance"
    )
    endpoints = for_provider(rendered, "TrafficManagerExternalEndpoint")
    assert {(e["target"], e["endpointLocation"]) for e in endpoints} == {
        ("203.0.113.10", "eastus"),
        ("203.0.113.20", "westus2"),
    }
    assert all("priority" not in e for e in endpoints)


def test_gcp_latency_is_geolocation_routing_and_says_so(client: FunctionClient) -> None:
    """Cloud DNS has no latency policy: geolocation routing over both health-checked sites,
    and the CapabilitiesAvailable gap names the substitute."""
    rendered = converged(client, "gcp", mutate=_latency)
    policy = rendered.resource("failover-record")["spec"]["forProvider"]["routingPolicy"]
    assert "primaryBackup" not in policy and policy["enableGeoFencing"] is False
    assert {
        (g["location"], g["healthCheckedTargets"]["externalEndpoints"][0]) for g in policy["geo"]
    } == {("us-east1", "203.0.113.10"), ("us-west1", "203.0.113.20")}
    gaps = rendered.condition("CapabilitiesAvailable")
    assert gaps is not None and "latency-routing" in gaps.message
    assert "geolocation" in gaps.message


def test_an_unknown_routing_is_refused_naming_the_field(client: FunctionClient) -> None:
    def weighted(spec: dict[str, Any]) -> None:
        spec["failoverPolicy"]["routing"] = "weighted"

    fatal_on(run(client, "aws", mutate=weighted), "spec.failoverPolicy.routing")


# -- the secondary site (issue 22 item 21) ----------------------------------------------------

SECONDARY_KINDS = {
    "aws": ("VPC", "SecurityGroup"),
    "gcp": ("Network", None),
    "azure": ("VirtualNetwork", "SecurityGroup"),
}


def _region_of(body: dict[str, Any]) -> str | None:
    spec = body["spec"]["forProvider"]
    return spec.get("region") or spec.get("location")


@pytest.mark.parametrize("cloud", CLOUDS)
def test_failover_builds_the_secondary_site_network_and_sip_ingress(
    client: FunctionClient,
    catalog: Catalog,
    cloud: str,
) -> None:
    """The failover region gets its own network (sibling range) and the same SIP/RTP rules,
    so the secondary record points at a site this endpoint built; every body schema-valid."""
    rendered = converged(client, cloud)
    secondary = CONTACT_CENTER_SECONDARY[cloud]
    site = {n: b for n, b in rendered.resources.items() if n.startswith("secondary-")}
    assert {n: e for n, b in site.items() if (e := catalog.validate(b))} == {}
    network_kind, group_kind = SECONDARY_KINDS[cloud]
    assert rendered.kinds["secondary-network"] == network_kind
    regional = [b for b in site.values() if _region_of(b) is not None]
    assert regional and {_region_of(b) for b in regional} == {secondary}
    ranges = {
        "aws": ("secondary-network", "cidrBlock"),
        "gcp": ("secondary-network-subnet", "ipCidrRange"),
        "azure": ("secondary-network", "addressSpace"),
    }[cloud]
    cidr = rendered.resource(ranges[0])["spec"]["forProvider"][ranges[1]]
    assert cidr in ("10.61.0.0/16", ["10.61.0.0/16"])  # the sibling of 10.60.0.0/16
    primary_rules = {
        n.removeprefix("sip-ingress-") for n in rendered.resources if n.startswith("sip-ingress-")
    }
    secondary_rules = {
        n.removeprefix("secondary-sip-ingress-")
        for n in site
        if n.startswith("secondary-sip-ingress-")
    }
    assert primary_rules and primary_rules == secondary_rules
    if group_kind is not None:
        assert rendered.kinds["secondary-sip-ingress"] == group_kind
    status = rendered.status["secondarySite"]
    assert status["region"] == secondary and status["networkId"]
    assert status["securityGroupId"]
    compliant = rendered.condition("Compliant")
    assert compliant is not None and f"secondary site in {secondary}" in compliant.message


def test_the_secondary_site_follows_its_network_rules(client: FunctionClient) -> None:
    """AWS: the VPC's public subnets are in the secondary region's zones; the security group
    is in the secondary VPC, never the primary one."""
    rendered = converged(client, "aws")
    subnet = rendered.resource("secondary-network-public-a")["spec"]["forProvider"]
    assert subnet["availabilityZone"] == "us-west-2a"
    group = rendered.resource("secondary-sip-ingress")["spec"]["forProvider"]
    assert group["vpcIdRef"] == {"name": "us-east-agent-cluster-x7k2p-secondary-network"}


def test_no_failover_no_secondary_site(client: FunctionClient) -> None:
    def no_failover(spec: dict[str, Any]) -> None:
        del spec["failoverPolicy"]

    rendered = converged(client, "aws", mutate=no_failover)
    assert not [n for n in rendered.resources if n.startswith("secondary-")]
    assert "secondarySite" not in rendered.status


def test_the_secondary_range_is_chosen_or_refused_when_it_overlaps(
    client: FunctionClient,
) -> None:
    def cidr(value: str) -> Any:
        return lambda spec: spec["failoverPolicy"].update(networkCidr=value)

    chosen = converged(client, "gcp", mutate=cidr("172.20.0.0/20"))
    subnet = chosen.resource("secondary-network-subnet")["spec"]["forProvider"]
    assert subnet["ipCidrRange"] == "172.20.0.0/20"
    message = fatal_on(
        run(client, "aws", mutate=cidr("10.60.128.0/17")), "spec.failoverPolicy.networkCidr"
    )
    assert "overlaps" in message
    # A whole private block has no private sibling: the user names the range.
    fatal_on(
        run(client, "azure", network={"cidr": "192.168.0.0/16"}), "spec.failoverPolicy.networkCidr"
    )
    # AWS VPCs are /16 to /24: the secondary range is checked as the primary one is.
    fatal_on(run(client, "aws", mutate=cidr("172.16.0.0/12")), "spec.failoverPolicy.networkCidr")


# -- Azure resource group, placement ------------------------------------------------------------


def test_azure_composes_its_own_stateful_resource_group(client: FunctionClient) -> None:
    rendered = converged(client, "azure")
    group = rendered.resource("group")
    assert kind_of(group).stateful
    name = group["metadata"]["annotations"]["crossplane.io/external-name"]
    grouped = [
        b["spec"]["forProvider"]["resourceGroupName"]
        for b in rendered.resources.values()
        if "resourceGroupName" in b["spec"].get("forProvider", {})
    ]
    assert grouped and set(grouped) == {name}


@pytest.mark.parametrize(
    ("cloud", "environment", "field"),
    [
        case(
            "AWS needs the account id for ARNs: without it the fatal result names "
            "environment.aws.accountId",
            "aws",
            {},
            "environment.aws.accountId",
        ),
        case(
            "GCP needs the project number for service agent identities: without it the "
            "fatal result names environment.gcp.projectNumber",
            "gcp",
            {"gcp": {"project": "p"}},
            "environment.gcp.projectNumber",
        ),
        case(
            "Azure needs the Key Vault admin's object id: without it the fatal result "
            "names environment.azure.keyVaultAdminObjectId",
            "azure",
            {"azure": {"tenantId": "t"}},
            "environment.azure.keyVaultAdminObjectId",
        ),
    ],
)
def test_missing_placement_settings_name_the_environment_field(
    client: FunctionClient,
    cloud: str,
    environment: dict[str, Any],
    field: str,
) -> None:
    fatal_on(run(client, cloud, environment=environment), field)


def test_claim_labels_are_required_for_the_tagging_policy(client: FunctionClient) -> None:
    case = contact_center_case("aws")
    composite = copy.deepcopy(case.composite)
    composite["metadata"]["labels"] = {}
    fatal_on(client.run(case.request(composite=composite)), "metadata.labels")


@pytest.mark.parametrize("cloud", CLOUDS)
def test_same_input_same_output(client: FunctionClient, cloud: str) -> None:
    one = converged(client, cloud).response.SerializeToString(deterministic=True)
    two = converged(client, cloud).response.SerializeToString(deterministic=True)
    assert one == two


# -- examples ---------------------------------------------------------------------------------


EXAMPLES = Path(__file__).resolve().parent.parent / "examples" / "contact-center"


def test_provider_configs_use_injected_identities_and_validate(catalog: Catalog) -> None:
    providerconfigs = EXAMPLES / "platform" / "providerconfigs.yaml"
    documents = list(yaml.safe_load_all(providerconfigs.read_text()))
    assert {d["apiVersion"].split(".")[0] for d in documents} == {"aws", "gcp", "azure"}
    for document in documents:
        assert catalog.validate(document) == [], document["metadata"]["name"]
        credentials = document["spec"]["credentials"]
        assert credentials["source"] in ("IRSA", "InjectedIdentity", "OIDCTokenFile")
        assert "secretRef" not in credentials  # no static keys anywhere


def test_example_claims_are_valid_endpoints_and_match_their_xrs() -> None:
    from fnplatform.composers.contact_center.model import ContactCenterSpec

    pairs = {
        "claim-us-east-agent-cluster.yaml": "xr-aws.yaml",
        "claim-aws-failover.yaml": "xr-aws-failover.yaml",
        "claim-azure.yaml": "xr-azure.yaml",
        "claim-gcp.yaml": "xr-gcp.yaml",
    }
    for claim_file, xr_file in pairs.items():
        claim = yaml.safe_load((EXAMPLES / claim_file).read_text())
        xr = yaml.safe_load((EXAMPLES / xr_file).read_text())
        assert claim["kind"] == "ContactCenterEndpointClaim"
        ContactCenterSpec.model_validate(claim["spec"])
        assert claim["spec"] == xr["spec"], claim_file
        labels = xr["metadata"]["labels"]
        assert labels["crossplane.io/claim-name"] == claim["metadata"]["name"]
    seed = yaml.safe_load((EXAMPLES / "claim-us-east-agent-cluster.yaml").read_text())["spec"]
    assert (seed["cloud"], seed["encryptionStandard"], seed["platform"]) == (
        "aws",
        "TLS1.3",
        "genesys-cloud",
    )
    assert seed["taggingPolicy"]["complianceLevel"] == "PCI-DSS"


def test_an_unknown_sip_field_is_ignored_with_a_warning(client: FunctionClient) -> None:
    """An API server serving the XRD would prune it; render says so (function/composite.py)."""
    rendered = run(client, "aws", sip={"trustedCidrs": ["10.0.0.0/8"], "colour": "blue"})
    assert rendered.fatal == []
    assert any(w.startswith("spec.sip.colour: unknown field") for w in rendered.warnings)


def test_the_documents_claim_shape_gets_one_fatal_naming_spec_parameters(
    client: FunctionClient,
) -> None:
    """The guide writes spec.parameters.<field> (and a compositionRef): one clear error."""
    case = contact_center_case("aws")
    composite = contact_center_composite("aws")
    fields = dict(composite["spec"])
    composite["spec"] = {
        "parameters": fields,
        "compositionRef": {"name": "contact-center-genesys-aws"},
    }
    rendered = client.run(case.request(composite=composite))
    (message,) = rendered.fatal
    assert message.startswith(
        f"spec.parameters: {composite['kind']} takes its fields directly under spec, not under "
        "spec.parameters: move "
    )
    assert "platform" in message and "region" in message
    assert not rendered.resources


# -- Compliant lists a control only while what implements it is Synced and Ready --------------

#: (cloud, words of the control, implementing resource (``<prefix>*``: the first of them), why
#: this resource carries the control).
IMPLEMENTING = [
    (
        "aws",
        "encryption at rest",
        "recordings-encryption",
        "the bucket's SSE-KMS configuration: the provider cannot apply it, the bucket is not "
        "encrypted with the customer key",
    ),
    ("aws", "encryption at rest", "recordings-key", "the customer-managed KMS key itself"),
    ("aws", "recordings never public", "recordings-public-access-block", "the public access block"),
    ("aws", "recordings never public", "recordings-ownership", "bucket-owner-enforced: no ACLs"),
    ("aws", "TLS 1.2 or newer", "recordings-policy", "the bucket policy denies old TLS"),
    ("aws", "versioned or retained", "recordings-versioning", "the bucket's versioning"),
    ("aws", "lifecycle: no expiry before", "recordings-lifecycle", "the lifecycle rules"),
    ("aws", "compliance-mode lock", "recordings-lock", "the object lock configuration"),
    ("aws", "access logging", "recordings-logging", "the logging configuration"),
    ("aws", "access logging", "recordings-logs-public-access-block", "a setting of the log bucket"),
    ("aws", "ingress: SIP", "sip-ingress", "the security group"),
    ("aws", "ingress: SIP", "sip-ingress-*", "one of its ingress rules"),
    (
        "aws",
        "replicated to a second region",
        "recordings-replication-configuration",
        "the replication configuration",
    ),
    ("aws", "replicated to a second region", "replica-key", "the replica's key"),
    ("aws", "DNS failover", "failover", "the health check"),
    ("aws", "secondary site", "secondary-sip-ingress-*", "a rule of the secondary site"),
    ("aws", "tags: costCenter", "network", "a tagged resource that implements nothing else"),
    (
        "gcp",
        "encryption at rest",
        "recordings-key-storage-grant",
        "the storage agent's grant on the key: without it the bucket cannot use the key",
    ),
    ("gcp", "encryption at rest", "recordings", "the bucket names the default KMS key"),
    ("gcp", "compliance-mode lock", "recordings", "the bucket's locked retention policy"),
    ("gcp", "ingress: SIP", "sip-ingress-*", "one firewall per rule"),
    ("gcp", "access logging", "recordings-logs", "the log bucket"),
    ("gcp", "replicated to", "recordings", "the dual-region bucket"),
    ("gcp", "DNS failover", "failover-record", "the failover record set"),
    ("gcp", "secondary site", "secondary-network", "the secondary site's network"),
    (
        "azure",
        "encryption at rest",
        "recordings-key-identity-access",
        "the storage identity's grant on the vault",
    ),
    ("azure", "encryption at rest", "recordings-key-vault", "the key vault"),
    ("azure", "recordings never public", "recordings-container", "the private container"),
    ("azure", "TLS 1.2 or newer", "recordings", "the account's minimum TLS version"),
    ("azure", "compliance-mode lock", "recordings-immutability", "the locked immutability policy"),
    (
        "azure",
        "lifecycle: no expiry before",
        "recordings-immutability",
        "the immutability policy retains the recordings",
    ),
    ("azure", "access logging", "recordings-logging", "the diagnostic setting"),
    ("azure", "ingress: SIP", "sip-ingress-association", "the NSG's subnet association"),
    ("azure", "DNS failover", "failover-primary", "the primary endpoint"),
]


@pytest.fixture(scope="module")
def converged_observed(client: FunctionClient) -> dict[str, tuple[ModuleCase, dict[str, Any]]]:
    """Per cloud, the seed's endpoint (failover on) and its converged observed state."""
    out = {}
    for cloud in CLOUDS:
        case = contact_center_case(cloud).with_composite(
            contact_center_composite(cloud, failover=True)
        )
        _, observed = converge(client.run, case, passes=10)
        out[cloud] = (case, observed)
    return out


@pytest.mark.parametrize("cloud", CLOUDS)
def test_compliant_lists_every_control_once_everything_is_synced_and_ready(
    converged_observed: dict[str, tuple[ModuleCase, dict[str, Any]]],
    client: FunctionClient,
    cloud: str,
) -> None:
    case, observed = converged_observed[cloud]
    rendered = client.run(case.request(observed=observed))
    compliant = rendered.condition("Compliant")
    assert compliant is not None
    controls = rendered.status["controls"]
    assert len(controls) >= 10, controls
    # GCP lacks the TLS control (a gap): False for that alone, every other control in force
    assert (compliant.status, compliant.reason) == (
        (FALSE, "ControlGaps") if cloud == "gcp" else (TRUE, "ControlsInForce")
    )
    for control in controls:
        assert control in compliant.message, (control, compliant.message)


def test_a_first_pass_vouches_for_nothing(client: FunctionClient) -> None:
    """Nothing exists yet: every control is not verified, none listed as in force."""
    rendered = client.run(contact_center_case("aws").request(observed={}))
    compliant = rendered.condition("Compliant")
    assert compliant is not None
    assert (compliant.status, compliant.reason) == (FALSE, "ControlNotVerified")
    assert "encryption at rest" in compliant.message
    assert (
        "[recordings-encryption: not created yet" in compliant.message
        or "recordings: not created yet" in compliant.message
    ), compliant.message
    assert rendered.status["controls"] == []


@pytest.mark.parametrize("breakage", BREAKAGES, ids=lambda b: b.name)
@pytest.mark.parametrize("row", IMPLEMENTING, ids=[f"{c}-{r}" for c, _, r, _ in IMPLEMENTING])
def test_a_control_whose_resource_fails_is_not_listed_as_met(
    converged_observed: dict[str, tuple[ModuleCase, dict[str, Any]]],
    client: FunctionClient,
    row: tuple[str, str, str, str],
    breakage: Breakage,
) -> None:
    cloud, control, resource, why = row
    case, observed = converged_observed[cloud]
    name = resolve(observed, resource)
    rendered = client.run(case.request(observed=broken(observed, name, breakage)))
    compliant = rendered.condition("Compliant")
    assert compliant is not None, why
    assert (compliant.status, compliant.reason) == (FALSE, breakage.reason), (
        why,
        compliant.reason,
        compliant.message,
    )
    failing_part = compliant.message.split(". In force:")[0]
    assert control in failing_part, (why, compliant.message)
    assert f"[{name}: {breakage.says}" in compliant.message, (why, compliant.message)
    assert not any(control in c for c in rendered.status["controls"]), (
        why,
        rendered.status["controls"],
    )
    assert rendered.status["controls"], f"{why}: the other controls stay in force"


def test_a_reused_pass_never_keeps_a_control_the_provider_stopped_applying(
    converged_observed: dict[str, tuple[ModuleCase, dict[str, Any]]],
    client: FunctionClient,
) -> None:
    """The same endpoint, converged, then its encryption configuration refused, then applied
    again: each pass answers from its own observed conditions (a settled pass is reused only
    while the conditions it read are the same: fnplatform.engine.reuse)."""
    case, observed = converged_observed["aws"]
    refused = broken(observed, "recordings-encryption", SYNCED_FALSE)
    answers = []
    for state in (observed, refused, observed, refused):
        compliant = client.run(case.request(observed=state)).condition("Compliant")
        assert compliant is not None
        answers.append((compliant.status, compliant.reason))
    assert answers == [(TRUE, "ControlsInForce"), (FALSE, "ControlFailing")] * 2, answers
