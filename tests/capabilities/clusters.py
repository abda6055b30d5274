"""What the cluster-side capability tables share: a cluster as the cluster module asks for it.

A cluster is only ever composed with a node pool (on EKS the CoreDNS add-on waits for a node
group), so every row asks for the network, the cluster and at least one pool, with the names
of ``tests.support.cases`` (the cluster module's own test data); what the providers report
once Ready is the simulation's (platform/providersim/simulation.py).
"""

from __future__ import annotations

from fnplatform.composition import Composition
from fnplatform.library.cluster import ClusterSpec, NodePoolSpec, add_cluster, add_node_pool
from fnplatform.library.network import NetworkSpec, add_network

from tests.support.cases import CLUSTER_MACHINE

PODS, SERVICES = "10.80.0.0/14", "10.90.0.0/16"


def cluster(
    comp: Composition,
    *,
    private: bool = False,
    pools: tuple[str, ...] = ("default",),
    machine: str | None = None,
) -> None:
    """Network ``network``, cluster ``cluster``, and one node pool ``pool-<name>`` per pool."""
    network = NetworkSpec(
        subnet_cidr="10.70.0.0/16",
        pods_cidr=PODS,
        services_cidr=SERVICES,
        private=private,
        kubernetes=True,
    )
    add_network(comp, "network", network)
    machine_type = machine or CLUSTER_MACHINE[str(comp.cloud)]
    add_cluster(
        comp,
        "cluster",
        ClusterSpec(
            network="network",
            private=private,
            connection_secret="probe-kubeconfig",
            version="1.33",
            pods_cidr=PODS,
            services_cidr=SERVICES,
            default_machine_type=machine_type,
            private_network=network.private,
            network_nat=network.egress_nat,
        ),
        uses=["network"],
    )
    for index, pool in enumerate(pools):
        add_node_pool(
            comp,
            f"pool-{pool}",
            NodePoolSpec(
                cluster="cluster",
                network="network",
                pool=pool,
                machine_type=machine_type,
                min_nodes=1,
                max_nodes=3 + index,
                version="1.33",
                private_network=network.private,
            ),
            uses=["cluster"],
        )
