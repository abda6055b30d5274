"""The openstack module over gRPC: pools as Gardener Shoots, tenants on shared pools.

Every composed resource is validated against the provider CRDs, and every wrapped manifest
whose kind has a schema (Shoot: derived from Gardener's proto; ControlPlane: the real c5c3
CRD; Rook; provider-kubernetes) against it too. Core Kubernetes kinds (Namespace,
ServiceAccount, Role, RoleBinding, CronJob, Job) have no schema in schemas/crds and are checked by
their fields here.
"""

from __future__ import annotations

import copy
import shutil
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml
from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from fnplatform.composers.openstack.api import APIS
from jsonschema import Draft4Validator

from tests.support import openstack as o
from tests.support.controls import READY_FALSE, SYNCED_FALSE, Breakage, broken
from tests.support.harness import observed_ready
from tests.support.schemas import Catalog, translate_schema
from tests.support.table import case

ROOT = Path(__file__).resolve().parent.parent
CORE_KINDS = {"Namespace", "ServiceAccount", "Role", "RoleBinding", "CronJob", "Job"}


def manifests(rendered) -> dict[str, dict[str, Any]]:
    """Wrapped manifests of the Objects, by composed-resource name."""
    return {
        name: body["spec"]["forProvider"]["manifest"]
        for name, body in rendered.resources.items()
        if body["kind"] == "Object"
    }


def assert_all_valid(rendered, catalog: Catalog) -> None:
    errors = [e for body in rendered.resources.values() for e in catalog.validate(body)]
    for name, manifest in manifests(rendered).items():
        if manifest["kind"] in CORE_KINDS:
            continue
        assert catalog.lookup(manifest["apiVersion"], manifest["kind"]), name
        if rendered.resources[name]["spec"].get("managementPolicies") == ["Observe"]:
            # only read: provider-kubernetes gets the object by apiVersion, kind, name and
            # namespace; the manifest is no body to send, so it has none
            assert set(manifest) == {"apiVersion", "kind", "metadata"}, name
            continue
        errors += [f"{name}: {e}" for e in catalog.validate(manifest)]
    assert errors == []


def settle(client, make_request, passes: int = 4):
    """Compose, observe everything desired as Ready, repeat: the steady state."""
    rendered = client.run(make_request({}))
    for _ in range(passes):
        observed = {n: observed_ready(b) for n, b in rendered.resources.items()}
        rendered = client.run(make_request(observed))
    return rendered, observed


def condition(rendered, type_: str) -> tuple[int, str, str]:
    cond = rendered.condition(type_)
    assert cond is not None, f"no {type_} condition"
    return cond.status, cond.reason, cond.message


# ------------------------------------------------------------------------------ pools


@pytest.mark.parametrize(
    ("composite", "worker", "zone"),
    [
        case(
            "a hypervisor pool is its own Gardener Shoot with a hypervisor worker in its "
            "own zone, and the access to reach it",
            o.hypervisor("hv-pool-a"),
            "hypervisor",
            "ironcore-hv-pool-a",
        ),
        case(
            "a storage pool is a Shoot with a storage worker in its rack's zone",
            o.storage("st-pool-a"),
            "storage",
            "ironcore-storage-rack-1",
        ),
        case(
            "the control-plane cluster is a Shoot with a system worker in the zone the "
            "environment's gardener.zones names",
            o.control_plane_cluster(),
            "system",
            "ironcore-system-a",
        ),
    ],
    ids=["hypervisor", "storage", "control-plane"],
)
def test_each_pool_is_a_shoot_with_access(client, catalog, composite, worker, zone):
    rendered = client.run(o.pool_request(composite))
    assert rendered.fatal == []
    assert_all_valid(rendered, catalog)
    shoot = rendered.resource("shoot")
    assert shoot["spec"]["providerConfigRef"] == {"name": "gardener-eu-de-1"}
    assert shoot["spec"]["readiness"]["policy"] == "DeriveFromCelQuery"
    assert "status.lastOperation" in shoot["spec"]["readiness"]["celQuery"]
    manifest = shoot["spec"]["forProvider"]["manifest"]
    assert manifest["kind"] == "Shoot"
    assert manifest["metadata"]["namespace"] == "garden-c5c3"
    spec = manifest["spec"]
    assert spec["cloudProfile"] == {"kind": "CloudProfile", "name": "ironcore"}
    assert spec["credentialsBindingName"] == "ironcore-eu-de-1"
    assert "secretBindingName" not in spec and "cloudProfileName" not in spec
    assert spec["maintenance"]["autoUpdate"] == {
        "kubernetesVersion": False,
        "machineImageVersion": True,
    }
    (pool,) = spec["provider"]["workers"]
    assert pool["name"] == worker
    assert pool["machine"]["image"]["name"] == "gardenlinux"
    # the IronCore extension: a zone and a volume with type and size on every worker
    assert pool["zones"] == [zone]
    assert pool["volume"]["type"] == "fast" and pool["volume"]["size"]
    # Access: a ProviderConfig per region and pool, fed by the refresher's Secret.
    claim = composite["metadata"]["labels"]["crossplane.io/claim-name"]
    pc_name = claim if claim.startswith("eu-de-1-") else f"eu-de-1-{claim}"
    # Held until the Shoot exists; the first refresh until it is Ready.
    assert "provider-config" not in rendered.resources
    assert "access-first-run" not in rendered.resources
    settled, _ = settle(client, lambda obs: o.pool_request(composite, observed=obs))
    assert_all_valid(settled, catalog)
    pc = settled.resource("provider-config")
    assert pc["metadata"]["name"] == pc_name
    assert pc["spec"]["credentials"]["secretRef"] == {
        "namespace": "crossplane-system",
        "name": f"{pc_name}-kubeconfig",
        "key": "kubeconfig",
    }
    assert settled.status["providerConfig"] == pc_name
    assert settled.status["clusterName"] == manifest["metadata"]["name"]
    assert manifest["metadata"]["labels"]["c5c3.io/pool"] == claim
    # Gardener: project and Shoot name together at most 21 characters (project "c5c3").
    assert len("c5c3" + manifest["metadata"]["name"]) <= 21


def test_long_pool_names_get_a_shoot_name_gardener_accepts(client):
    long_pool = client.run(o.pool_request(o.hypervisor("hv-pool-compliance")))
    name = long_pool.resource("shoot")["spec"]["forProvider"]["manifest"]["metadata"]["name"]
    assert len(name) <= 17 and name.startswith("hv-pool-")  # cut, plus 8 hex of the full name
    other = client.run(o.pool_request(o.hypervisor("hv-pool-complianc2")))
    assert other.resource("shoot")["spec"]["forProvider"]["manifest"]["metadata"]["name"] != name
    assert long_pool.status["providerConfig"] == "eu-de-1-hv-pool-compliance"
    request = o.pool_request(o.hypervisor())
    env = o.environment()
    env["data"]["gardener"]["project"] = "a-very-long-project"
    request.required_resources["environment-0"].items[0].resource.Clear()
    request.required_resources["environment-0"].items[0].resource.update(env)
    refused = client.run(request)
    assert refused.fatal and "environment.gardener.project" in refused.fatal[0]


def test_hypervisor_pool_carries_its_size_and_labels(client):
    composite = o.hypervisor(
        "hv-pool-compliance", workers=20, labels={"dedicated": "true", "tenant": "tenant-finance"}
    )
    composite["spec"]["maxWorkers"] = 25
    rendered = client.run(o.pool_request(composite))
    manifest = rendered.resource("shoot")["spec"]["forProvider"]["manifest"]
    (pool,) = manifest["spec"]["provider"]["workers"]
    assert (pool["minimum"], pool["maximum"]) == (20, 25)
    assert pool["labels"] == {"dedicated": "true", "tenant": "tenant-finance"}
    assert manifest["metadata"]["labels"]["dedicated"] == "true"
    assert manifest["metadata"]["labels"]["c5c3.io/pool-kind"] == "hypervisor"
    assert rendered.status["nodeCount"] == 20
    assert rendered.status["phase"] == "Pending"


def test_the_refresher_writes_only_its_own_secret_and_never_the_removed_one(client):
    rendered, _ = settle(client, lambda obs: o.pool_request(o.hypervisor(), observed=obs))
    found = manifests(rendered)
    role = found["access-role"]
    named = [r for r in role["rules"] if r.get("resourceNames")]
    assert named == [
        {
            "apiGroups": [""],
            "resources": ["secrets"],
            "resourceNames": ["eu-de-1-hv-pool-a-kubeconfig"],
            "verbs": ["get", "patch", "update"],
        }
    ]
    first = found["access-first-run"]
    assert first["kind"] == "Job"
    assert first["spec"] == found["access-cronjob"]["spec"]["jobTemplate"]["spec"]
    job = found["access-cronjob"]["spec"]["jobTemplate"]["spec"]["template"]["spec"]
    script = job["containers"][0]["command"][-1]
    assert "/adminkubeconfig" in script and "AdminKubeconfigRequest" in script
    env = {e["name"]: e["value"] for e in job["containers"][0]["env"]}
    assert env["SHOOT"] == "hv-pool-a" and env["PROJECT_NAMESPACE"] == "garden-c5c3"
    assert job["volumes"][0]["secret"]["secretName"] == "garden-c5c3-automation"
    text = yaml.safe_dump(rendered.resources)
    assert "hv-pool-a.kubeconfig" not in text  # Gardener's removed static Secret


