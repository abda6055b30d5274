"""add_node_pool on every cloud: one or several pools of a cluster (details: test_cluster_*)."""

from __future__ import annotations

import pytest
from fnplatform.composition import Composition
from fnplatform.library.cluster import add_node_pool

from tests.capabilities.clusters import cluster
from tests.capabilities.harness import Case, check_converges, table


def one(comp: Composition) -> None:
    cluster(comp)


def two(comp: Composition) -> None:
    cluster(comp, pools=("general", "batch"))


KINDS = {
    "aws": frozenset({"eks/NodeGroup", "ec2/LaunchTemplate"}),
    "gcp": frozenset({"container/NodePool"}),
    "azure": frozenset({"containerservice/KubernetesClusterNodePool"}),
}
CASES = [
    Case("one", one, kinds=KINDS),
    Case("two", two, kinds=KINDS),
]


@pytest.mark.parametrize(("case", "cloud"), table(add_node_pool, CASES))
def test_composes_schema_valid_bodies_that_converge(case: Case, cloud: str) -> None:
    done = check_converges(case, cloud)
    pools = {
        name
        for name in done.desired
        if name.startswith("pool-")
        and done.desired[name]["kind"] in {"NodeGroup", "NodePool", "KubernetesClusterNodePool"}
    }
    assert pools == ({"pool-default"} if case.id == "one" else {"pool-general", "pool-batch"})
