"""The storage, key, ingress, network and failover capabilities on every cloud, over gRPC.

A tests-only composer (``probe``) calls each capability once, the way a domain composer would;
it is served by the real function server under the module name ``contact-center`` for the
duration of a test (``function.dispatch._composers`` is patched), so the requests take the
production path: step input, environment, placement, tags, holds, Usages, the stateful guard.
Every emitted body is validated against the provider schemas.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Iterator
from typing import Any

import pytest
from fnplatform.composition import Composition
from fnplatform.library import values
from fnplatform.library.calls import (
    add_bucket,
    add_failover_dns,
    add_ingress_rules,
    add_key,
    add_network,
    add_resource_group,
)
from fnplatform.library.rules import name_problem, rule_id
from fnplatform.library.specs import (
    BucketReader,
    BucketSpec,
    FailoverDnsSpec,
    IngressRule,
    IngressRulesSpec,
    KeySpec,
    NetworkSpec,
    ResourceGroupSpec,
)

import function.composite
from function import dispatch
from tests.support.cases import ModuleCase, converge, environment_config
from tests.support.harness import FunctionClient, Rendered
from tests.support.schemas import Catalog

CLOUDS = ("aws", "gcp", "azure")
REGION = {"aws": "eu-west-1", "gcp": "europe-west1", "azure": "westeurope"}
SCOPE = {"aws": "123456789012", "gcp": "acme-probe", "azure": "rg-probe"}
READER = {
    "aws": ("cloudfront.amazonaws.com",
            "arn:aws:cloudfront::123456789012:distribution/EDFDVBD6EXAMPLE"),
    "gcp": ("serviceAccount:cdn@acme-probe.iam.gserviceaccount.com", None),
    "azure": ("00000000-0000-0000-0000-00000000dddd", None),
}
ENVIRONMENT = {
    "gcp": {"projectNumber": "987654321098"},
    "azure": {"tenantId": "00000000-0000-0000-0000-00000000aaaa",
              "keyVaultAdminObjectId": "00000000-0000-0000-0000-00000000bbbb"},
}
AZURE = "/subscriptions/0000/resourceGroups/rg-probe/providers"
OBSERVED_STATUS: dict[str, dict[str, Any]] = {
    "key": {"atProvider": {"versionlessId": "https://kv.vault.azure.net/keys/key",
                           "arn": "arn:aws:kms:eu-west-1:123456789012:key/2222"}},
    "key-identity": {"atProvider": {
        "id": f"{AZURE}/Microsoft.ManagedIdentity/userAssignedIdentities/i",
        "principalId": "00000000-0000-0000-0000-00000000cccc"}},
    "bucket": {"atProvider": {"id": f"{AZURE}/Microsoft.Storage/storageAccounts/a"}},
    "bucket-logs": {"atProvider": {"id": f"{AZURE}/Microsoft.OperationalInsights/workspaces/w"}},
}
SIP = IngressRule("udp", 5060, 5080, "198.51.100.0/24", "SIP")
RTP = IngressRule("udp", 16384, 32767, "198.51.100.0/24", "RTP")
EXTRA = IngressRule("tcp", 5061, 5061, "2001:db8::/48", "SIP TLS")


def probe(comp: Composition) -> None:
    """One resource of each capability, from a synthetic composite's spec."""
    spec = comp.spec
    comp.place(spec["cloud"], cloud_field="spec.cloud", region=spec["region"],
               region_field="spec.region", scope=spec["scope"], scope_field="spec.scope")
    comp.tag_with({"costCenter": "probe"}, field="spec.tags")
    if add_resource_group.provided_on(comp.cloud):
        add_resource_group(comp, "group", ResourceGroupSpec(group_name=comp.scope))
    add_network(comp, "net", NetworkSpec(subnet_cidr="10.70.0.0/16"))
    rules = tuple(IngressRule(**rule) for rule in spec["rules"])
    add_ingress_rules(comp, "ingress", IngressRulesSpec(network="net", rules=rules))
    principal, source = spec["reader"]
    reader = BucketReader("cdn", principal, source)
    add_key(comp, "key", KeySpec("probe key", decrypters=(reader,)))
    add_bucket(comp, "bucket", BucketSpec(
        key="key", retention_days=30, lock=True, access_logging=True, expire_after_days=30,
        readers=(reader,), bucket_name=spec.get("bucketName"),
    ), fields={"bucket_name": "spec.bucketName", "expire_after_days": "spec.expiry"})
    add_failover_dns(comp, "failover", FailoverDnsSpec(
        zone="probezone", record_name="probe.example.com", primary="203.0.113.1",
        secondary="203.0.113.2", secondary_region=spec["secondary"],
    ))
    rule = values.bucket_name_rule(comp)
    comp.set_status("nameRule", {"min": rule.min_length, "max": rule.max_length})