def test_the_refresher_keeps_running_and_runs_locked_down(client):
    """Issue 23: a CronJob that missed over 100 schedules never starts again without a
    startingDeadlineSeconds; the pod holding garden and Shoot credentials runs non-root with
    a read-only root and the kubeconfig in memory only."""
    rendered, _ = settle(client, lambda obs: o.pool_request(o.hypervisor(), observed=obs))
    cronjob = manifests(rendered)["access-cronjob"]["spec"]
    assert cronjob["startingDeadlineSeconds"] == 600
    pod = cronjob["jobTemplate"]["spec"]["template"]["spec"]
    assert pod["securityContext"]["runAsNonRoot"] is True
    (container,) = pod["containers"]
    assert container["securityContext"] == {
        "allowPrivilegeEscalation": False,
        "readOnlyRootFilesystem": True,
        "capabilities": {"drop": ["ALL"]},
    }
    assert {"name": "tmp", "mountPath": "/tmp"} in container["volumeMounts"]
    tmp = next(v for v in pod["volumes"] if v["name"] == "tmp")
    assert tmp["emptyDir"]["medium"] == "Memory"


@pytest.mark.parametrize(
    ("drop", "message"),
    [
        case(
            "the ironcore extension needs a worker volume type: without it the fatal "
            "result names workerVolumeType before a Shoot is refused",
            "workerVolumeType",
            "workerVolumeType is required for ironcore",
        ),
        case(
            "the ironcore extension needs zones: without them the fatal result names zones",
            "zones",
            "zones is required for ironcore",
        ),
    ],
)
def test_ironcore_settings_its_extension_requires_are_required(client, drop, message):
    """gardener-extension-provider-ironcore refuses workers without a volume type or a zone."""
    request = o.pool_request(o.control_plane_cluster())
    env = o.environment()
    del env["data"]["gardener"][drop]
    request.required_resources["environment-0"].items[0].resource.Clear()
    request.required_resources["environment-0"].items[0].resource.update(env)
    (fatal,) = client.run(request).fatal
    assert fatal.startswith("environment.gardener") and message in fatal


def test_a_pools_zone_cannot_change_once_its_shoot_exists(client):
    """The extensions keep worker zones immutable: Gardener would refuse every re-apply."""
    _, observed = settle(client, lambda obs: o.pool_request(o.hypervisor(), observed=obs))
    moved = o.hypervisor()
    moved["spec"]["ironcore"]["machinePool"] = "ironcore-elsewhere"
    (fatal,) = client.run(o.pool_request(moved, observed=observed)).fatal
    assert fatal.startswith("spec.ironcore.machinePool: cannot change once the pool's Shoot exists")
    assert "ironcore-hv-pool-a" in fatal
    assert client.run(o.pool_request(o.hypervisor(), observed=observed)).fatal == []


def test_purpose_infrastructure_outside_the_garden_namespace_is_refused(client):
    request = o.pool_request(o.hypervisor())
    env = o.environment()
    env["data"]["gardener"]["purpose"] = "infrastructure"
    request.required_resources["environment-0"].items[0].resource.Clear()
    request.required_resources["environment-0"].items[0].resource.update(env)
    (message,) = client.run(request).fatal
    assert message.startswith("environment.gardener")
    assert "infrastructure is only allowed for Shoots in the garden namespace" in message


def test_a_pool_is_ready_when_its_shoot_object_is(client):
    composite = o.hypervisor()
    rendered, observed = settle(client, lambda obs: o.pool_request(composite, observed=obs))
    assert rendered.status["phase"] == "Ready"
    observed["shoot"]["status"]["conditions"][0]["status"] = "False"
    again = client.run(o.pool_request(composite, observed=observed))
    assert again.status["phase"] == "Provisioning"
    assert set(again.resources) == set(rendered.resources)


# ------------------------------------------------------------------------------ tenants


def tenant_request(composite, pools=None, **kw):
    return lambda obs: o.openstack_request(composite, pools or o.region_pools(), observed=obs, **kw)


def test_all_pools_ready_composes_the_tenant(client, catalog):
    composite = o.openstack()
    rendered, _ = settle(client, tenant_request(composite))
    assert rendered.fatal == []
    assert_all_valid(rendered, catalog)
    found = manifests(rendered)
    assert found["namespace"]["metadata"]["name"] == "openstack-customer-a-prod"
    cp = found["control-plane"]
    assert (cp["kind"], cp["metadata"]["namespace"]) == (
        "ControlPlane",
        "openstack-customer-a-prod",
    )
    cluster_pc = "eu-de-1-control-plane"
    for name in ("namespace", "control-plane"):
        assert rendered.resource(name)["spec"]["providerConfigRef"] == {"name": cluster_pc}
    for name in ("ceph-volumes", "ceph-images", "ceph-ephemeral", "ceph-client"):
        assert rendered.resource(name)["spec"]["providerConfigRef"] == {"name": "eu-de-1-st-pool-a"}
        assert found[name]["metadata"]["namespace"] == "rook-ceph"
    assert "ceph-filesystem" not in found
    status = rendered.status
    assert status["phase"] == "Ready"
    assert [p["name"] for p in status["consumedPools"]["hypervisor"]] == ["hv-pool-a", "hv-pool-b"]
    assert all(p["status"] == "Ready" for p in status["consumedPools"]["hypervisor"])
    assert status["consumedPools"]["storage"][0]["availableCapacity"] == "500Ti"
    assert condition(rendered, "PoolsReady")[1] == "AllPoolsReady"


def test_endpoints_appear_once_the_control_plane_reports_the_service(client):
    composite = o.openstack()
    rendered, observed = settle(client, tenant_request(composite))
    assert "endpoints" not in rendered.status  # Ready, but no service reported yet
    observed["control-plane"]["status"]["atProvider"] = {
        "manifest": {
            "status": {
                "services": [
                    {"name": "keystone", "ready": True},
                    {"name": "horizon", "ready": False},
                ]
            }
        }
    }
    reported = client.run(o.openstack_request(composite, o.region_pools(), observed=observed))
    assert reported.status["endpoints"] == {
        "keystone": "https://keystone-customer-a-prod.eu-de-1.cloud.example.net/v3"
    }
    # Remembered while the ControlPlane's status is briefly unobserved.
    composite["status"] = reported.status
    del observed["control-plane"]["status"]["atProvider"]
    later = client.run(o.openstack_request(composite, o.region_pools(), observed=observed))
    assert later.status["endpoints"]["keystone"].startswith("https://keystone-")


def test_a_clusterusage_protects_every_consumed_pool(client, catalog):
    rendered, _ = settle(client, tenant_request(o.openstack()))
    usages = [
        b
        for b in rendered.resources.values()
        if b["kind"] == "ClusterUsage"
        and b["spec"]["of"]["apiVersion"] == "crossplane.c5c3.io/v1alpha1"
    ]
    protected = sorted(u["spec"]["of"]["resourceRef"]["name"] for u in usages)
    assert protected == ["eu-de-1-control-plane-x1", "hv-pool-a-x1", "hv-pool-b-x1", "st-pool-a-x1"]
    cp_object = rendered.resource("control-plane")["metadata"]["name"]
    for usage in usages:
        assert usage["spec"]["by"]["resourceRef"]["name"] == cp_object
        assert usage["spec"]["of"]["apiVersion"] == "crossplane.c5c3.io/v1alpha1"
        assert catalog.validate(usage) == []


def test_ceph_client_caps_cover_exactly_the_tenant_pools(client):
    rendered = client.run(o.openstack_request(o.openstack(), o.region_pools()))
    found = manifests(rendered)
    pools = sorted(
        found[n]["metadata"]["name"] for n in ("ceph-volumes", "ceph-images", "ceph-ephemeral")
    )
    assert pools == [
        "customer-a-prod-ephemeral",
        "customer-a-prod-images",
        "customer-a-prod-volumes",
    ]
    caps = found["ceph-client"]["spec"]["caps"]
    assert caps["mon"] == "profile rbd"
    for cap in ("osd", "mgr"):
        granted = sorted(p.strip().removeprefix("profile rbd pool=") for p in caps[cap].split(","))
        assert granted == pools
    assert found["ceph-volumes"]["spec"]["replicated"]["size"] == 3
    assert found["ceph-ephemeral"]["spec"]["replicated"]["size"] == 2
    assert found["ceph-volumes"]["spec"]["deviceClass"] == "nvme"


def test_manila_adds_a_cephfs(client, catalog):
    composite = o.openstack(services={"manila": True})
    rendered = client.run(o.openstack_request(composite, o.region_pools()))
    fs = manifests(rendered)["ceph-filesystem"]
    assert fs["kind"] == "CephFilesystem"
    assert fs["metadata"]["name"] == "customer-a-prod-cephfs"
    # issue 23: Rook deletes a filesystem's data with the CR unless told to preserve it
    assert fs["spec"]["preserveFilesystemOnDelete"] is True
    assert_all_valid(rendered, catalog)
    assert "manila" in condition(rendered, "ControlPlaneCoverage")[2]


