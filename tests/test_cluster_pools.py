"""Node pools take what platform teams set on every cloud: disk size and type,
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

from tests.support.cases import ModuleCase, cluster_case, converge, namespaced_twin
from tests.support.harness import FunctionClient
from tests.support.schemas import Catalog
from tests.support.table import case

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
        cloud,
        diskSizeGb=200,
        diskType=DISK[cloud],
        spot=True,
        zones=ZONES[cloud],
        labels={"workload": "batch", "example.com/tier": "spot"},
        taints=[{"key": "workload", "value": "batch", "effect": "NoSchedule"}],
    )


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
        assert node["labels"] == {
            "example.com/tier": "spot",
            "workload": "batch",
            "platform.fn.crossplane.io/pool": "pool1",
        }
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
        assert template["spec"]["forProvider"]["blockDeviceMappings"] == [
            {
                "deviceName": "/dev/xvda",
                "ebs": {
                    "volumeSize": 200,
                    "volumeType": "gp3",
                    "encrypted": "true",
                    "deleteOnTermination": "true",
                },
            }
        ]
        other = resources["pool-pool0"]["spec"]["forProvider"]
        assert other["launchTemplate"]["name"] == "acme-prod-cluster-nodes"  # the shared one
        assert f"usage-{POOL}-template-by-{POOL}" in resources
    else:
        assert (pool["priority"], pool["evictionPolicy"], pool["spotMaxPrice"]) == (
            "Spot",
            "Delete",
            -1,
        )
        assert pool["nodeTaints"] == [
            "kubernetes.azure.com/scalesetpriority=spot:NoSchedule",
            "workload=batch:NoSchedule",
        ]
        assert pool["nodeLabels"]["kubernetes.azure.com/scalesetpriority"] == "spot"
        assert (pool["osDiskSizeGb"], pool["osDiskType"], pool["zones"]) == (
            200,
            "Managed",
            ["1", "2"],
        )


@pytest.mark.parametrize("cloud", CLOUDS)
def test_a_pool_without_settings_is_as_before_on_demand(
    pools: dict[str, dict[str, Any]], cloud: str
) -> None:
    pool = pools[cloud]["pool-pool0"]["spec"]["forProvider"]
    spot = {"gcp": "nodeConfig.spot", "aws": "capacityType", "azure": "priority"}[cloud]
    assert get_path(pool, spot) == {"gcp": False, "aws": "ON_DEMAND", "azure": "Regular"}[cloud]
    assert not {"taint", "nodeTaints", "zones", "nodeLocations", "osDiskSizeGb"} & set(pool)


@pytest.mark.parametrize(
    ("cloud", "node_config", "field", "says"),
    [
        case(
            "an EBS type on GKE is refused naming diskType: GKE would refuse the node "
            "pool only after the cluster exists",
            "gcp",
            {"diskType": "gp3"},
            "diskType",
            "is not a GKE node disk type",
        ),
        case(
            "a GCE disk type on EKS is refused naming diskType, with what EBS types a "
            "node boots from",
            "aws",
            {"diskType": "pd-ssd"},
            "diskType",
            "is not an EBS type a node boots from",
        ),
        case(
            "an unknown AKS OS disk type is refused naming diskType",
            "azure",
            {"diskType": "Premium"},
            "diskType",
            "is not an AKS OS disk type",
        ),
        case(
            "a GKE zone outside the cluster's region is refused naming zones",
            "gcp",
            {"zones": ["us-east1-b"]},
            "zones",
            "is not a zone of europe-west1",
        ),
        case(
            "an EKS zone without a node subnet is refused naming zones and the zones the "
            "network has subnets in",
            "aws",
            {"zones": ["eu-west-1c"]},
            "zones",
            "the network has node subnets in",
        ),
        case(
            "an Azure availability zone other than 1, 2 or 3 is refused naming zones",
            "azure",
            {"zones": ["4"]},
            "zones",
            "is not an Azure availability zone",
        ),
        case(
            "a label key Kubernetes refuses is refused naming labels before the node pool "
            "is created",
            "gcp",
            {"labels": {"Bad Key": "x"}},
            "labels",
            "Kubernetes label key",
        ),
        case(
            "a taint effect Kubernetes does not know is refused naming the taint's effect",
            "aws",
            {"taints": [{"key": "a", "effect": "Sometimes"}]},
            "taints[0].effect",
            "",
        ),
        case(
            "an AKS OS disk below its minimum size is refused naming diskSizeGb",
            "azure",
            {"diskSizeGb": 10},
            "diskSizeGb",
            "",
        ),
    ],
)
def test_a_pool_setting_the_cloud_refuses_names_the_field(
    client: FunctionClient, cloud: str, node_config: dict[str, Any], field: str, says: str
) -> None:
    case = _with_pool(cloud, **node_config)
    rendered = client.run(case.request(required=case.fetched()))
    assert len(rendered.fatal) == 1, rendered.fatal
    assert rendered.fatal[0].startswith(f"spec.pools.pool1.nodeConfig.{field}"), rendered.fatal
    assert says in rendered.fatal[0]


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
        "remove this one"
    ]


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


# -- the pool the add-ons wait for and protect ---------------------------------------------

#: A pool's autoscaling and nodeConfig, by what makes it unfit for the add-ons.
ON_DEMAND: dict[str, Any] = {"autoscaling": {"minNodeCount": 1, "maxNodeCount": 3}}
TAINTED: dict[str, Any] = {
    **ON_DEMAND,
    "nodeConfig": {
        "taints": [{"key": "nvidia.com/gpu", "value": "present", "effect": "NoSchedule"}]
    },
}
SOFT_TAINT: dict[str, Any] = {
    **ON_DEMAND,
    "nodeConfig": {"taints": [{"key": "workload", "value": "batch", "effect": "PreferNoSchedule"}]},
}
SPOT: dict[str, Any] = {**ON_DEMAND, "nodeConfig": {"spot": True}}
TO_ZERO: dict[str, Any] = {"autoscaling": {"minNodeCount": 0, "maxNodeCount": 4}}
#: The Composed condition's words for a release held back without a pool.
NO_POOL = (
    "a pool that can run add-ons: every pool is tainted, spot or may scale to zero "
    "(minNodeCount 0); set spec.parameters.addonPool"
)
ADDON_RELEASES = ("release-cert-manager", "release-ingress-nginx", "release-kube-prometheus-stack")


def _pools_case(
    pools: dict[str, Any] | None, addon_pool: str | None = None, form: str = "cluster-scoped"
) -> ModuleCase:
    """The GCP cluster case with ``pools`` (None: no pools, the default one) and
    ``spec.parameters.addonPool``."""
    case = cluster_case("gcp")
    composite = copy.deepcopy(case.composite)
    if pools is None:
        composite["spec"].pop("pools", None)
    else:
        composite["spec"]["pools"] = copy.deepcopy(pools)
    if addon_pool is not None:
        composite["spec"]["parameters"]["addonPool"] = addon_pool
    case = dataclasses.replace(case, composite=composite)
    return namespaced_twin(case) if form == "namespaced" else case


def _waits(rendered: Any) -> str:
    composed = rendered.condition("Composed")
    assert composed is not None
    return str(composed.message)


FORMS = ("cluster-scoped", "namespaced")


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize(
    ("pools", "addon_pool", "expected", "reason"),
    [
        case(
            "every pool can run them: ties are broken by name",
            {"web": ON_DEMAND, "general": ON_DEMAND},
            None,
            "pool-general",
            "every pool can run them: ties are broken by name",
        ),
        case(
            "a tainted GPU pool that sorts first is skipped",
            {"accel": TAINTED, "general": ON_DEMAND},
            None,
            "pool-general",
            "a tainted GPU pool that sorts first is skipped",
        ),
        case(
            "any taint makes a pool unfit, PreferNoSchedule too: the rule says untainted",
            {"aaa": SOFT_TAINT, "general": ON_DEMAND},
            None,
            "pool-general",
            "any taint makes a pool unfit, PreferNoSchedule too: the rule says untainted",
        ),
        case(
            "a pool that may scale to zero is skipped (the examples' batch pool)",
            {"batch": TO_ZERO, "general": ON_DEMAND},
            None,
            "pool-general",
            "a pool that may scale to zero is skipped (the examples' batch pool)",
        ),
        case(
            "a spot pool is skipped: its nodes are reclaimed under the add-ons",
            {"cheap": SPOT, "general": ON_DEMAND},
            None,
            "pool-general",
            "a spot pool is skipped: its nodes are reclaimed under the add-ons",
        ),
        case(
            "no pools: the default pool, as before",
            None,
            None,
            "pool-default",
            "no pools: the default pool, as before",
        ),
        case(
            "spec.parameters.addonPool wins over the rule, even for a pool the rule skips",
            {"accel": TAINTED, "general": ON_DEMAND},
            "accel",
            "pool-accel",
            "spec.parameters.addonPool wins over the rule, even for a pool the rule skips",
        ),
        case(
            "addonPool may name the default pool when none is listed",
            None,
            "default",
            "pool-default",
            "addonPool may name the default pool when none is listed",
        ),
        case(
            "no pool can run them: held back, saying why",
            {"accel": TAINTED, "batch": TO_ZERO, "cheap": SPOT},
            None,
            None,
            "no pool can run them: held back, saying why",
        ),
    ],
)
def test_the_addons_wait_for_the_pool_the_rule_picks(
    client: FunctionClient,
    *,
    form: str,
    pools: dict[str, Any] | None,
    addon_pool: str | None,
    expected: str | None,
    reason: str,
) -> None:
    case = _pools_case(pools, addon_pool, form)
    rendered = client.run(case.request(required=case.fetched()))
    assert not rendered.fatal, (reason, rendered.fatal)
    waits = _waits(rendered)
    wanted = f"waits for {expected} Ready" if expected else f"waits for {NO_POOL}"
    for release in ADDON_RELEASES:
        assert f"{release} ({wanted})" in waits, (reason, waits)


@pytest.mark.parametrize(
    ("pools", "addon_pool", "reason"),
    [
        case("a misspelt pool", {"general": ON_DEMAND}, "gneral", "a misspelt pool"),
        case(
            "without pools the only pool is default",
            None,
            "general",
            "without pools the only pool is default",
        ),
        case(
            "default exists only when no pool is listed",
            {"general": ON_DEMAND},
            "default",
            "default exists only when no pool is listed",
        ),
    ],
)
def test_an_addon_pool_that_is_no_pool_of_the_claim_is_refused(
    client: FunctionClient,
    pools: dict[str, Any] | None,
    addon_pool: str,
    reason: str,
) -> None:
    case = _pools_case(pools, addon_pool)
    rendered = client.run(case.request(required=case.fetched()))
    assert rendered.fatal == [
        "spec.parameters.addonPool: must name one of spec.pools (default when spec.pools is empty)"
    ], reason


def _addon_usages(resources: dict[str, Any]) -> set[str]:
    """The pools the add-on releases' Usages protect."""
    return {
        name.removeprefix("usage-").split("-by-")[0]
        for name in resources
        if name.startswith("usage-pool-")
        and name.endswith(tuple(f"-by-{r}" for r in ADDON_RELEASES))
    }


