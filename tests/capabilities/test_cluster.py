"""add_cluster on every cloud, public and private (tests/test_cluster_*.py cover the details)."""

from __future__ import annotations

import pytest
from fnplatform.composition import Composition
from fnplatform.library.cluster import add_cluster

from tests.capabilities.clusters import cluster
from tests.capabilities.harness import Case, check_converges, table


def public(comp: Composition) -> None:
    cluster(comp)


def private(comp: Composition) -> None:
    cluster(comp, private=True)


KINDS = {
    "aws": frozenset({"eks/Cluster", "eks/ClusterAuth", "eks/Addon"}),
    "gcp": frozenset({"container/Cluster"}),
    "azure": frozenset({"containerservice/KubernetesCluster"}),
}
CASES = [
    Case("public", public, kinds=KINDS),
    Case("private", private, kinds=KINDS),
]


@pytest.mark.parametrize(("case", "cloud"), table(add_cluster, CASES))
def test_composes_schema_valid_bodies_that_converge(case: Case, cloud: str) -> None:
    check_converges(case, cloud)