@pytest.mark.parametrize(
    ("size", "replicas"),
    [
        case(
            "small: one mariadb, keystone and nova-api replica each, as the design source fixes it",
            "small",
            (1, 1, 1),
        ),
        case(
            "medium: three replicas of each, so the database and APIs survive a node loss",
            "medium",
            (3, 3, 3),
        ),
        case(
            "large: nova-api grows to five while mariadb and keystone stay at three",
            "large",
            (3, 3, 5),
        ),
        case("xlarge: five mariadb and keystone replicas, seven nova-api", "xlarge", (5, 5, 7)),
    ],
)
def test_size_presets(client, catalog, size, replicas):
    """mariadb, keystone and nova-api replicas per size, as the design source fixes them."""
    mariadb, keystone, nova_api = replicas
    composite = o.openstack(size=size)
    rendered = client.run(o.openstack_request(composite, o.region_pools()))
    observed = {n: observed_ready(b) for n, b in rendered.resources.items()}
    rendered = client.run(o.openstack_request(composite, o.region_pools(), observed=observed))
    spec = manifests(rendered)["control-plane"]["spec"]
    assert spec["infrastructure"]["database"]["replicas"] == mariadb
    assert spec["services"]["keystone"]["replicas"] == keystone
    assert f"nova (nova-api replicas {nova_api})" in condition(rendered, "ControlPlaneCoverage")[2]
    assert_all_valid(rendered, catalog)


def test_services_the_real_api_lacks_are_named_not_invented(client):
    composite = o.openstack(services={"octavia": True})
    rendered = client.run(o.openstack_request(composite, o.region_pools()))
    observed = {n: observed_ready(b) for n, b in rendered.resources.items()}
    rendered = client.run(o.openstack_request(composite, o.region_pools(), observed=observed))
    services = manifests(rendered)["control-plane"]["spec"]["services"]
    assert set(services) == {"keystone", "glance", "placement", "horizon"}
    _status, reason, message = condition(rendered, "ControlPlaneCoverage")
    assert reason == "NotInControlPlaneAPI"
    for name in ("nova", "neutron", "cinder", "octavia", "cortex", "tls"):
        assert name in message
    assert "manila" not in message


# ------------------------------------------------------------------------- resolution


def _pools_with(replace: dict[str, Any]) -> list[dict[str, Any]]:
    pools = o.region_pools()
    return [replace.get(p["metadata"]["labels"]["crossplane.io/claim-name"], p) for p in pools]


@pytest.mark.parametrize(
    ("pools", "missing", "needle"),
    [
        case(
            "a pool the claim lists but no HypervisorCluster claim exists for: pending, "
            "naming the claim and its namespace",
            lambda: [
                p
                for p in o.region_pools()
                if p["metadata"]["labels"]["crossplane.io/claim-name"] != "hv-pool-b"
            ],
            ("pool-hypervisor-hv-pool-b",),
            "hypervisor pool hv-pool-b: no HypervisorCluster claim 'hv-pool-b' in namespace "
            "'infrastructure'",
        ),
        case(
            "a pool not ready yet: pending, naming it, rather than composing a control plane on it",
            lambda: _pools_with({"hv-pool-b": o.hypervisor("hv-pool-b")}),
            (),
            "hypervisor pool hv-pool-b: not ready",
        ),
        case(
            "a storage pool in another region cannot serve this one: pending, naming both regions",
            lambda: _pools_with({"st-pool-a": o.ready(o.storage("st-pool-a", region="us-east-1"))}),
            (),
            "storage pool st-pool-a: in region 'us-east-1', not 'eu-de-1'",
        ),
        case(
            "a hypervisor pool dedicated to another tenant is not usable: pending, naming "
            "the tenant",
            lambda: _pools_with(
                {
                    "hv-pool-a": o.ready(
                        o.hypervisor(
                            "hv-pool-a", labels={"dedicated": "true", "tenant": "tenant-finance"}
                        )
                    )
                }
            ),
            (),
            "hypervisor pool hv-pool-a: dedicated to tenant 'tenant-finance'",
        ),
        case(
            "the control-plane cluster not ready: pending, naming it",
            lambda: _pools_with({"eu-de-1-control-plane": o.control_plane_cluster()}),
            (),
            "control-plane pool eu-de-1-control-plane: not ready",
        ),
    ],
    ids=["missing", "not-ready", "wrong-region", "dedicated-to-another", "cluster-not-ready"],
)
def test_an_unusable_pool_before_the_control_plane_exists_is_pending(
    client, pools, missing, needle
):
    rendered = client.run(o.openstack_request(o.openstack(), pools(), missing=missing))
    assert rendered.fatal == []
    assert rendered.resources == {}
    assert rendered.status["phase"] == "Pending"
    assert rendered.response.desired.composite.ready == fnv1.READY_FALSE
    _status, reason, message = condition(rendered, "PoolsReady")
    assert reason == "PoolsUnusable"
    assert needle in message
    assert message.count(";") == 0  # exactly the one bad pool is named


def test_every_bad_pool_is_named(client):
    pools = _pools_with(
        {
            "hv-pool-a": o.hypervisor("hv-pool-a"),
            "st-pool-a": o.ready(o.storage("st-pool-a", region="us-east-1")),
        }
    )
    rendered = client.run(o.openstack_request(o.openstack(), pools))
    message = condition(rendered, "PoolsReady")[2]
    assert "hv-pool-a: not ready" in message and "st-pool-a: in region" in message


def test_a_dedicated_pool_serves_its_own_tenant(client, catalog):
    dedicated = o.ready(
        o.hypervisor(
            "hv-pool-compliance",
            workers=20,
            labels={"dedicated": "true", "tenant": "tenant-finance"},
        )
    )
    pools = [o.ready(o.control_plane_cluster()), dedicated, o.ready(o.storage())]
    finance = o.openstack(
        "finance-prod", "tenant-finance", hypervisors=["hv-pool-compliance"], size="xlarge"
    )
    rendered, _ = settle(client, tenant_request(finance, pools))
    assert rendered.status["phase"] == "Ready"
    assert_all_valid(rendered, catalog)
    other = o.openstack("intruder", "tenant-customer-b", hypervisors=["hv-pool-compliance"])
    refused = client.run(o.openstack_request(other, pools))
    assert "dedicated to tenant 'tenant-finance'" in condition(refused, "PoolsReady")[2]


def test_a_dedicated_pool_without_a_tenant_label_belongs_to_its_first_cluster(client, catalog):
    """The design's hv-pool-compliance (dedicated, no tenant label) and finance-prod, verbatim."""
    pool_claim = yaml.safe_load(
        (
            o.EXAMPLES
            / "infrastructure"
            / "eu-de-1"
            / "hypervisor-pools"
            / "hv-pool-compliance.yaml"
        ).read_text()
    )
    compliance = o.ready(
        o.hypervisor("hv-pool-compliance", workers=20, labels=pool_claim["spec"]["labels"])
    )
    pools = [
        o.ready(o.control_plane_cluster()),
        compliance,
        o.ready(o.storage()),
        o.ready(o.storage("st-pool-encrypted", encrypted=True)),
    ]
    finance = o.example_claim("finance/prod.yaml")
    holders = "holders-hypervisor-hv-pool-compliance"
    asked = client.run(o.openstack_request(finance, pools))
    selector = asked.response.requirements.resources[holders]
    protects = {"platform.fn.crossplane.io/protects": "xhypervisorcluster-hv-pool-compliance-x1"}
    assert (selector.kind, dict(selector.match_labels.labels)) == ("ClusterUsage", protects)
    rendered, _ = settle(client, tenant_request(finance, pools, missing=(holders,)))
    assert rendered.status["phase"] == "Ready", rendered.status
    usage = rendered.resource("usage-hypervisor-hv-pool-compliance-by-control-plane")
    assert usage["metadata"]["labels"] == protects
    assert_all_valid(rendered, catalog)
    # A second cluster naming it sees finance-prod's Usage (Crossplane labels it with its claim)
    held = {
        **usage,
        "metadata": {
            **usage["metadata"],
            "labels": {
                **usage["metadata"]["labels"],
                "crossplane.io/composite": finance["metadata"]["name"],
                "crossplane.io/claim-name": "finance-prod",
                "crossplane.io/claim-namespace": "tenant-finance",
            },
        },
    }
    other = o.openstack("audit-prod", "tenant-audit", hypervisors=["hv-pool-compliance"])
    request = o.openstack_request(other, pools)
    request.required_resources[holders].items.add().resource.update(held)
    refused = client.run(request)
    assert refused.resources == {} and refused.status["phase"] == "Pending"
    assert (
        "hypervisor pool hv-pool-compliance: dedicated to one OpenStack cluster, held by "
        "tenant-finance/finance-prod"
    ) in condition(refused, "PoolsReady")[2]
    # finance-prod itself, seeing its own Usage, keeps the pool
    mine = o.openstack_request(finance, pools)
    mine.required_resources[holders].items.add().resource.update(held)
    kept = client.run(mine)
    assert not kept.fatal and "held by" not in condition(kept, "PoolsReady")[2]


def test_requirements_select_pool_claims_by_label(client):
    rendered = client.run(o.openstack_request(o.openstack(), [], missing=()))
    # Nothing fetched yet: only requirements, nothing composed.
    assert rendered.resources == {}
    selector = rendered.requirements["pool-hypervisor-hv-pool-a"]
    assert selector["kind"] == "XHypervisorCluster"
    assert selector["matchLabels"]["labels"] == {
        "crossplane.io/claim-name": "hv-pool-a",
        "crossplane.io/claim-namespace": "infrastructure",
    }
    assert {
        "pool-control-plane-eu-de-1-control-plane",
        "pool-storage-st-pool-a",
        "pool-hypervisor-hv-pool-b",
    } <= set(rendered.requirements)


