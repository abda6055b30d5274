"""Write ``platform/fnplatform/upgrade/immutable-fields.yaml``: per managed kind the modules
compose, the ``spec.forProvider`` fields the cloud cannot change in place (the resource is
replaced, or the change refused), each with where that is written.

    python tools/derive_immutable_fields.py                       # --crds ../shared/crds
    python tools/derive_immutable_fields.py --crds DIR --check    # compare, write nothing

Two sources, merged per kind:

- **derived** from the upstream CRDs (upjet AWS v2.6.0, GCP v3.0.0, Azure v2.7.0, read from
  ``--crds``), mechanically: a ``forProvider`` field whose description says the Terraform
  schema's ``ForceNew`` ("Changing this forces a new ... to be created"), or any
  ``x-kubernetes-validations`` rule comparing with ``oldSelf`` (immutable once set). Azure's
  descriptions carry the sentence; AWS's and GCP's mostly do not.
- **curated** in :data:`CURATED` below, each field with the Terraform provider schema or
  documentation that says it is ``ForceNew``, and :data:`PLACEMENT`: where a resource lives
  (an AWS ``region``, a GCP ``project`` and ``location``/``region``/``zone``, an Azure
  ``location`` and ``resourceGroupName``), which no provider moves: the resource is looked
  up, and created, in the new place.

Names (bucket, queue, database identifier, cluster name, KMS key id) are external names on
upjet kinds (``crossplane.io/external-name``), which ``tests/test_upgrade.py`` holds to the
release's anyway; a curated entry lists a name only where it is a ``forProvider`` field (a
Route 53 zone's ``name``, a GCP DNS zone's ``dnsName``).

Only the kinds in ``examples/install/15-activation-policy.yaml`` (every managed kind a module
composes) are listed; the test and the upgrade preview read this file, never the CRDs.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT / "platform"), str(ROOT)]

from fnplatform.cloud import cloud_profiles  # noqa: E402

TARGET = ROOT / "platform" / "fnplatform" / "upgrade" / "immutable-fields.yaml"
ACTIVATION_POLICY = ROOT / "examples" / "install" / "15-activation-policy.yaml"
DEFAULT_CRDS = ROOT.parent / "shared" / "crds"
#: Folders under --crds holding the upjet providers' CRDs: each cloud's provider family.
PROVIDERS = tuple(p.provider for p in cloud_profiles())
#: Terraform's ForceNew as upjet copies it into a description.
FORCES_NEW = re.compile(r"[Cc]hanging (this|the [^.]*?) (forces|will force) a new", re.S)

TF_AWS = "https://registry.terraform.io/providers/hashicorp/aws/latest/docs/resources/"
TF_GOOGLE = "https://registry.terraform.io/providers/hashicorp/google/latest/docs/resources/"
TF_AWS_SOURCE = "hashicorp/terraform-provider-aws internal/service/"

#: Where a resource lives, per cloud: a field of this name directly under ``forProvider``,
#: and why another value means another resource (each cloud's profile says,
#: ``clouds/<cloud>/profile.py``).
PLACEMENT: dict[str, tuple[tuple[str, str], ...]] = {
    p.name: p.placement_fields for p in cloud_profiles()
}


def force_new(doc: str, *fields: tuple[str, str], why: str = "") -> list[dict[str, str]]:
    """Curated entries: each ``(forProvider field, Terraform argument)`` of the resource whose
    Terraform documentation or schema is ``doc`` marks ForceNew (``why``: more on it)."""
    return [
        {
            "path": f"spec.forProvider.{field}",
            "source": f"{doc}: {argument}, ForceNew{f' ({why})' if why else ''}",
        }
        for field, argument in fields
    ]


#: Fields the CRD descriptions do not mark, with the source that says they are ForceNew.
#: ``compare: engine`` compares only the engine of a ``<ENGINE>_<version>`` value (an
#: in-place major version upgrade is allowed; another engine is not).
CURATED: dict[str, list[dict[str, str]]] = {
    "Instance.rds.aws.upbound.io": force_new(
        f"{TF_AWS_SOURCE}rds/instance.go ({TF_AWS}db_instance)",
        ("engine", "engine"),
        ("dbName", "db_name"),
        ("kmsKeyId", "kms_key_id"),
        ("storageEncrypted", "storage_encrypted"),
        ("username", "username"),
        ("availabilityZone", "availability_zone"),
        ("characterSetName", "character_set_name"),
    ),
    "ParameterGroup.rds.aws.upbound.io": force_new(
        f"{TF_AWS}db_parameter_group", ("family", "family")
    ),
    "VPC.ec2.aws.upbound.io": force_new(
        f"{TF_AWS}vpc",
        ("cidrBlock", "cidr_block"),
        why="a VPC's primary CIDR is fixed at creation: "
        "https://docs.aws.amazon.com/vpc/latest/userguide/vpc-cidr-blocks.html",
    ),
    "Subnet.ec2.aws.upbound.io": force_new(
        f"{TF_AWS}subnet",
        ("cidrBlock", "cidr_block"),
        ("availabilityZone", "availability_zone"),
        ("vpcId", "vpc_id"),
        why="a subnet's CIDR and zone are fixed: "
        "https://docs.aws.amazon.com/vpc/latest/userguide/subnet-sizing.html",
    ),
    "SecurityGroup.ec2.aws.upbound.io": force_new(
        f"{TF_AWS}security_group", ("vpcId", "vpc_id"), ("description", "description")
    ),
    "RouteTable.ec2.aws.upbound.io": force_new(f"{TF_AWS}route_table", ("vpcId", "vpc_id")),
    "NATGateway.ec2.aws.upbound.io": force_new(
        f"{TF_AWS}nat_gateway",
        ("subnetId", "subnet_id"),
        ("allocationId", "allocation_id"),
        ("connectivityType", "connectivity_type"),
    ),
    "Bucket.s3.aws.upbound.io": force_new(
        f"{TF_AWS}s3_bucket", ("objectLockEnabled", "object_lock_enabled")
    ),
    "Queue.sqs.aws.upbound.io": force_new(
        f"{TF_AWS}sqs_queue",
        ("fifoQueue", "fifo_queue"),
        why="SQS cannot turn a standard queue into a FIFO one",
    ),
    "Key.kms.aws.upbound.io": force_new(
        f"{TF_AWS}kms_key",
        ("customerMasterKeySpec", "customer_master_key_spec"),
        ("keyUsage", "key_usage"),
        ("multiRegion", "multi_region"),
    ),
    "Cluster.eks.aws.upbound.io": force_new(
        f"{TF_AWS}eks_cluster",
        ("roleArn", "role_arn"),
        ("kubernetesNetworkConfig.serviceIpv4Cidr", "kubernetes_network_config.service_ipv4_cidr"),
        ("kubernetesNetworkConfig.ipFamily", "kubernetes_network_config.ip_family"),
    ),
    "NodeGroup.eks.aws.upbound.io": force_new(
        f"{TF_AWS}eks_node_group",
        ("clusterName", "cluster_name"),
        ("nodeRoleArn", "node_role_arn"),
        ("subnetIds", "subnet_ids"),
        ("capacityType", "capacity_type"),
        ("instanceTypes", "instance_types"),
        ("diskSize", "disk_size"),
    ),
    "Addon.eks.aws.upbound.io": force_new(
        f"{TF_AWS}eks_addon", ("clusterName", "cluster_name"), ("addonName", "addon_name")
    ),
    "Zone.route53.aws.upbound.io": force_new(
        f"{TF_AWS}route53_zone",
        ("name", "name"),
        why="the zone's domain; its external name is the zone id",
    ),
    "Record.route53.aws.upbound.io": force_new(
        f"{TF_AWS}route53_record", ("zoneId", "zone_id"), ("name", "name")
    ),
    "Certificate.acm.aws.upbound.io": force_new(
        f"{TF_AWS}acm_certificate",
        ("domainName", "domain_name"),
        ("subjectAlternativeNames", "subject_alternative_names"),
        ("keyAlgorithm", "key_algorithm"),
    ),
    "Role.iam.aws.upbound.io": force_new(f"{TF_AWS}iam_role", ("path", "path")),
    "Network.compute.gcp.upbound.io": force_new(
        f"{TF_GOOGLE}compute_network", ("autoCreateSubnetworks", "auto_create_subnetworks")
    ),
    "Subnetwork.compute.gcp.upbound.io": force_new(
        f"{TF_GOOGLE}compute_subnetwork", ("network", "network")
    ),
    "Cluster.container.gcp.upbound.io": force_new(
        f"{TF_GOOGLE}container_cluster",
        ("network", "network"),
        ("subnetwork", "subnetwork"),
        ("ipAllocationPolicy", "ip_allocation_policy"),
    ),
    "NodePool.container.gcp.upbound.io": force_new(
        f"{TF_GOOGLE}container_node_pool", ("cluster", "cluster")
    ),
    "DatabaseInstance.sql.gcp.upbound.io": [
        {
            "path": "spec.forProvider.databaseVersion",
            "compare": "engine",
            "source": f"{TF_GOOGLE}sql_database_instance: database_version (an in-place major "
            "version upgrade is supported; another engine is a new instance: "
            "https://cloud.google.com/sql/docs/postgres/upgrade-major-db-version-inplace)",
        }
    ],
    "Database.sql.gcp.upbound.io": force_new(f"{TF_GOOGLE}sql_database", ("instance", "instance")),
    "CryptoKey.kms.gcp.upbound.io": force_new(
        f"{TF_GOOGLE}kms_crypto_key",
        ("keyRing", "key_ring"),
        ("purpose", "purpose"),
        ("importOnly", "import_only"),
    ),
    "ManagedZone.dns.gcp.upbound.io": force_new(
        f"{TF_GOOGLE}dns_managed_zone", ("dnsName", "dns_name"), ("visibility", "visibility")
    ),
    "RecordSet.dns.gcp.upbound.io": force_new(
        f"{TF_GOOGLE}dns_record_set",
        ("managedZone", "managed_zone"),
        ("name", "name"),
        ("type", "type"),
    ),
    "GlobalAddress.compute.gcp.upbound.io": force_new(
        f"{TF_GOOGLE}compute_global_address",
        ("addressType", "address_type"),
        ("purpose", "purpose"),
        ("prefixLength", "prefix_length"),
        ("network", "network"),
    ),
}


def _cloud(group: str) -> str | None:
    for profile in cloud_profiles():
        if group == profile.api_group or group.endswith(f".{profile.api_group}"):
            return profile.name
    return None


def composed_kinds() -> list[tuple[str, str]]:
    """(plural, group) of every cluster-scoped upjet kind the modules compose."""
    policy = yaml.safe_load(ACTIVATION_POLICY.read_text())
    found = []
    for name in policy["spec"]["activate"]:
        plural, _, group = name.partition(".")
        if group.endswith(".upbound.io") and ".m.upbound.io" not in group:
            found.append((plural, group))
    return sorted(found)


def _walk(schema: Mapping[str, Any], path: str) -> Iterator[tuple[str, Mapping[str, Any]]]:
    """Every property under ``schema`` with its dotted path (``[]`` through arrays)."""
    for name, prop in sorted((schema.get("properties") or {}).items()):
        here = f"{path}.{name}"
        yield here, prop
        if prop.get("type") == "array" and isinstance(prop.get("items"), Mapping):
            yield from _walk(prop["items"], f"{here}[]")
        elif prop.get("type") == "object":
            yield from _walk(prop, here)


def derive(crd: Mapping[str, Any], crd_path: str) -> tuple[str, list[dict[str, str]]]:
    """The kind's key (``Kind.group``) and the immutable fields its CRD marks, over its
    served versions (a path from any version: the test reads only what a body has)."""
    names = crd["spec"]["names"]
    key = f"{names['kind']}.{crd['spec']['group']}"
    fields: dict[str, dict[str, str]] = {}
    for version in crd["spec"]["versions"]:
        if not version.get("served"):
            continue
        spec = version["schema"]["openAPIV3Schema"]["properties"]["spec"]
        for_provider = spec["properties"].get("forProvider") or {}
        for path, prop in _walk(for_provider, "spec.forProvider"):
            description = " ".join(str(prop.get("description") or "").split())
            if FORCES_NEW.search(description):
                sentence = next(
                    s for s in re.split(r"(?<=\.) ", description) if FORCES_NEW.search(s)
                )
                fields.setdefault(path, {"path": path, "source": f'{crd_path}: "{sentence}"'})
            for rule in prop.get("x-kubernetes-validations") or []:
                if "oldSelf" in str(rule.get("rule")):
                    fields.setdefault(
                        path, {"path": path, "source": f"{crd_path}: CEL {rule['rule']}"}
                    )
        cloud = _cloud(crd["spec"]["group"])
        for field, why in PLACEMENT.get(cloud or "", ()):
            if field in (for_provider.get("properties") or {}):
                path = f"spec.forProvider.{field}"
                fields.setdefault(path, {"path": path, "source": why})
    return key, [fields[p] for p in sorted(fields)]


def table(crds: Path) -> dict[str, Any]:
    """The whole table: every composed upjet kind with at least one immutable field, and the
    composed kinds whose CRD ``crds`` lacks (``withoutCrd``: nothing derived for them)."""
    kinds: dict[str, list[dict[str, str]]] = {}
    absent: list[str] = []
    for plural, group in composed_kinds():
        matches = [crds / folder / f"{group}_{plural}.yaml" for folder in PROVIDERS]
        found = [p for p in matches if p.exists()]
        if not found:  # said in the file: only the curated entries (none yet) cover it
            absent.append(f"{plural}.{group}")
            continue
        crd = yaml.safe_load(found[0].read_text())
        key, fields = derive(crd, found[0].relative_to(crds).as_posix())
        curated = {entry["path"]: entry for entry in CURATED.get(key, [])}
        merged = {**{f["path"]: f for f in fields}, **curated}
        if merged:
            kinds[key] = [merged[p] for p in sorted(merged)]
    unknown = set(CURATED) - set(kinds)
    if unknown:
        msg = f"curated kinds no module composes: {sorted(unknown)}"
        raise SystemExit(msg)
    return {"kinds": dict(sorted(kinds.items())), "withoutCrd": absent}


HEADER = """\
# Fields the cloud cannot change in place, per managed kind the modules compose: a change
# replaces the resource (or the provider refuses it). tests/test_upgrade.py holds every
# composite of a release to the values that release desired here; the upgrade preview
# (python -m fnplatform.upgrade preview) calls a change of one a replacement.
# GENERATED by `python tools/derive_immutable_fields.py --crds ../shared/crds` from the upjet
# CRDs (descriptions carrying Terraform's ForceNew, CEL rules on oldSelf) and the curated,
# cited entries in that tool; do not edit. Each field names its source.
"""


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--crds",
        type=Path,
        default=DEFAULT_CRDS,
        help="the upstream CRDs (default: ../shared/crds)",
    )
    parser.add_argument(
        "--check", action="store_true", help="fail when the committed file differs, writing nothing"
    )
    args = parser.parse_args(argv)
    text = HEADER + yaml.safe_dump(table(args.crds), sort_keys=False, width=100)
    if args.check:
        if not TARGET.exists() or TARGET.read_text() != text:
            print(
                f"{TARGET.relative_to(ROOT)} is stale: run tools/derive_immutable_fields.py",
                file=sys.stderr,
            )
            return 1
        return 0
    TARGET.write_text(text)
    count = sum(len(v) for v in yaml.safe_load(text)["kinds"].values())
    print(f"wrote {TARGET.relative_to(ROOT)}: {count} fields", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
