"""The cluster autoscaler, on clouds whose node pools don't resize themselves (EKS).

A managed node group's min/max only bound its Auto Scaling group; nothing resizes it inside
those bounds on EKS unless an autoscaler runs in the cluster. GKE and AKS autoscale their pools
natively, so a cloud asks for this by providing the ``autoscaler_values`` value. The chart and
its version table are this composer's; the cloud gives the values only it knows (provider,
region, how node groups are discovered) and the identity (``workload_identity`` with purpose
``cluster-autoscaler``: least-privilege, bound to the chart's service account).
"""

from __future__ import annotations

from fnplatform.composers.cluster.addon_pool import nodes_ready
from fnplatform.composers.cluster.model import ChartEnvironment
from fnplatform.composition import Composition
from fnplatform.library import add_helm_release, add_workload_identity
from fnplatform.library.cluster import ClusterSpec, autoscaler_values, running_version
from fnplatform.library.identity import IdentityPurpose, WorkloadIdentitySpec, identity_binding
from fnplatform.merge import deep_merge

CHART = "cluster-autoscaler"
REPOSITORY = "https://kubernetes.github.io/autoscaler"
NAMESPACE = "kube-system"
SERVICE_ACCOUNT = "cluster-autoscaler"
#: The first chart release of each autoscaler minor (the autoscaler's compatibility table). The
#: autoscaler simulates the scheduler of its own Kubernetes minor, so it must match the cluster;
#: ``charts.cluster-autoscaler.version`` in the environment pins a later patch release.
CHART_VERSIONS = {
    "1.28": "9.34.0",
    "1.29": "9.35.0",
    "1.30": "9.37.0",
    "1.31": "9.38.0",
    "1.32": "9.45.0",
    "1.33": "9.47.0",
    "1.34": "9.51.0",
}


def add_cluster_autoscaler(
    comp: Composition,
    cluster: str,
    spec: ClusterSpec,
    settings: ChartEnvironment | None,
    *,
    helm_config: str,
    waits_for: tuple[str, ...],
    nodes: str | None,
) -> None:
    """The autoscaler release (:func:`release_name`) and its identity.

    The release waits for the identity binding: an autoscaler started without credentials
    crash-loops until restarted; and, like every release, for the node pool ``nodes`` to be
    Ready (Helm waits for the autoscaler's pod, which needs a node; None: no pool can run it,
    ``addon_pool.nodes_ready``).
    """
    if not autoscaler_values.provided_on(comp.cloud):
        return
    if settings is not None and settings.disabled:
        return
    identity = f"{cluster}-autoscaler"
    add_workload_identity(
        comp,
        identity,
        WorkloadIdentitySpec(
            cluster=cluster,
            namespace=NAMESPACE,
            service_account=SERVICE_ACCOUNT,
            purpose=IdentityPurpose.NODE_AUTOSCALING,
            cluster_name=spec.cluster_name,
        ),
        uses=[cluster],
    )
    release = release_name(cluster)
    if not nodes_ready(comp, nodes, by=release):
        return
    chart_values = {
        **autoscaler_values(comp, cluster, spec),
        "fullnameOverride": CHART,
        "rbac": {"serviceAccount": {"create": True, "name": SERVICE_ACCOUNT}},
    }
    add_helm_release(
        comp,
        release,
        chart=CHART,
        repository=REPOSITORY,
        version=(settings.version if settings else None) or chart_version(comp, cluster, spec),
        namespace=NAMESPACE,
        values=deep_merge(chart_values, settings.values if settings else {}),
        provider_config=helm_config,
        uses=list(
            dict.fromkeys(
                [
                    *waits_for,
                    cluster,
                    *([nodes] if nodes else []),
                    identity_binding(comp, identity),
                ]
            )
        ),
    )


def release_name(cluster: str) -> str:
    """The composition name of ``cluster``'s autoscaler release."""
    return f"{cluster}-autoscaler-release"


def _minor_key(minor: str) -> tuple[int, int] | None:
    """``(1, 33)`` for ``"1.33"`` (or ``"1.33.2"``), None for anything else."""
    parts = minor.split(".")
    if len(parts) < 2 or not (parts[0].isdigit() and parts[1].isdigit()):
        return None
    return int(parts[0]), int(parts[1])


def chart_version(comp: Composition, cluster: str, spec: ClusterSpec) -> str:
    """The chart release matching the cluster's Kubernetes minor.

    The minor is the one the cloud reports for the running cluster, else (before it is
    observed) the one asked for: while the control plane upgrades, the autoscaler keeps
    simulating the scheduler the cluster really runs. Outside the known range the nearest
    known release is used and a warning says to pin one.
    """
    asked = running_version(comp, cluster) or spec.version
    key = _minor_key(str(asked)) if asked else None
    known = sorted((_minor_key(m) or (0, 0), m) for m in CHART_VERSIONS)
    matching = [m for k, m in known if k == key]
    if matching:
        return CHART_VERSIONS[matching[0]]
    nearest = known[0][1] if key is not None and key < known[0][0] else known[-1][1]
    if asked:
        comp.event(
            f"cluster-autoscaler has no chart release known for Kubernetes {asked}; using "
            f"{CHART_VERSIONS[nearest]} (Kubernetes {nearest}). Set "
            f"charts.{CHART}.version in the environment to match the cluster.",
            warning=True,
            reason="AutoscalerVersion",
        )
    return CHART_VERSIONS[nearest]