def test_a_pool_that_goes_missing_later_keeps_everything_and_degrades(client, catalog):
    composite = o.openstack()
    rendered, observed = settle(client, tenant_request(composite))
    composite["status"] = rendered.status
    pools = [
        p
        for p in o.region_pools()
        if p["metadata"]["labels"]["crossplane.io/claim-name"] != "hv-pool-b"
    ]
    degraded = client.run(
        o.openstack_request(
            composite, pools, observed=observed, missing=("pool-hypervisor-hv-pool-b",)
        )
    )
    assert degraded.fatal == []
    assert set(degraded.resources) == set(rendered.resources)  # nothing removed
    assert degraded.resources == rendered.resources  # nor changed
    assert degraded.status["phase"] == "Degraded"
    hv = {p["name"]: p for p in degraded.status["consumedPools"]["hypervisor"]}
    assert hv["hv-pool-b"]["status"] == "Missing"
    assert hv["hv-pool-b"]["providerConfig"] == "eu-de-1-hv-pool-b"
    assert "hv-pool-b: no HypervisorCluster claim" in condition(degraded, "PoolsReady")[2]
    assert_all_valid(degraded, catalog)
    # Still degraded on the next pass: the memory survives its own report.
    composite["status"] = degraded.status
    again = client.run(
        o.openstack_request(
            composite, pools, observed=observed, missing=("pool-hypervisor-hv-pool-b",)
        )
    )
    assert again.resources == rendered.resources
    assert again.status["phase"] == "Degraded"


def test_a_storage_pool_that_goes_missing_keeps_its_ceph_resources_unchanged(client):
    composite = o.openstack()
    rendered, observed = settle(client, tenant_request(composite))
    composite["status"] = rendered.status
    pools = [
        p
        for p in o.region_pools()
        if p["metadata"]["labels"]["crossplane.io/claim-name"] != "st-pool-a"
    ]
    degraded = client.run(
        o.openstack_request(
            composite, pools, observed=observed, missing=("pool-storage-st-pool-a",)
        )
    )
    assert degraded.resources == rendered.resources
    assert degraded.status["phase"] == "Degraded"
    (storage,) = degraded.status["consumedPools"]["storage"]
    assert (storage["status"], storage["deviceClass"], storage["replicationFactor"]) == (
        "Missing",
        "nvme",
        3,
    )


def test_a_new_bad_pool_after_the_control_plane_exists_is_not_consumed(client):
    composite = o.openstack()
    rendered, observed = settle(client, tenant_request(composite))
    composite["status"] = rendered.status
    composite["spec"]["hypervisorClusters"].append("hv-pool-c")
    later = client.run(
        o.openstack_request(
            composite, o.region_pools(), observed=observed, missing=("pool-hypervisor-hv-pool-c",)
        )
    )
    assert later.resources == rendered.resources
    assert later.status["phase"] == "Degraded"
    names = [p["name"] for p in later.status["consumedPools"]["hypervisor"]]
    assert names == ["hv-pool-a", "hv-pool-b"]
    assert "hv-pool-c" in condition(later, "PoolsReady")[2]


# ------------------------------------------------------------------------------ sharing


def test_tenants_sharing_pools_never_collide(client, catalog):
    a, _ = settle(client, tenant_request(o.openstack()))
    b, _ = settle(
        client,
        tenant_request(
            o.openstack(
                "customer-b-staging", "tenant-customer-b", hypervisors=["hv-pool-a"], size="small"
            )
        ),
    )
    assert_all_valid(a, catalog)
    assert_all_valid(b, catalog)

    def identities(rendered):
        out = {
            (body["apiVersion"], body["kind"], body["metadata"]["name"])
            for body in rendered.resources.values()
        }
        out |= {
            (m["apiVersion"], m["kind"], m["metadata"].get("namespace"), m["metadata"]["name"])
            for m in manifests(rendered).values()
        }
        return out

    assert identities(a) & identities(b) == set()
    # Both run on the same storage pool ProviderConfig, in its rook-ceph namespace.
    assert (
        a.resource("ceph-volumes")["spec"]["providerConfigRef"]
        == b.resource("ceph-volumes")["spec"]["providerConfigRef"]
    )
    assert manifests(b)["control-plane"]["spec"]["infrastructure"]["database"]["replicas"] == 1


# ------------------------------------------------------------------------ input and size


@pytest.mark.parametrize(
    ("mutate", "field"),
    [
        case(
            "a size outside the presets is refused naming spec.size",
            lambda c: c["spec"].update(size="huge"),
            "spec.size",
        ),
        case(
            "an OpenStack region without hypervisors is refused naming spec.hypervisorClusters",
            lambda c: c["spec"].update(hypervisorClusters=[]),
            "spec.hypervisorClusters",
        ),
        case(
            "the same storage pool twice is refused naming spec.storageClusters",
            lambda c: c["spec"].update(storageClusters=["st-pool-a", "st-pool-a"]),
            "spec.storageClusters",
        ),
        case(
            "keystone cannot be switched off: every other service authenticates through it",
            lambda c: c["spec"].update(services={"keystone": False}),
            "keystone",
        ),
        case(
            "a composite of another kind is refused naming kind: the step was wired to "
            "the wrong composition",
            lambda c: c.update(kind="XSomethingElse"),
            "kind",
        ),
    ],
)
def test_bad_input_is_a_fatal_result_naming_the_field(client, mutate, field):
    composite = o.openstack()
    mutate(composite)
    rendered = client.run(o.openstack_request(composite, o.region_pools()))
    assert len(rendered.fatal) == 1 and field in rendered.fatal[0], rendered.fatal


def _without_region_issuer(request: Any) -> Any:
    """``request`` whose region EnvironmentConfig names no default TLS issuer."""
    env = o.environment()
    del env["data"]["controlPlane"]["tlsIssuerRef"]
    request.required_resources["environment-0"].items[0].resource.Clear()
    request.required_resources["environment-0"].items[0].resource.update(env)
    return request


def test_the_documents_tenant_claims_without_tls_take_the_regions_issuer(client):
    """customer-b-staging, verbatim from the design, sets no tls block."""
    for claim in ("customer-b/staging.yaml",):
        composite = o.example_claim(claim)
        assert "tls" not in composite["spec"]
        rendered = client.run(o.openstack_request(composite, o.region_pools()))
        assert not rendered.fatal, rendered.fatal
        coverage = rendered.condition("ControlPlaneCoverage")
        assert coverage is not None and "tls (issuerRef letsencrypt-prod)" in coverage.message


def test_tls_without_any_issuer_is_a_fatal_result_naming_the_field(client):
    composite = o.openstack()
    composite["spec"]["tls"].pop("issuerRef")
    rendered = client.run(_without_region_issuer(o.openstack_request(composite, o.region_pools())))
    assert rendered.fatal == [
        "spec.tls.issuerRef: required when tls.enabled is true and the region's "
        "EnvironmentConfig sets no controlPlane.tlsIssuerRef; name a cert-manager "
        "ClusterIssuer, or set tls.enabled to false"
    ]
    composite["spec"]["tls"] = {"enabled": False}
    rendered = client.run(_without_region_issuer(o.openstack_request(composite, o.region_pools())))
    assert not rendered.fatal


def test_missing_region_settings_are_named(client):
    composite = o.hypervisor()
    request = o.pool_request(composite)
    env = o.environment()
    del env["data"]["gardener"]["credentialsBindingName"]
    request.required_resources["environment-0"].items[0].resource.Clear()
    request.required_resources["environment-0"].items[0].resource.update(env)
    rendered = client.run(request)
    assert rendered.fatal and "environment.gardener.credentialsBindingName" in rendered.fatal[0]


@pytest.mark.parametrize(
    ("provider", "networking", "message"),
    [
        case(
            "Gardener validates networking.type for Shoots with workers: without "
            "networking the region's settings are refused before a Shoot is sent",
            "ironcore",
            None,
            "needs type (the CNI",
        ),
        case(
            "networking with nodes but no type (the CNI) is refused the same way",
            "ironcore",
            {"nodes": "10.180.0.0/16"},
            "needs type (the CNI",
        ),
        case(
            "the OpenStack extension needs networking.nodes: without it refused before "
            "the Shoot is sent",
            "openstack",
            {"type": "cilium"},
            "needs nodes (the node CIDR)",
        ),
        case(
            "the ironcore extension also refuses a Shoot without networking.nodes: "
            "refused first, saying so",
            "ironcore",
            {"type": "cilium"},
            "the ironcore extension refuses a Shoot without networking.nodes",
        ),
    ],
)
def test_a_shoot_gardener_would_refuse_is_refused_first(client, provider, networking, message):
    """Issue 23: Gardener validates networking.type for Shoots with workers, and the OpenStack
    extension networking.nodes; the region's settings are refused before a Shoot is sent."""
    request = o.pool_request(o.hypervisor())
    env = o.environment()
    env["data"]["gardener"]["providerType"] = provider
    if networking is None:
        del env["data"]["gardener"]["networking"]
    else:
        env["data"]["gardener"]["networking"] = networking
    request.required_resources["environment-0"].items[0].resource.Clear()
    request.required_resources["environment-0"].items[0].resource.update(env)
    rendered = client.run(request)
    assert len(rendered.fatal) == 1, rendered.fatal
    assert rendered.fatal[0].startswith("environment.gardener.networking")
    assert message in rendered.fatal[0]
    assert "shoot" not in rendered.resources