def _again(client: FunctionClient, case: ModuleCase, observed: dict[str, Any]) -> Any:
    rendered = client.run(case.request(observed=observed, required=case.fetched()))
    assert not rendered.fatal, rendered.fatal
    return rendered


@pytest.mark.parametrize("form", FORMS)
def test_an_existing_composite_keeps_the_pool_its_addons_use(
    client: FunctionClient, form: str
) -> None:
    """A composite made before the rule has its add-ons on the first pool by name (the
    examples' ``batch``, which may scale to zero): moving them would rename their Usages
    (``usage-<pool>-by-<release>``), so they stay, and nothing composed is renamed or dropped.
    The claim's addonPool moves them."""
    pools = {"batch": TO_ZERO, "general": ON_DEMAND}
    before, observed = converge(client.run, _pools_case(pools, "batch", form))
    assert _addon_usages(before.resources) == {"pool-batch"}
    after = _again(client, _pools_case(pools, None, form), observed)
    assert set(after.resources) == set(before.resources)
    assert _addon_usages(after.resources) == {"pool-batch"}
    moved = _again(client, _pools_case(pools, "general", form), observed)
    assert _addon_usages(moved.resources) == {"pool-general"}


@pytest.mark.parametrize("form", FORMS)
def test_a_tainted_pool_added_later_leaves_the_addons_where_they_are(
    client: FunctionClient, form: str
) -> None:
    """Before the rule, adding ``accel`` (sorting first) moved the add-ons onto it."""
    pools: dict[str, Any] = {"general": ON_DEMAND}
    before, observed = converge(client.run, _pools_case(pools, None, form))
    assert _addon_usages(before.resources) == {"pool-general"}
    after = _again(client, _pools_case({**pools, "accel": TAINTED}, None, form), observed)
    assert _addon_usages(after.resources) == {"pool-general"}
    assert set(before.resources) <= set(after.resources)


def test_installed_addons_are_kept_when_no_pool_can_run_them_any_more(
    client: FunctionClient,
) -> None:
    """Their pool removed and every other pool unfit: the releases exist, so they are kept
    (dropping one would uninstall it), just no longer tied to a pool."""
    before, observed = converge(client.run, _pools_case({"batch": TO_ZERO, "general": ON_DEMAND}))
    assert _addon_usages(before.resources) == {"pool-general"}
    after = _again(client, _pools_case({"batch": TO_ZERO}), observed)
    assert set(ADDON_RELEASES) <= set(after.resources)
    assert _addon_usages(after.resources) == set()
    assert NO_POOL not in _waits(after)


def test_the_autoscaler_waits_for_the_addon_pool_too(client: FunctionClient) -> None:
    """EKS: the cluster autoscaler is an add-on like the others (its pod needs a node)."""
    case = cluster_case("aws")
    composite = copy.deepcopy(case.composite)
    composite["spec"]["pools"] = {"accel": TAINTED, "general": ON_DEMAND}
    case = dataclasses.replace(case, composite=composite)
    rendered = client.run(case.request(required=case.fetched()))
    assert "cluster-autoscaler-release (waits for pool-general Ready" in _waits(rendered)
