"""Node pools take what platform teams set on every cloud (issue 22 §11): disk size and type,
node labels, taints, spot capacity and zones, each in the cloud's own form, schema-valid; a
value the cloud refuses is an error naming the pool's field; and a change the cloud can only
make by replacing an existing pool is refused, naming the field, instead of replacing it.
"""

from __future__ import annotations

import copy
import dataclasses
from typing import Any

import pytest
from fnplatform.merge import get_path

from tests.support.cases import ModuleCase, cluster_case, converge
from tests.support.harness import FunctionClient
from tests.support.schemas import Catalog

CLOUDS = ("aws", "gcp", "azure")
ZONES = {"aws": ["eu-west-1a"], "gcp": ["europe-west1-b", "europe-west1-c"], "azure": ["1", "2"]}
DISK = {"aws": "gp3", "gcp": "pd-ssd", "azure": "Managed"}
POOL = "pool-pool1"


def _with_pool(cloud: str, **node_config: Any) -> ModuleCase:
    """The cluster case with ``pool1``'s nodeConfig set to ``node_config``."""
    case = cluster_case(cloud)
    composite = copy.deepcopy(case.composite)
    composite["spec"]["pools"]["pool1"]["nodeConfig"] = node_config
    return dataclasses.replace(case, composite=composite)


def _everything(cloud: str) -> ModuleCase:
    return _with_pool(
        cloud, diskSizeGb=200, diskType=DISK[cloud], spot=True, zones=ZONES[cloud],
        labels={"workload": "batch", "example.com/tier": "spot"},
        taints=[{"key": "workload", "value": "batch", "effect": "NoSchedule"}])


def _location(cloud: str) -> str:
    return {"aws": "eu-west-1", "gcp": "europe-west1", "azure": "westeurope"}[cloud]


@pytest.fixture(scope="module")
def pools(client: FunctionClient) -> dict[str, dict[str, Any]]:
    """Every resource of the converged cluster with the full pool, per cloud."""
    found = {}
    for cloud in CLOUDS:
        case = _everything(cloud)
        case.composite["spec"]["forProvider"]["location"] = _location(cloud)
        rendered, _ = converge(client.run, case)
        assert not rendered.fatal, rendered.fatal
        found[cloud] = rendered.resources
    return found


@pytest.mark.parametrize("cloud", CLOUDS)
def test_every_pool_setting_reaches_the_cloud_schema_valid(
    pools: dict[str, dict[str, Any]], catalog: Catalog, cloud: str
) -> None:
    resources = pools[cloud]
    pool = resources[POOL]["spec"]["forProvider"]
    assert catalog.validate(resources[POOL]) == []
    if cloud == "gcp":
        node = pool["nodeConfig"]
        assert (node["diskSizeGb"], node["diskType"], node["spot"]) == (200, "pd-ssd", True)
        assert node["labels"] == {"example.com/tier": "spot", "workload": "batch",
                                  "platform.fn.crossplane.io/pool": "pool1"}
        assert node["taint"] == [{"key": "workload", "value": "batch", "effect": "NO_SCHEDULE"}]
        assert pool["nodeLocations"] == ["europe-west1-b", "europe-west1-c"]
    elif cloud == "aws":
        assert pool["capacityType"] == "SPOT"
        assert pool["taint"] == [{"key": "workload", "value": "batch", "effect": "NO_SCHEDULE"}]
        assert pool["labels"]["workload"] == "batch"
        assert pool["subnetIdRefs"] == [{"name": "acme-prod-network-private-a"}]
        # EKS takes the disk from the launch template: the pool has its own.
        template = resources[f"{POOL}-template"]
        assert catalog.validate(template) == []
        assert pool["launchTemplate"]["name"] == template["spec"]["forProvider"]["name"]
        assert "diskSize" not in pool
        assert template["spec"]["forProvider"]["blockDeviceMappings"] == [{
            "deviceName": "/dev/xvda", "ebs": {"volumeSize": 200, "volumeType": "gp3",
                                              "encrypted": "true",
                                              "deleteOnTermination": "true"}}]
        other = resources["pool-pool0"]["spec"]["forProvider"]
        assert other["launchTemplate"]["name"] == "acme-prod-cluster-nodes"  # the shared one
        assert f"usage-{POOL}-template-by-{POOL}" in resources
    else:
        assert (pool["priority"], pool["evictionPolicy"], pool["spotMaxPrice"]) == (
            "Spot", "Delete", -1)
        assert pool["nodeTaints"] == ["kubernetes.azure.com/scalesetpriority=spot:NoSchedule",
                                      "workload=batch:NoSchedule"]
        assert pool["nodeLabels"]["kubernetes.azure.com/scalesetpriority"] == "spot"
        assert (pool["osDiskSizeGb"], pool["osDiskType"], pool["zones"]) == (
            200, "Managed", ["1", "2"])