def test_a_cluster_on_100_pools_composes_within_the_size_limits(client, catalog):
    names = [f"hv-{i:03d}" for i in range(100)]
    pools = [o.ready(o.control_plane_cluster()), o.ready(o.storage())]
    pools += [o.ready(o.hypervisor(n)) for n in names]
    composite = o.openstack(hypervisors=names, size="xlarge")
    rendered, _ = settle(client, tenant_request(composite, pools), passes=3)
    assert rendered.fatal == [] and rendered.warnings == []
    assert len(rendered.status["consumedPools"]["hypervisor"]) == 100
    usages = [
        b
        for b in rendered.resources.values()
        if b["kind"] == "ClusterUsage"
        and b["spec"]["of"]["apiVersion"] == "crossplane.c5c3.io/v1alpha1"
    ]
    assert len(usages) == 102
    size = rendered.response.ByteSize()
    assert size < 0.8 * 4 * 1024 * 1024, size
    assert_all_valid(rendered, catalog)


def test_same_request_same_bytes(client):
    request = o.openstack_request(o.openstack(), o.region_pools())
    first = client.run(request).response.SerializeToString(deterministic=True)
    second = client.run(copy.deepcopy(request)).response.SerializeToString(deterministic=True)
    assert first == second


# --------------------------------------------------------------------------- API, examples


def test_the_xr_kinds_do_not_collide_with_the_c5c3_operator(catalog):
    from fnplatform.composers.openstack.api import APIS

    operator = {kind for (api, kind) in catalog.entries if api.startswith("c5c3.io/")}
    assert operator == {"ControlPlane", "CredentialRotation", "KeystoneService", "SecretAggregate"}
    ours = {k for api in APIS if api.group == "c5c3.io" for k in (api.kind, api.claim_kind)}
    assert ours == {"XOpenStackCluster", "OpenStackCluster"}
    assert ours & operator == set()


GITOPS = sorted(
    p for p in (ROOT / "examples" / "openstack").rglob("*.yaml") if "render" not in p.parts
)


@pytest.mark.parametrize("path", GITOPS, ids=lambda p: str(p.relative_to(ROOT)))
def test_gitops_examples_validate(path, catalog):
    """Flux, Crossplane package and ProviderConfig objects against their CRDs; claims and
    kustomize files are checked elsewhere (test_apis) or have no CRD, and so have the tenants'
    Namespaces and RBAC (test_each_tenant_may_manage_openstack_clusters_in_its_namespace_only)."""
    checked = 0
    for doc in yaml.safe_load_all(path.read_text()):
        if not doc or doc.get("apiVersion", "").startswith(
            (
                "kustomize.config.k8s.io",
                "c5c3.io",
                "crossplane.c5c3.io",
                "rbac.authorization.k8s.io",
            )
        ):
            continue
        if (doc["apiVersion"], doc["kind"]) == ("v1", "Namespace"):
            continue
        assert catalog.validate(doc) == []
        checked += 1
    if not {"tenants", "infrastructure"} & set(path.parts) and path.name != "tenant-role.yaml":
        assert checked, f"{path} holds nothing validated"


def test_gitops_tree_mirrors_the_seed():
    root = ROOT / "examples" / "openstack"
    claims = {}
    for path in root.rglob("*.yaml"):
        for doc in yaml.safe_load_all(path.read_text()):
            if doc and doc.get("kind") in (
                "HypervisorCluster",
                "StorageCluster",
                "ControlPlaneCluster",
                "OpenStackCluster",
            ):
                claims[doc["metadata"]["name"]] = doc
    assert claims["hv-pool-a"]["spec"]["workers"] == 50
    assert claims["hv-pool-b"]["spec"]["workers"] == 100
    assert claims["hv-pool-compliance"]["spec"]["labels"]["dedicated"] == "true"
    assert claims["customer-a-prod"]["spec"]["hypervisorClusters"] == ["hv-pool-a", "hv-pool-b"]
    assert claims["customer-b-staging"]["spec"]["hypervisorClusters"] == ["hv-pool-a"]
    assert claims["finance-prod"]["spec"]["hypervisorClusters"] == ["hv-pool-compliance"]
    assert claims["finance-prod"]["spec"]["storageClusters"] == ["st-pool-encrypted"]
    assert claims["st-pool-encrypted"]["spec"]["ceph"]["encrypted"] is True
    assert "tenant" not in claims["hv-pool-compliance"]["spec"]["labels"]  # as the design has it
    # the design's pool overview per region, and its internal tenant
    regions = {name: c["spec"]["region"] for name, c in claims.items()}
    assert {n for n, r in regions.items() if r == "us-east-1"} == {
        "us-east-1-control-plane",
        "hv-pool-us",
        "st-pool-us",
    }
    assert claims["hv-pool-us"]["spec"]["workers"] == 75
    assert claims["st-pool-us"]["spec"]["ceph"]["targetCapacity"] == "750Ti"
    assert claims["st-pool-b"]["spec"]["ceph"]["targetCapacity"] == "1Pi"
    assert claims["internal-prod"]["spec"]["hypervisorClusters"] == ["hv-pool-b"]
    assert claims["internal-prod"]["spec"]["storageClusters"] == ["st-pool-a", "st-pool-b"]


def test_a_cluster_on_two_storage_pools_gets_ceph_pools_and_a_client_on_each(client, catalog):
    """The design's internal-prod runs on st-pool-a and st-pool-b: both carry its Ceph pools."""
    composite = o.openstack(
        "internal-prod",
        "tenant-internal",
        storages=["st-pool-a", "st-pool-b"],
        services={"manila": True},
    )
    pools = [*o.region_pools(), o.ready(o.storage("st-pool-b"))]
    rendered = client.run(o.openstack_request(composite, pools))
    assert not rendered.fatal, rendered.fatal
    first, second = (
        {
            name: body
            for name, body in rendered.resources.items()
            if name.startswith("ceph-") and name.endswith("-st-pool-b") == on_b
        }
        for on_b in (False, True)
    )
    assert sorted(first) == [
        "ceph-client",
        "ceph-ephemeral",
        "ceph-filesystem",
        "ceph-images",
        "ceph-volumes",
    ]
    assert sorted(second) == [
        "ceph-client-st-pool-b",
        "ceph-ephemeral-st-pool-b",
        "ceph-images-st-pool-b",
        "ceph-volumes-st-pool-b",
    ]
    configs = {
        name: body["spec"]["providerConfigRef"]["name"]
        for name, body in {**first, **second}.items()
    }
    assert len({configs[n] for n in first}) == 1 and len({configs[n] for n in second}) == 1
    assert configs["ceph-volumes"] != configs["ceph-volumes-st-pool-b"]
    manifest = second["ceph-volumes-st-pool-b"]["spec"]["forProvider"]["manifest"]
    assert manifest["metadata"]["name"] == "internal-prod-volumes"
    assert_all_valid(rendered, catalog)


# ------------------------------------------------------- GitOps: every Flux path builds


#: Where each GitRepository of the example's Flux objects is checked out in this repository.
SOURCES = {"function-platform": ROOT, "c5c3-gitops": ROOT / "examples" / "openstack"}


def _flux_kustomizations() -> list[dict[str, Any]]:
    path = ROOT / "examples" / "openstack" / "clusters" / "management" / "kustomizations.yaml"
    return [d for d in yaml.safe_load_all(path.read_text()) if d]


def _build(directory: Path) -> list[dict[str, Any]]:
    """The objects kustomize (or Flux, generating a kustomization.yaml where a path has none:
    every manifest of the tree, a subfolder with its own kustomization.yaml as one resource)
    builds from ``directory``."""
    kustomization = directory / "kustomization.yaml"
    if not kustomization.exists():
        built: list[dict[str, Any]] = []
        for entry in sorted(directory.iterdir()):
            if entry.is_dir():
                built += _build(entry)
            elif entry.suffix == ".yaml":
                built += [d for d in yaml.safe_load_all(entry.read_text()) if d]
        return built
    spec = yaml.safe_load(kustomization.read_text())
    built = []
    for resource in spec.get("resources", []):
        target = (directory / resource).resolve()
        if target.is_dir():
            built += _build(target)
        else:
            # kustomize's load restrictor: files only from the kustomization's own tree
            assert directory.resolve() in target.parents, f"{kustomization}: {resource}"
            built += [d for d in yaml.safe_load_all(target.read_text()) if d]
    if spec.get("namespace"):
        for doc in built:
            doc.setdefault("metadata", {})["namespace"] = spec["namespace"]
    return built