@pytest.fixture
def probe_served(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Serve :func:`probe` as the contact-center module for one test."""
    monkeypatch.setattr(dispatch, "_composers", lambda: {"contact-center": probe})
    # The probe composes its own kind (LibraryProbe), not the module's API: no kind/spec check.
    monkeypatch.setattr(function.composite, "_apis", lambda: {})
    yield


def composite(
    cloud: str, rules: tuple[IngressRule, ...] = (SIP, RTP), **extra: Any,
) -> dict[str, Any]:
    secondary = {"aws": "eu-central-1", "gcp": "europe-west4", "azure": "northeurope"}[cloud]
    return {
        "apiVersion": "probe.fn.crossplane.io/v1", "kind": "LibraryProbe",
        "metadata": {"name": "probe"},
        "spec": {"cloud": cloud, "region": REGION[cloud], "scope": SCOPE[cloud],
                 "secondary": secondary, "reader": list(READER[cloud]),
                 "rules": [rule.__dict__ for rule in rules], **extra},
    }


def case(cloud: str, **extra: Any) -> ModuleCase:
    return ModuleCase(
        id=f"probe-{cloud}", module="contact-center", composite=composite(cloud, **extra),
        environment=(environment_config("probe", {cloud: ENVIRONMENT.get(cloud, {})}),),
        observed_status=OBSERVED_STATUS,
    )


def converged(client: FunctionClient, cloud: str, **extra: Any) -> Rendered:
    rendered, _ = converge(client.run, case(cloud, **extra))
    assert not rendered.fatal, rendered.fatal
    return rendered


def policy(rendered: Rendered, name: str) -> dict[str, Any]:
    return json.loads(rendered.resource(name)["spec"]["forProvider"]["policy"])


@pytest.mark.usefixtures("probe_served")
@pytest.mark.parametrize("cloud", CLOUDS)
def test_every_capability_composes_schema_valid_bodies(
    client: FunctionClient, catalog: Catalog, cloud: str,
) -> None:
    rendered = converged(client, cloud)
    problems = {name: catalog.validate(body) for name, body in rendered.resources.items()}
    assert {name: errs for name, errs in problems.items() if errs} == {}
    kinds = set(rendered.kinds.values())
    expected = {
        "aws": {"VPC", "SecurityGroup", "SecurityGroupIngressRule", "Key", "Alias", "Bucket",
                "BucketPolicy", "BucketObjectLockConfiguration", "BucketLogging",
                "BucketLifecycleConfiguration", "BucketServerSideEncryptionConfiguration",
                "BucketVersioning", "BucketPublicAccessBlock", "BucketOwnershipControls",
                "HealthCheck", "Record"},
        "gcp": {"Network", "Subnetwork", "Firewall", "KeyRing", "CryptoKey",
                "CryptoKeyIAMMember", "Bucket", "BucketIAMMember", "HealthCheck", "RecordSet"},
        "azure": {"ResourceGroup", "VirtualNetwork", "Subnet", "SecurityGroup", "SecurityRule",
                  "SubnetNetworkSecurityGroupAssociation", "Vault", "AccessPolicy", "Key",
                  "UserAssignedIdentity", "Account", "Container", "ContainerImmutabilityPolicy",
                  "Workspace", "MonitorDiagnosticSetting", "RoleAssignment",
                  "TrafficManagerProfile", "TrafficManagerExternalEndpoint"},
    }[cloud]
    assert expected <= kinds, sorted(expected - kinds)


@pytest.mark.usefixtures("probe_served")
@pytest.mark.parametrize("cloud", CLOUDS)
def test_network_has_no_kubernetes_assumptions(client: FunctionClient, cloud: str) -> None:
    rendered = converged(client, cloud)
    text = json.dumps(rendered.resources)
    assert "kubernetes.io/role" not in text
    assert "NATGateway" not in rendered.kinds.values()
    assert "RouterNAT" not in rendered.kinds.values()
    assert "secondaryIpRange" not in text


@pytest.mark.usefixtures("probe_served")
@pytest.mark.parametrize("cloud", CLOUDS)
def test_rule_names_hash_what_they_admit_not_their_position(
    client: FunctionClient, cloud: str,
) -> None:
    before = set(converged(client, cloud, rules=(SIP, RTP)).resources)
    after = set(converged(client, cloud, rules=(EXTRA, RTP, SIP)).resources)
    assert after - before >= {f"ingress-{rule_id(EXTRA)}"}
    assert {f"ingress-{rule_id(SIP)}", f"ingress-{rule_id(RTP)}"} <= before & after


@pytest.mark.usefixtures("probe_served")
def test_azure_priorities_are_hash_derived_unique_and_stable(client: FunctionClient) -> None:
    def priorities(rules: tuple[IngressRule, ...]) -> dict[str, int]:
        rendered = converged(client, "azure", rules=rules)
        return {name: body["spec"]["forProvider"]["priority"]
                for name, body in rendered.resources.items() if body["kind"] == "SecurityRule"}

    two = priorities((SIP, RTP))
    three = priorities((RTP, EXTRA, SIP))
    assert len(set(three.values())) == 3
    assert all(100 <= p < 3100 for p in three.values())
    assert {name: three[name] for name in two} == two
    assert priorities((SIP, RTP)) == two


@pytest.mark.usefixtures("probe_served")
def test_aws_bucket_has_one_policy_with_tls_deny_and_each_reader(client: FunctionClient) -> None:
    rendered = converged(client, "aws")
    assert sum(body["kind"] == "BucketPolicy" and name == "bucket-policy"
               for name, body in rendered.resources.items()) == 1
    statements = {s["Sid"]: s for s in policy(rendered, "bucket-policy")["Statement"]}
    assert statements["DenyInsecureTransport"]["Condition"] == {
        "Bool": {"aws:SecureTransport": "false"}}
    assert statements["DenyOutdatedTls"]["Condition"] == {
        "NumericLessThan": {"s3:TlsVersion": "1.2"}}
    cdn = statements["Cdn"]
    assert cdn["Principal"] == {"Service": "cloudfront.amazonaws.com"}
    assert cdn["Action"] == "s3:GetObject"
    assert cdn["Condition"]["StringEquals"]["AWS:SourceArn"] == READER["aws"][1]
    assert cdn["Resource"] == "arn:aws:s3:::probe-bucket/*"
    # The access-log bucket's own single policy lets S3 log delivery write for this bucket only.
    logs = {s["Sid"]: s for s in policy(rendered, "bucket-logs-policy")["Statement"]}
    delivery = logs["S3ServerAccessLogs"]
    assert delivery["Principal"] == {"Service": "logging.s3.amazonaws.com"}
    assert delivery["Condition"]["StringEquals"] == {
        "AWS:SourceArn": "arn:aws:s3:::probe-bucket", "aws:SourceAccount": "123456789012"}


@pytest.mark.usefixtures("probe_served")
def test_aws_bucket_is_locked_private_encrypted_and_logged(client: FunctionClient) -> None:
    rendered = converged(client, "aws")
    spec = {name: body["spec"].get("forProvider", {}) for name, body in rendered.resources.items()}
    assert spec["bucket"]["objectLockEnabled"] is True  # only possible at creation
    assert spec["bucket-lock"]["rule"]["defaultRetention"] == {"mode": "COMPLIANCE", "days": 30}
    assert spec["bucket-ownership"]["rule"] == {"objectOwnership": "BucketOwnerEnforced"}
    assert all(spec["bucket-public-access-block"][flag] for flag in (
        "blockPublicAcls", "blockPublicPolicy", "ignorePublicAcls", "restrictPublicBuckets"))
    sse = spec["bucket-encryption"]["rule"][0]["applyServerSideEncryptionByDefault"]
    assert sse == {"sseAlgorithm": "aws:kms", "kmsMasterKeyIdRef": {"name": "probe-key"}}
    assert spec["bucket-versioning"]["versioningConfiguration"] == {"status": "Enabled"}
    assert spec["bucket-logging"]["targetBucketRef"] == {"name": "probe-bucket-logs"}
    assert "objectLockEnabled" not in spec["bucket-logs"]  # S3 can't log into a locked bucket
    logs_sse = spec["bucket-logs-encryption"]["rule"][0]["applyServerSideEncryptionByDefault"]
    assert logs_sse == {"sseAlgorithm": "AES256"}
    expiries = [r for r in spec["bucket-lifecycle"]["rule"] if "expiration" in r]
    assert expiries[0]["expiration"] == [{"days": 30}]
    key = spec["key"]
    assert key["enableKeyRotation"] is True and key["rotationPeriodInDays"] == 365
    statements = {s["Sid"]: s for s in json.loads(key["policy"])["Statement"]}
    assert statements["S3UsesForTheAccount"]["Condition"]["StringEquals"] == {
        "kms:CallerAccount": "123456789012", "kms:ViaService": "s3.eu-west-1.amazonaws.com"}
    assert statements["Cdn"]["Action"] == ["kms:Decrypt"]


@pytest.mark.usefixtures("probe_served")
def test_gcp_key_grants_the_storage_service_agent(client: FunctionClient) -> None:
    rendered = converged(client, "gcp")
    grant = rendered.resource("key-storage-grant")["spec"]["forProvider"]
    assert grant["member"] == (
        "serviceAccount:service-987654321098@gs-project-accounts.iam.gserviceaccount.com")
    assert grant["role"] == "roles/cloudkms.cryptoKeyEncrypterDecrypter"
    bucket = rendered.resource("bucket")["spec"]["forProvider"]
    assert bucket["publicAccessPrevention"] == "enforced"
    assert bucket["uniformBucketLevelAccess"] is True
    assert bucket["retentionPolicy"] == {"retentionPeriod": 30 * 86400, "isLocked": True}
    assert bucket["encryption"]["defaultKmsKeyName"] == (
        "projects/acme-probe/locations/europe-west1/keyRings/probe-key-ring/cryptoKeys/probe-key")
    assert bucket["logging"]["logBucket"] == "probe-bucket-logs"
    gap = rendered.condition("CapabilitiesAvailable")
    assert gap is not None and "bucket-versioning" in gap.message


@pytest.mark.usefixtures("probe_served")
def test_gcp_key_needs_the_project_number(client: FunctionClient) -> None:
    rendered = client.run(case("gcp").request(required={"environment-0": [
        environment_config("probe", {"gcp": {}})]}))
    assert any("environment.gcp.projectNumber" in m for m in rendered.fatal), rendered.messages


@pytest.mark.usefixtures("probe_served")
def test_azure_account_waits_for_key_identity_and_grant(client: FunctionClient) -> None:
    first = client.run(case("azure").request())
    assert "bucket" not in first.resources
    assert "key-identity-access" not in first.resources
    # The vault and the identity come first; the key waits for the provider's vault access.
    assert {"key-vault", "key-identity"} <= set(first.resources)
    assert "key" not in first.resources
    rendered = converged(client, "azure")
    account = rendered.resource("bucket")["spec"]["forProvider"]
    assert account["customerManagedKey"] == {
        "keyVaultKeyId": "https://kv.vault.azure.net/keys/key",
        "userAssignedIdentityId": OBSERVED_STATUS["key-identity"]["atProvider"]["id"]}
    assert account["minTlsVersion"] == "TLS1_2"
    assert account["allowNestedItemsToBePublic"] is False
    assert account["infrastructureEncryptionEnabled"] is True
    vault = rendered.resource("key-vault")["spec"]["forProvider"]
    assert vault["purgeProtectionEnabled"] is True
    policy = rendered.resource("bucket-immutability")["spec"]["forProvider"]
    assert policy["immutabilityPeriodInDays"] == 30 and policy["locked"] is True


@pytest.mark.usefixtures("probe_served")
@pytest.mark.parametrize(("cloud", "maximum"), [("aws", 63), ("gcp", 63), ("azure", 24)])
def test_bucket_name_rule_is_a_cloud_value(client: FunctionClient, cloud: str,
                                           maximum: int) -> None:
    rendered = converged(client, cloud)
    assert rendered.status["nameRule"] == {"min": 3, "max": maximum}
    bad = client.run(case(cloud, bucketName="Not_A-Valid.Name!").request())
    assert any(m.startswith("spec.bucketName") for m in bad.fatal), bad.messages


@pytest.mark.usefixtures("probe_served")
@pytest.mark.parametrize("cloud", CLOUDS)
def test_same_input_same_output(client: FunctionClient, cloud: str) -> None:
    one = converged(client, cloud).response.SerializeToString(deterministic=True)
    two = converged(client, cloud).response.SerializeToString(deterministic=True)
    assert one == two


def test_name_problem_table() -> None:
    from fnplatform.clouds.aws.bucket import BUCKET_NAME_RULE as S3
    from fnplatform.clouds.azure.bucket import ACCOUNT_NAME_RULE as AZURE_RULE

    table = [
        (S3, "recordings-2026", None),
        (S3, "ab", "must be"),
        (S3, "xn--bucket", "must be"),
        (S3, "Upper", "must be"),
        (AZURE_RULE, "recordings2026", None),
        (AZURE_RULE, "recordings-2026", "must be"),
        (AZURE_RULE, "a" * 25, "characters"),
    ]
    for rule, value, problem in table:
        found = name_problem(rule, value)
        assert (found is None) if problem is None else (problem in str(found)), (value, found)


def test_rule_id_ignores_description_and_list_position() -> None:
    assert rule_id(SIP) == rule_id(IngressRule("udp", 5060, 5080, "198.51.100.0/24", "other"))
    assert rule_id(SIP) != rule_id(RTP)
    assert copy.deepcopy(SIP) == SIP


@pytest.mark.usefixtures("probe_served")
@pytest.mark.parametrize("cloud", CLOUDS)
def test_a_bad_rule_is_an_error_naming_it(client: FunctionClient, cloud: str) -> None:
    bad = IngressRule("udp", 5060, 5080, "not-a-range")
    rendered = client.run(case(cloud, rules=(SIP, bad)).request())
    assert rendered.fatal and "rule 1" in rendered.fatal[0], rendered.messages