@pytest.mark.parametrize("cloud", CLOUDS)
def test_a_pool_without_settings_is_as_before_on_demand(
    pools: dict[str, dict[str, Any]], cloud: str
) -> None:
    pool = pools[cloud]["pool-pool0"]["spec"]["forProvider"]
    spot = {"gcp": "nodeConfig.spot", "aws": "capacityType", "azure": "priority"}[cloud]
    assert get_path(pool, spot) == {"gcp": False, "aws": "ON_DEMAND", "azure": "Regular"}[cloud]
    assert not {"taint", "nodeTaints", "zones", "nodeLocations", "osDiskSizeGb"} & set(pool)


@pytest.mark.parametrize(("cloud", "node_config", "field", "reason"), [
    ("gcp", {"diskType": "gp3"}, "diskType", "is not a GKE node disk type"),
    ("aws", {"diskType": "pd-ssd"}, "diskType", "is not an EBS type a node boots from"),
    ("azure", {"diskType": "Premium"}, "diskType", "is not an AKS OS disk type"),
    ("gcp", {"zones": ["us-east1-b"]}, "zones", "is not a zone of europe-west1"),
    ("aws", {"zones": ["eu-west-1c"]}, "zones", "the network has node subnets in"),
    ("azure", {"zones": ["4"]}, "zones", "is not an Azure availability zone"),
    ("gcp", {"labels": {"Bad Key": "x"}}, "labels", "Kubernetes label key"),
    ("aws", {"taints": [{"key": "a", "effect": "Sometimes"}]}, "taints[0].effect", ""),
    ("azure", {"diskSizeGb": 10}, "diskSizeGb", ""),
])
def test_a_pool_setting_the_cloud_refuses_names_the_field(
    client: FunctionClient, cloud: str, node_config: dict[str, Any], field: str, reason: str
) -> None:
    case = _with_pool(cloud, **node_config)
    rendered = client.run(case.request(required=case.fetched()))
    assert len(rendered.fatal) == 1, rendered.fatal
    assert rendered.fatal[0].startswith(f"spec.pools.pool1.nodeConfig.{field}"), rendered.fatal
    assert reason in rendered.fatal[0]


@pytest.mark.parametrize("cloud", CLOUDS)
def test_spot_is_fixed_once_the_pool_exists(client: FunctionClient, cloud: str) -> None:
    """EKS capacity type, GKE spot and AKS priority force a new pool: refused, not sent."""
    _, observed = converge(client.run, _with_pool(cloud))
    changed = _with_pool(cloud, spot=True)
    rendered = client.run(changed.request(observed=observed, required=changed.fetched()))
    assert rendered.fatal == [
        "spec.pools.pool1.nodeConfig.spot: fixed once the "
        f"{'node group' if cloud == 'aws' else 'pool'} exists: the cloud can only change it "
        f"by replacing the {'node group' if cloud == 'aws' else 'pool'}; add a new one and "
        "remove this one"]


def test_an_eks_group_keeps_its_launch_template(client: FunctionClient) -> None:
    """A disk on an existing group would need its own template: EKS replaces a group whose
    template changes, so it is refused; a group with its own template changes the version."""
    _, observed = converge(client.run, _with_pool("aws"))
    changed = _with_pool("aws", diskSizeGb=100)
    rendered = client.run(changed.request(observed=observed, required=changed.fetched()))
    assert len(rendered.fatal) == 1
    assert rendered.fatal[0].startswith("spec.pools.pool1.nodeConfig.diskSizeGb: fixed once")
    _, observed = converge(client.run, _with_pool("aws", diskSizeGb=100))
    bigger = _with_pool("aws", diskSizeGb=300)
    again = client.run(bigger.request(observed=observed, required=bigger.fetched()))
    assert not again.fatal
    template = again.resource(f"{POOL}-template")["spec"]["forProvider"]
    assert template["blockDeviceMappings"][0]["ebs"]["volumeSize"] == 300