@pytest.mark.parametrize("flux", _flux_kustomizations(), ids=lambda k: k["metadata"]["name"])
def test_every_flux_kustomization_path_builds_without_duplicate_ids(flux):
    source = SOURCES[flux["spec"]["sourceRef"]["name"]]
    directory = source / flux["spec"]["path"].removeprefix("./")
    assert directory.is_dir(), directory
    built = _build(directory)
    assert built, f"{directory} builds nothing"
    ids = [
        (
            d["apiVersion"].split("/")[0],
            d["kind"],
            d["metadata"].get("namespace"),
            d["metadata"]["name"],
        )
        for d in built
    ]
    duplicates = sorted({i for i in ids if ids.count(i) > 1})
    assert not duplicates, f"kustomize refuses duplicate ids: {duplicates}"
    kubectl = shutil.which("kubectl")
    if kubectl and (directory / "kustomization.yaml").exists():  # the real tool, when present
        out = subprocess.run(
            [kubectl, "kustomize", str(directory)],
            capture_output=True,
            text=True,
            check=False,
            timeout=120,
        )
        assert out.returncode == 0, out.stderr
        assert len([d for d in yaml.safe_load_all(out.stdout) if d]) == len(built)


@pytest.mark.parametrize("form", ["apis/openstack", "apis/openstack/namespaced"])
def test_each_form_of_the_openstack_apis_has_its_own_path(form):
    built = _build(ROOT / form)
    definitions = [d for d in built if d["kind"] == "CompositeResourceDefinition"]
    assert len(definitions) == 4 and len(built) == 8
    scopes = {d["spec"].get("scope", "Cluster") for d in definitions}
    assert scopes == ({"Namespaced"} if form.endswith("namespaced") else {"Cluster"}), scopes


def test_a_second_namespace_cannot_take_a_tenant_name_already_in_use(client):
    """Tenants share the control-plane cluster's namespace openstack-<name> and the storage
    pools' Ceph pools <name>-*: a second namespace's cluster of the same name is refused."""
    first = o.openstack("prod", "tenant-a")
    settled, _ = settle(client, tenant_request(first))
    usage = next(
        body for name, body in settled.resources.items() if name.startswith("usage-control-plane")
    )
    taken = {
        **usage,
        "metadata": {
            **usage["metadata"],
            "labels": {
                **usage["metadata"]["labels"],
                "crossplane.io/composite": first["metadata"]["name"],
                "crossplane.io/claim-name": "prod",
                "crossplane.io/claim-namespace": "tenant-a",
            },
        },
    }
    second = o.openstack("prod", "tenant-b", xr="prod-b9q2m")
    request = o.openstack_request(second, o.region_pools())
    request.required_resources[
        "holders-control-plane-eu-de-1-control-plane"
    ].items.add().resource.update(taken)
    refused = client.run(request)
    assert refused.resources == {} and refused.status["phase"] == "Pending"
    assert condition(refused, "PoolsReady")[1:] == (
        "NameTaken",
        "the OpenStack cluster tenant-a/prod already has the name prod: both would "
        "share the namespace openstack-prod and the Ceph pools prod-*; choose another name",
    )
    # the first, seeing its own Usage, and another name in tenant-b are both fine
    again = o.openstack_request(first, o.region_pools())
    again.required_resources[
        "holders-control-plane-eu-de-1-control-plane"
    ].items.add().resource.update(taken)
    assert client.run(again).resources
    other = o.openstack_request(o.openstack("staging", "tenant-b"), o.region_pools())
    other.required_resources[
        "holders-control-plane-eu-de-1-control-plane"
    ].items.add().resource.update(taken)
    assert client.run(other).resources


# ------------------------------------------------------------- drift (issue 23 item 3)


def _running(
    observed: dict[str, Any],
    *,
    kubernetes: str,
    image: str | None = None,
    worker: str = "hypervisor",
) -> dict[str, Any]:
    """``observed`` with the live Shoot (what provider-kubernetes reports in
    ``status.atProvider.manifest``) running ``kubernetes`` and machine image ``image``."""
    observed = copy.deepcopy(observed)
    manifest = copy.deepcopy(observed["shoot"]["spec"]["forProvider"]["manifest"])
    manifest["spec"]["kubernetes"]["version"] = kubernetes
    (live,) = manifest["spec"]["provider"]["workers"]
    assert live["name"] == worker
    live["machine"]["image"]["version"] = image or "1592.2.0"
    observed["shoot"]["status"]["atProvider"] = {"manifest": manifest}
    return observed


def _shoot_spec(rendered) -> dict[str, Any]:
    return rendered.resource("shoot")["spec"]["forProvider"]["manifest"]["spec"]


@pytest.mark.parametrize(
    "case",
    [
        case(
            "steady: the version asked for runs, it is sent again, no warning",
            ("1.33.4", "1.33.4", "1.33.4", False),
        ),
        case(
            "an expired patch force-upgraded by maintenance: the running version is sent, "
            "not the older one Gardener would refuse as a downgrade, with a warning",
            ("1.33.4", "1.33.9", "1.33.9", True),
        ),
        case(
            "an expired minor force-upgraded: the running minor is kept, with a warning",
            ("1.33.4", "1.34.1", "1.34.1", True),
        ),
        case(
            "a minor only: the patch the shoot mutator chose is sent, so re-sending the "
            "minor does not patch-upgrade at an arbitrary reconcile",
            ("1.33", "1.33.7", "1.33.7", False),
        ),
        case("an upgrade the claim asks for is sent as asked", ("1.34", "1.33.7", "1.34", False)),
        case(
            "a patch of a newer minor is an upgrade: sent as asked",
            ("1.34.2", "1.33.7", "1.34.2", False),
        ),
    ],
)
def test_the_shoot_kubernetes_version_never_goes_behind_the_running_one(client, catalog, case):
    """Gardener changes ``spec.kubernetes.version`` after creation: the shoot mutator resolves
    ``1.33`` to the newest patch, maintenance force-upgrades an expired version even with
    autoUpdate off, and it refuses downgrades. provider-kubernetes sends the whole manifest
    on every change, so re-sending the older or minor-only version would fail every later
    change of the pool, or patch-upgrade it at an arbitrary reconcile."""
    asked, running, sent, warned = case
    composite = o.hypervisor()
    composite["spec"]["kubernetesVersion"] = asked
    _, observed = settle(client, lambda obs: o.pool_request(composite, observed=obs))
    rendered = client.run(
        o.pool_request(composite, observed=_running(observed, kubernetes=running))
    )
    assert rendered.fatal == []
    assert_all_valid(rendered, catalog)
    assert _shoot_spec(rendered)["kubernetes"]["version"] == sent
    warnings = [r for r in rendered.response.results if r.reason == "KubernetesVersionKept"]
    assert bool(warnings) is warned
    assert _shoot_spec(rendered)["maintenance"]["autoUpdate"]["kubernetesVersion"] is False


def test_a_new_shoot_gets_the_version_asked_for(client):
    composite = o.hypervisor()
    composite["spec"]["kubernetesVersion"] = "1.33"
    assert _shoot_spec(client.run(o.pool_request(composite)))["kubernetes"]["version"] == "1.33"


def _pinned_image(request: Any, version: str) -> Any:
    env = o.environment()
    env["data"]["gardener"]["machineImage"]["version"] = version
    request.required_resources["environment-0"].items[0].resource.Clear()
    request.required_resources["environment-0"].items[0].resource.update(env)
    return request


@pytest.mark.parametrize(
    ("pinned", "running", "sent"),
    [
        case("the pinned machine image runs: sent as pinned", "1592.1.0", "1592.1.0", "1592.1.0"),
        case(
            "an expired pin force-updated by maintenance: the running image is sent, the "
            "old pin would be refused",
            "1592.1.0",
            "1592.4.0",
            "1592.4.0",
        ),
        case(
            "the region raises its pin above the running image: the new pin is sent",
            "1877.0.0",
            "1592.4.0",
            "1877.0.0",
        ),
    ],
)
def test_a_pinned_machine_image_never_goes_behind_the_running_one(
    client, catalog, pinned, running, sent
):
    """An expired pinned image version is force-updated by maintenance like Kubernetes; the
    old pin re-sent would be refused. Unpinned, no version is sent at all (Gardener keeps
    the worker's, ``ensureMachineImage``)."""
    composite = o.hypervisor()
    _, observed = settle(
        client, lambda obs: _pinned_image(o.pool_request(composite, observed=obs), pinned)
    )
    rendered = client.run(
        _pinned_image(
            o.pool_request(
                composite, observed=_running(observed, kubernetes="1.33.4", image=running)
            ),
            pinned,
        )
    )
    assert rendered.fatal == []
    assert_all_valid(rendered, catalog)
    spec = _shoot_spec(rendered)
    (worker,) = spec["provider"]["workers"]
    assert worker["machine"]["image"] == {"name": "gardenlinux", "version": sent}
    assert spec["maintenance"]["autoUpdate"]["machineImageVersion"] is False
    unpinned = client.run(
        o.pool_request(composite, observed=_running(observed, kubernetes="1.33.4", image=running))
    )
    (worker,) = _shoot_spec(unpinned)["provider"]["workers"]
    assert worker["machine"]["image"] == {"name": "gardenlinux"}


def test_the_first_kubeconfig_job_is_created_once_and_never_patched(client, catalog):
    """A Job's pod template is immutable: with Update allowed, a changed refresher setting
    would be a patch Kubernetes refuses on every reconcile. The first-run Object is created,
    observed and deleted, never updated; the CronJob (mutable) follows the settings."""
    composite = o.hypervisor()
    settled, _ = settle(client, lambda obs: o.pool_request(composite, observed=obs))
    first = settled.resource("access-first-run")
    assert first["spec"]["managementPolicies"] == ["Observe", "Create", "Delete"]
    assert "managementPolicies" not in settled.resource("access-cronjob")["spec"]
    assert "managementPolicies" not in settled.resource("shoot")["spec"]
    assert_all_valid(settled, catalog)


def test_a_highly_available_control_plane_cannot_be_turned_off(client):
    """Turning HA off would stop sending ``controlPlane``; the merge patch would leave it on
    the Shoot (and Gardener keeps HA anyway): refused on the field instead of silently kept."""
    composite = o.control_plane_cluster()
    composite["spec"]["highAvailability"] = True
    _, observed = settle(client, lambda obs: o.pool_request(composite, observed=obs))
    off = copy.deepcopy(composite)
    off["spec"]["highAvailability"] = False
    (fatal,) = client.run(o.pool_request(off, observed=observed)).fatal
    assert fatal.startswith("spec.highAvailability: cannot be turned off once the pool's Shoot")
    assert client.run(o.pool_request(composite, observed=observed)).fatal == []
    # Before the Shoot exists the claim may still choose.
    assert client.run(o.pool_request(off)).fatal == []


# ------------------------------------------- GitOps: kubectl kustomize, schemas, tenant RBAC


def _kubectl_kustomize(directory: Path) -> list[dict[str, Any]]:
    """What ``kubectl kustomize`` builds from ``directory`` (kubectl is on this machine's
    PATH; the build container installs it with the other tools, see tools/)."""
    kubectl = shutil.which("kubectl")
    assert kubectl, "kubectl is required for kubectl kustomize"
    out = subprocess.run(
        [kubectl, "kustomize", str(directory)],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    return [d for d in yaml.safe_load_all(out.stdout) if d]


OVERLAYS = sorted(p.parent for p in (ROOT / "examples" / "openstack").rglob("kustomization.yaml"))
CLAIM_MODELS = {api.claim_kind: api for api in APIS}


@pytest.mark.parametrize("overlay", OVERLAYS, ids=lambda p: str(p.relative_to(ROOT)))
def test_each_overlay_builds_with_kubectl_kustomize_and_validates(overlay, catalog):
    """Every kustomization of the tree, built by the real tool; each object it builds against
    its schema: claims against their XRD's spec schema and model, CRD kinds against their
    CRD; the core kinds (Namespace, RoleBinding) by the fields the API server requires."""
    built = _kubectl_kustomize(overlay)
    assert built
    for doc in built:
        kind = doc["kind"]
        if kind in CLAIM_MODELS:
            api = CLAIM_MODELS[kind]
            assert doc["apiVersion"] == f"{api.group}/{api.version}"
            errors = sorted(
                e.message
                for e in Draft4Validator(translate_schema(api.spec_schema())).iter_errors(
                    doc["spec"]
                )
            )
            assert errors == [], (doc["metadata"]["name"], errors)
            api.spec_model.model_validate(doc["spec"])
            assert doc["metadata"]["namespace"], doc["metadata"]["name"]
        elif kind == "RoleBinding":
            assert doc["roleRef"] == {
                "apiGroup": "rbac.authorization.k8s.io",
                "kind": "ClusterRole",
                "name": "c5c3-openstack-tenant",
            }
            assert doc["metadata"]["namespace"].startswith("tenant-")
        elif kind == "Namespace":
            assert doc["metadata"]["name"].startswith("tenant-")
        else:
            assert catalog.validate(doc) == [], doc["metadata"]["name"]


def test_each_tenant_may_manage_openstack_clusters_in_its_namespace_only():
    """Per-tenant RBAC: one ClusterRole (what a tenant may do), bound in each tenant's own
    namespace to its group and nowhere else, and the tenant's claims are in that namespace."""
    (role,) = yaml.safe_load_all(
        (
            ROOT / "examples" / "openstack" / "apps" / "platform-config" / "tenant-role.yaml"
        ).read_text()
    )
    writes = {
        v
        for rule in role["rules"]
        for v in rule["verbs"]
        if rule["resources"] == ["openstackclusters"]
    }
    assert {"create", "update", "delete"} <= writes
    assert all(rule["apiGroups"] in (["c5c3.io"], [""]) for rule in role["rules"])
    assert not any(
        "create" in rule["verbs"]
        for rule in role["rules"]
        if rule["resources"] != ["openstackclusters"]
    )
    tenants = sorted(
        p for p in (ROOT / "examples" / "openstack" / "tenants").iterdir() if p.is_dir()
    )
    assert [t.name for t in tenants] == ["customer-a", "customer-b", "finance", "internal"]
    for tenant in tenants:
        built = _kubectl_kustomize(tenant)
        namespace = f"tenant-{tenant.name}"
        bindings = [d for d in built if d["kind"] in ("RoleBinding", "ClusterRoleBinding")]
        assert [(b["kind"], b["metadata"]["namespace"], b["subjects"]) for b in bindings] == [
            (
                "RoleBinding",
                namespace,
                [
                    {
                        "apiGroup": "rbac.authorization.k8s.io",
                        "kind": "Group",
                        "name": f"tenant:{tenant.name}",
                    }
                ],
            )
        ]
        claims = [d for d in built if d["kind"] == "OpenStackCluster"]
        assert claims and {c["metadata"]["namespace"] for c in claims} == {namespace}


# --------------------------------------------------- encrypted storage pools (issue 35, 1)


def test_an_encrypted_pool_is_ready_only_once_its_ceph_cluster_encrypts(client, catalog):
    """ceph.encrypted is checked, not believed: an observe-only Object reads the pool's
    CephCluster (never writes it) through the pool's ProviderConfig, ready when Rook is asked
    to encrypt OSDs; until then the pool is Provisioning, status.encrypted false, and the
    Encrypted condition says what the CephCluster needs."""
    composite = o.storage("st-pool-encrypted", encrypted=True)
    rendered, observed = settle(client, lambda obs: o.pool_request(composite, observed=obs))
    reader = rendered.resources["ceph-cluster"]
    assert reader["spec"]["managementPolicies"] == ["Observe"]
    assert reader["spec"]["providerConfigRef"]["name"] == "eu-de-1-st-pool-encrypted"
    manifest = reader["spec"]["forProvider"]["manifest"]
    assert (manifest["kind"], manifest["metadata"]) == (
        "CephCluster",
        {"name": "rook-ceph", "namespace": "rook-ceph"},
    )
    query = reader["spec"]["readiness"]["celQuery"]
    assert "encryptedDevice" in query and "storageClassDeviceSets" in query
    assert rendered.status["encrypted"] is True
    assert condition(rendered, "Encrypted")[:2] == (fnv1.STATUS_CONDITION_TRUE, "OSDsEncrypted")
    assert_all_valid(rendered, catalog)
    # the CephCluster does not encrypt (yet): the reader is not Ready
    observed["ceph-cluster"]["status"]["conditions"][0]["status"] = "False"
    shoot = observed["shoot"]["status"]
    shoot["atProvider"] = {
        "manifest": {
            **observed["shoot"]["spec"]["forProvider"]["manifest"],
            "status": {"lastOperation": {"type": "Create", "state": "Succeeded"}},
        }
    }
    rendered = client.run(o.pool_request(composite, observed=observed))
    assert rendered.status["encrypted"] is False
    assert rendered.status["phase"] == "Provisioning"
    status, reason, message = condition(rendered, "Encrypted")
    assert (status, reason) == (fnv1.STATUS_CONDITION_FALSE, "NotSeenOnCephCluster")
    assert 'encryptedDevice "true"' in message and "storageClassDeviceSet" in message
    assert not rendered.ready("ceph-cluster")


def test_a_plain_pool_reads_no_ceph_cluster_and_says_it_is_not_encrypted(client):
    rendered, _ = settle(client, lambda obs: o.pool_request(o.storage(), observed=obs))
    assert "ceph-cluster" not in rendered.resources
    assert rendered.status["encrypted"] is False
    assert rendered.condition("Encrypted") is None


def test_requiring_encryption_refuses_a_plain_pool_pending_with_the_reason(client):
    composite = o.openstack(
        "finance-prod",
        "tenant-finance",
        hypervisors=["hv-pool-a"],
        storages=["st-pool-a"],
        encryptedStorage=True,
    )
    rendered = client.run(o.openstack_request(composite, o.region_pools()))
    assert not rendered.fatal and rendered.resources == {}
    assert rendered.status["phase"] == "Pending"
    status, reason, message = condition(rendered, "PoolsReady")
    assert (status, reason) == (fnv1.STATUS_CONDITION_FALSE, "PoolsUnusable")
    assert message == (
        "storage pool st-pool-a: not encrypted (its spec.ceph.encrypted is "
        "false) and spec.encryptedStorage requires encrypted storage pools"
    )
    (storage,) = rendered.status["consumedPools"]["storage"]
    assert (storage["status"], storage["encrypted"]) == ("Unencrypted", False)


def test_requiring_encryption_composes_on_an_encrypted_pool(client, catalog):
    pools = [*o.region_pools(), o.ready(o.storage("st-pool-encrypted", encrypted=True))]
    composite = o.openstack(
        "finance-prod",
        "tenant-finance",
        hypervisors=["hv-pool-a"],
        storages=["st-pool-encrypted"],
        encryptedStorage=True,
    )
    rendered = client.run(o.openstack_request(composite, pools))
    assert not rendered.fatal, rendered.fatal
    assert condition(rendered, "PoolsReady")[:2] == (fnv1.STATUS_CONDITION_TRUE, "AllPoolsReady")
    assert rendered.resources["ceph-volumes"]["spec"]["providerConfigRef"]["name"] == (
        "eu-de-1-st-pool-encrypted"
    )
    assert_all_valid(rendered, catalog)


def test_a_plain_pool_added_later_under_required_encryption_is_not_consumed(client):
    """Once the tenant exists, an unencrypted pool added to it degrades the cluster, keeps
    everything, and composes nothing on the plain pool."""
    pools = [*o.region_pools(), o.ready(o.storage("st-pool-encrypted", encrypted=True))]
    composite = o.openstack(
        "finance-prod",
        "tenant-finance",
        hypervisors=["hv-pool-a"],
        storages=["st-pool-encrypted"],
        encryptedStorage=True,
    )
    rendered, observed = settle(
        client, lambda obs: o.openstack_request(composite, pools, observed=obs)
    )
    composite = copy.deepcopy(composite)
    composite["status"] = rendered.status
    composite["spec"]["storageClusters"].append("st-pool-a")
    again = client.run(o.openstack_request(composite, pools, observed=observed))
    assert not again.fatal, again.fatal
    assert again.status["phase"] == "Degraded"
    assert sorted(again.resources) == sorted(rendered.resources)
    assert "st-pool-a: not encrypted" in condition(again, "PoolsReady")[2]


# ------------------------------------------------------ quotas on shared pools (issue 35, 2)


def _quotas(rendered, suffix: str = "") -> dict[str, dict[str, Any]]:
    return {
        p: rendered.resources[f"ceph-{p}{suffix}"]["spec"]["forProvider"]["manifest"]["spec"].get(
            "quotas"
        )
        for p in ("volumes", "images", "ephemeral")
    }


@pytest.mark.parametrize(
    ("size", "preset"),
    [
        case(
            "small tenant pools get the small Ceph quota (volumes, images, ephemeral), "
            "shown in status",
            "small",
            ("2Ti", "500Gi", "1Ti"),
        ),
        case("medium tenant pools get the medium quota", "medium", ("10Ti", "1Ti", "4Ti")),
        case("large tenant pools get the large quota", "large", ("50Ti", "2Ti", "10Ti")),
        case("xlarge tenant pools get the xlarge quota", "xlarge", ("200Ti", "5Ti", "40Ti")),
    ],
)
def test_each_tenant_pool_gets_its_size_presets_quota_shown_in_status(
    client, catalog, size, preset
):
    """On a storage pool large enough for every preset (2Pi: xlarge takes 695Ti raw)."""
    volumes, images, ephemeral = preset
    pools = [p for p in o.region_pools() if p["kind"] != "XStorageCluster"]
    pools.append(o.ready(o.storage(capacity="2Pi")))
    rendered = client.run(o.openstack_request(o.openstack(size=size), pools))
    assert not rendered.fatal, rendered.fatal
    assert _quotas(rendered) == {
        "volumes": {"maxSize": volumes},
        "images": {"maxSize": images},
        "ephemeral": {"maxSize": ephemeral},
    }
    (storage,) = rendered.status["consumedPools"]["storage"]
    assert storage["quotas"] == {"volumes": volumes, "images": images, "ephemeral": ephemeral}
    assert "quotaReason" not in storage
    assert condition(rendered, "StorageQuota")[:2] == (fnv1.STATUS_CONDITION_TRUE, "AsPreset")
    assert_all_valid(rendered, catalog)


def test_the_region_overrides_the_quota_presets(client):
    env = o.environment()
    env["data"]["storageQuotas"] = {"large": {"volumes": "20Ti"}}
    composite = o.openstack()
    required = {"environment-0": [env], **o.pools_and_holders(*o.region_pools())}
    rendered = client.run(o.request(composite, o.step(), required=required))
    assert not rendered.fatal, rendered.fatal
    assert _quotas(rendered)["volumes"] == {"maxSize": "20Ti"}
    assert _quotas(rendered)["images"] == {"maxSize": "2Ti"}  # the preset's, not overridden


def test_a_tenant_cannot_take_a_shared_pools_whole_capacity(client, catalog):
    """An xlarge tenant on a 500Ti shared pool: its presets would take 200+5 Ti x3 + 40 Ti x2
    = 695Ti raw, more than the 50 % one tenant may take; every quota is cut by the same factor
    and status and the StorageQuota condition say why."""
    rendered = client.run(o.openstack_request(o.openstack(size="xlarge"), o.region_pools()))
    assert not rendered.fatal, rendered.fatal
    quotas = {p: q["maxSize"] for p, q in _quotas(rendered).items()}
    from fnplatform.composers.openstack.quota import to_bytes

    raw = sum(to_bytes(q) * (2 if p == "ephemeral" else 3) for p, q in quotas.items())
    assert raw <= to_bytes("500Ti") // 2
    assert raw > to_bytes("500Ti") // 2 * 9 // 10  # cut to the share, not far below it
    assert quotas == {"volumes": "71Ti", "images": "1841Gi", "ephemeral": "14Ti"}
    (storage,) = rendered.status["consumedPools"]["storage"]
    assert storage["quotas"] == quotas
    assert "50% of the shared storage pool st-pool-a (500Ti)" in storage["quotaReason"]
    status, reason, message = condition(rendered, "StorageQuota")
    assert (status, reason) == (fnv1.STATUS_CONDITION_FALSE, "ClampedToShare")
    assert message.startswith("storage pool st-pool-a: the xlarge preset's quotas take 695Ti")
    assert_all_valid(rendered, catalog)


def test_a_dedicated_pool_lets_its_tenant_take_it_all_but_no_more(client):
    pools = [
        *o.region_pools(),
        o.ready(
            o.storage(
                "st-pool-own",
                capacity="300Ti",
                labels={"dedicated": "true", "tenant": "tenant-customer-a"},
            )
        ),
    ]
    rendered = client.run(
        o.openstack_request(o.openstack(size="large", storages=["st-pool-own"]), pools)
    )
    assert not rendered.fatal, rendered.fatal
    # large: 50x3 + 2x3 + 10x2 = 176Ti raw, within the dedicated 300Ti: as the preset
    assert _quotas(rendered)["volumes"] == {"maxSize": "50Ti"}
    rendered = client.run(
        o.openstack_request(o.openstack(size="xlarge", storages=["st-pool-own"]), pools)
    )
    (storage,) = rendered.status["consumedPools"]["storage"]
    assert "100% of the dedicated storage pool st-pool-own (300Ti)" in storage["quotaReason"]


def test_a_pool_without_a_capacity_keeps_the_preset(client):
    pools = [*o.region_pools(), o.ready(o.storage("st-pool-x", capacity=None))]
    rendered = client.run(
        o.openstack_request(o.openstack(size="xlarge", storages=["st-pool-x"]), pools)
    )
    assert _quotas(rendered)["volumes"] == {"maxSize": "200Ti"}


def test_quotas_stay_as_remembered_while_a_pool_is_missing(client):
    """A storage pool gone missing keeps the tenant's Ceph pools, quotas included, exactly."""
    rendered, observed = settle(
        client,
        lambda obs: o.openstack_request(o.openstack(size="xlarge"), o.region_pools(), observed=obs),
    )
    composite = o.openstack(size="xlarge", status=rendered.status)
    pools = [p for p in o.region_pools() if p["kind"] != "XStorageCluster"]
    again = client.run(
        o.openstack_request(
            composite,
            pools,
            observed=observed,
            missing=("pool-storage-st-pool-a", "holders-storage-st-pool-a"),
        )
    )
    assert not again.fatal, again.fatal
    assert _quotas(again) == _quotas(rendered)


# ------------------------------------ Encrypted vouches only for a CephCluster read and Ready


@pytest.mark.parametrize(
    ("breakage", "condition_reason", "why"),
    [
        case(
            "provider-kubernetes cannot read the CephCluster (the pool's ProviderConfig, "
            "RBAC): whatever it reported before is no proof",
            SYNCED_FALSE,
            "ControlFailing",
            "provider-kubernetes cannot read the CephCluster (the pool's ProviderConfig, RBAC): "
            "whatever it reported before is no proof",
        ),
        case(
            "the CephCluster does not (yet) ask Rook to encrypt: the condition names the field",
            READY_FALSE,
            "NotSeenOnCephCluster",
            "the CephCluster does not (yet) ask Rook to encrypt: the condition names the field",
        ),
    ],
    ids=lambda value: value.name if isinstance(value, Breakage) else None,
)
def test_encrypted_turns_false_when_its_ceph_cluster_reader_fails(
    client, breakage, condition_reason, why
):
    composite = o.storage("st-pool-encrypted", encrypted=True)
    _, observed = settle(client, lambda obs: o.pool_request(composite, observed=obs))
    rendered = client.run(
        o.pool_request(composite, observed=broken(observed, "ceph-cluster", breakage))
    )
    status, got, message = condition(rendered, "Encrypted")
    assert (status, got) == (fnv1.STATUS_CONDITION_FALSE, condition_reason), (why, message)
    assert rendered.status["encrypted"] is False, why
    assert rendered.status["phase"] == "Provisioning", why
    if breakage is SYNCED_FALSE:
        assert (
            "CephCluster rook-ceph/rook-ceph encrypts its OSDs [ceph-cluster: Synced=False"
            in message
        ), message
