"""The ``cluster`` module: a production Kubernetes cluster on GCP, AWS or Azure.

Network, cluster and node pools; DNS zones for the domain; Helm and Kubernetes ProviderConfigs
from the cluster's kubeconfig; cert-manager, ingress-nginx and kube-prometheus-stack; workload
identity for cert-manager's DNS01 solver. Status carries the endpoint and CA once observed.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from fnplatform.api.validation import parse
from fnplatform.composers.cluster.addon_pool import addon_pool, nodes_ready, pool_name
from fnplatform.composers.cluster.autoscaler import add_cluster_autoscaler, release_name
from fnplatform.composers.cluster.charts import CHARTS, chart_release, values_template
from fnplatform.composers.cluster.model import (
    DEFAULT_POOL,
    MONITORING_ALIAS,
    ClusterEnvironment,
    ClusterSpec,
    Labels,
    Pool,
)
from fnplatform.composition import Composition
from fnplatform.errors import InputError, closest
from fnplatform.importing import EXTERNAL_NAME
from fnplatform.library import (
    add_cluster,
    add_cluster_provider_configs,
    add_dns_zone,
    add_helm_release,
    add_network,
    add_node_pool,
    add_workload_identity,
)
from fnplatform.library import cluster as cluster_capability
from fnplatform.library.cluster import (
    NodePoolSpec,
    Taint,
    cluster_access,
    cluster_credentials,
    cluster_name_rule,
    cluster_scope_from_plane,
    cluster_status,
    kubeconfig_source,
)
from fnplatform.library.dns import DnsZoneSpec
from fnplatform.library.identity import (
    IdentityPurpose,
    IdentityZone,
    WorkloadIdentitySpec,
    identity_annotations,
    identity_binding,
    identity_pod_labels,
)
from fnplatform.library.network import NetworkSpec, internal_load_balancer
from fnplatform.library.rules import name_problem
from fnplatform.library.templates import render_values
from fnplatform.merge import deep_merge

NETWORK, CLUSTER, PROVIDERS = "network", "cluster", "providers"
PUBLIC_ZONE, PRIVATE_ZONE, DNS_IDENTITY = "dns-public", "dns-private", "cert-manager-identity"
MONITORING_RELEASE = chart_release("kube-prometheus-stack")
#: Every add-on release: what waits for, and is protected by, the add-on pool.
ADDON_RELEASES = (*(chart_release(chart.name) for chart in CHARTS), release_name(CLUSTER))
#: Charts whose values ask for a ServiceMonitor when monitoring is on.
SCRAPED = frozenset({"cert-manager", "ingress-nginx"})
#: Where the library specs' attributes come from, so builder errors name the user's field.
NETWORK_FIELDS = {
    "subnet_cidr": "environment.network.subnetCidr",
    "pods_cidr": "environment.network.podsCidr",
    "services_cidr": "environment.network.servicesCidr",
}


#: NodePoolSpec attributes -> their field under ``spec.pools.<pool>.nodeConfig``.
POOL_FIELDS = {
    "machine_type": "machineType",
    "disk_size_gb": "diskSizeGb",
    "disk_type": "diskType",
    "labels": "labels",
    "taints": "taints",
    "spot": "spot",
    "zones": "zones",
}


class _PoolFields(Mapping[str, str]):
    """:data:`POOL_FIELDS` under ``spec.pools.<pool>.nodeConfig``, spelt out only when a
    builder's SpecError asks: a thousand-pool cluster built a thousand such maps per pass."""

    def __init__(self, pool: str) -> None:
        self.pool = pool

    def __getitem__(self, attribute: str) -> str:
        return f"spec.pools.{self.pool}.nodeConfig.{POOL_FIELDS[attribute]}"

    def __iter__(self) -> Iterator[str]:
        return iter(POOL_FIELDS)

    def __len__(self) -> int:
        return len(POOL_FIELDS)


def compose(comp: Composition) -> None:
    """Compose a cluster for ``comp``."""
    labels = parse(Labels, comp.labels, "metadata.labels")
    spec = parse(ClusterSpec, comp.spec, "spec")
    env = parse(ClusterEnvironment, comp.env, "environment")
    warn_unknown_charts(comp, env)
    params = spec.parameters
    comp.place(
        labels.cloud,
        cloud_field="metadata.labels.cloud",
        region=spec.forProvider.location,
        region_field="spec.forProvider.location",
        # On clouds whose clusters are scoped by the plane (the GCP project, the Azure resource
        # group), the plane id names the scope.
        scope=labels.planeId if cluster_scope_from_plane(labels.cloud) else None,
        scope_field="metadata.labels.planeId",
    )
    comp.tag_with(params.tags, "spec.parameters.tags")
    comp.import_from(comp.spec.get("parameters", {}).get("import"), "spec.parameters.import")

    network = NetworkSpec(
        subnet_cidr=env.network.subnetCidr,
        pods_cidr=env.network.podsCidr,
        services_cidr=env.network.servicesCidr,
        private=params.privateCluster,
        kubernetes=True,
    )
    add_network(comp, NETWORK, network, fields=NETWORK_FIELDS)
    cluster = cluster_capability.ClusterSpec(
        network=NETWORK,
        private=params.privateCluster,
        connection_secret=comp.resource_name("kubeconfig"),
        version=params.kubernetesVersion,
        pods_cidr=env.network.podsCidr,
        services_cidr=env.network.servicesCidr,
        node_cidr=env.network.subnetCidr,
        default_machine_type=env.defaultMachineType,
        cluster_name=_cluster_name(comp, labels),
        private_network=network.private,
        network_nat=network.egress_nat,
    )
    add_cluster(comp, CLUSTER, cluster, uses=[NETWORK], fields=NETWORK_FIELDS)
    _node_pools(comp, spec, env, cluster)
    zones = _dns_zones(comp, params.domain, params.createDnsZones, params.privateCluster)
    _addons(
        comp,
        cluster,
        env,
        params.privateCluster,
        zones,
        nodes=addon_pool(comp, spec, ADDON_RELEASES),
    )
    comp.set_status("cloud", labels.cloud)
    cluster_status(comp, CLUSTER)
    _kubeconfig_for_the_claim(comp, cluster)


def _cluster_name(comp: Composition, labels: Labels) -> str | None:
    """The cloud's name for the cluster: ``metadata.labels.clusterName``, else the claim's name
    (no random suffix), validated against the cloud's rule; None keeps the derived name.

    Fixed once the cluster exists: the provider records the name it created in the external
    name, and renaming a managed cluster replaces it. A label changed afterwards is refused;
    a cluster created before the label or claim default existed keeps its name. An imported
    cluster is named by ``import.resources.cluster.externalName``.
    """
    if comp.import_spec.adopts(CLUSTER):
        return None
    existing = (comp.observed_value(CLUSTER, "metadata.annotations") or {}).get(EXTERNAL_NAME)
    if existing:
        if labels.clusterName and labels.clusterName != existing:
            raise InputError(
                "metadata.labels.clusterName",
                f"immutable: the cluster exists as "
                f"{existing!r}; renaming would replace it (set it back)",
            )
        return str(existing)
    rule = cluster_name_rule(comp)
    if labels.clusterName:
        problem = name_problem(rule, labels.clusterName)
        if problem:
            raise InputError("metadata.labels.clusterName", problem)
        return labels.clusterName
    # The claim's name when the cloud takes it as is; else the derived name, as before.
    if comp.claim_name and name_problem(rule, comp.claim_name) is None:
        return comp.claim_name
    return None


def _kubeconfig_for_the_claim(comp: Composition, cluster: cluster_capability.ClusterSpec) -> None:
    """Give the user the cluster's kubeconfig where they are, not in crossplane-system.

    v1: the composite publishes the kubeconfig (as the provider wrote it), the endpoint and
    the CA as its connection details, so the claim's ``writeConnectionSecretToRef`` gets them.
    v2 namespaced composites have no connection Secret; there the provider already writes
    the kubeconfig Secret into the composite's namespace, and ``status.kubeconfigSecret``
    names it.
    """
    source = kubeconfig_source(comp, CLUSTER)
    if comp.namespaced:
        if comp.observed.connection_details(source).get(KUBECONFIG_KEY):
            comp.set_status("kubeconfigSecret", cluster.connection_secret)
        return
    comp.publish(KUBECONFIG_KEY, comp.observed.connection_details(source).get(KUBECONFIG_KEY))
    status = comp.notes.status
    comp.publish("endpoint", status.get("clusterEndpoint"))
    comp.publish("clusterCA", status.get("clusterCA"))


def _node_pools(
    comp: Composition,
    spec: ClusterSpec,
    env: ClusterEnvironment,
    cluster: cluster_capability.ClusterSpec,
) -> None:
    """The user's pools (or one default pool) of ``cluster``."""
    pools = spec.pools or {DEFAULT_POOL: Pool()}
    for name, pool in sorted(pools.items()):
        machine_type = pool.nodeConfig.machineType or env.defaultMachineType
        if not machine_type:
            raise InputError(
                f"spec.pools.{name}.nodeConfig.machineType",
                "not set, and the environment has no defaultMachineType",
            )
        node = pool.nodeConfig
        add_node_pool(
            comp,
            pool_name(name),
            NodePoolSpec(
                cluster=CLUSTER,
                network=NETWORK,
                pool=name,
                machine_type=machine_type,
                min_nodes=pool.autoscaling.minNodeCount,
                max_nodes=pool.autoscaling.maxNodeCount,
                disk_size_gb=node.diskSizeGb,
                disk_type=node.diskType,
                labels=dict(sorted(node.labels.items())),
                taints=tuple(Taint(t.key, t.value, t.effect) for t in node.taints),
                spot=node.spot,
                zones=tuple(node.zones),
                cluster_name=cluster.cluster_name,
                version=cluster.version,
                private_network=cluster.private_network,
            ),
            uses=[CLUSTER],
            fields=_PoolFields(name),
        )


def _dns_zones(
    comp: Composition, domain: str | None, create: bool, private: bool
) -> tuple[IdentityZone, ...]:
    """The public zone of ``domain`` and, for a private cluster, its private twin; what the
    DNS identity needs to know of each."""
    if not domain or not create:
        return ()
    add_dns_zone(comp, PUBLIC_ZONE, DnsZoneSpec(domain=domain, private=False))
    public = IdentityZone(PUBLIC_ZONE, domain, private=False)
    if not private:
        return (public,)
    add_dns_zone(
        comp,
        PRIVATE_ZONE,
        DnsZoneSpec(domain=domain, private=True, network=NETWORK),
        uses=[NETWORK],
        fields={"network": "spec.parameters.privateCluster"},
    )
    return (public, IdentityZone(PRIVATE_ZONE, domain, private=True))


def _addons(
    comp: Composition,
    cluster: cluster_capability.ClusterSpec,
    env: ClusterEnvironment,
    private: bool,
    zones: tuple[IdentityZone, ...],
    *,
    nodes: str | None,
) -> None:
    """ProviderConfigs from the kubeconfig, and the charts installed through them.

    Everything that reads the kubeconfig uses the resource that writes it (the cloud's
    ``kubeconfig_source``: ClusterAuth on EKS, the cluster itself on GKE and AKS), so on
    deletion the kubeconfig outlives every release that needs it to uninstall. Releases wait
    for the node pool ``nodes`` to be Ready, not just created: cert-manager, ingress-nginx and
    kube-prometheus-stack run hook Jobs that need a schedulable node (AKS's system pool is
    tainted for critical add-ons only), and use it so on deletion their uninstall hooks still
    have a node. ``nodes`` is the pool ``addon_pool.addon_pool`` chose; None when no
    pool can run them (they are held back, ``addon_pool.nodes_ready``).
    """
    kubeconfig = kubeconfig_source(comp, CLUSTER)
    access = cluster_access(comp, CLUSTER)
    in_cluster = list(dict.fromkeys([CLUSTER, kubeconfig, *access]))
    reasons = (
        {}
        if kubeconfig == CLUSTER
        else {kubeconfig: "writes the kubeconfig this is reached through"}
    )
    reasons.update(dict.fromkeys(access, "lets the providers act in the cluster"))
    helm_config, _ = add_cluster_provider_configs(
        comp,
        PROVIDERS,
        secret_name=cluster.connection_secret,
        secret_namespace=cluster.connection_namespace,
        identity=cluster_credentials(comp, CLUSTER, cluster),
        uses=in_cluster,
        reasons=reasons,
    )
    variables, waits_for = _dns_identity(comp, zones)
    prometheus = env.charts.get("kube-prometheus-stack")
    service_monitors = env.monitoring.enabled and not (prometheus and prometheus.disabled)
    variables.update(
        {
            **comp.env,
            "monitoring": env.monitoring.model_dump(),
            "service_monitors": service_monitors,
            "ingress_replicas": env.ingress_replicas,
            "private": private,
            "internal_lb_annotations": internal_load_balancer(comp),
        }
    )
    for chart in CHARTS:
        settings = env.charts.get(chart.name)
        if settings and settings.disabled:
            continue
        if chart.name == "kube-prometheus-stack" and not env.monitoring.enabled:
            continue
        release = chart_release(chart.name)
        if not nodes_ready(comp, nodes, by=release):
            continue
        # ingress-nginx's LoadBalancer Service puts a cloud load balancer into the network:
        # the release (which waits on uninstall) goes before the network does.
        network = [NETWORK] if chart.name == "ingress-nginx" else []
        # ServiceMonitors need the Prometheus operator's CRDs: installed with monitoring.
        monitors = [MONITORING_RELEASE] if service_monitors and chart.name in SCRAPED else []
        add_helm_release(
            comp,
            release,
            chart=chart.name,
            repository=chart.repository,
            version=(settings.version if settings else None) or chart.version,
            namespace=chart.namespace,
            values=deep_merge(
                render_values(chart.name, values_template(chart.name), variables),
                settings.values if settings else {},
            ),
            provider_config=helm_config,
            uses=[
                f"{PROVIDERS}-helm",
                *in_cluster,
                *([nodes] if nodes else []),
                *network,
                *monitors,
                *waits_for.get(chart.name, ()),
            ],
            reasons=reasons,
        )
    add_cluster_autoscaler(
        comp,
        CLUSTER,
        cluster,
        env.charts.get("cluster-autoscaler"),
        helm_config=helm_config,
        waits_for=(f"{PROVIDERS}-helm", *in_cluster),
        nodes=nodes,
    )


KUBECONFIG_KEY = "kubeconfig"  # the connection detail every cloud's provider writes it under
#: Every key ``environment.charts`` may have: the releases, the autoscaler, the design's alias.
CHART_KEYS = (*(c.name for c in CHARTS), "cluster-autoscaler", MONITORING_ALIAS)


def warn_unknown_charts(comp: Composition, env: ClusterEnvironment) -> None:
    """A warning per ``environment.charts`` key that names no chart (a typo changes nothing
    otherwise: ``charts.ingres-nginx.disabled`` would leave ingress-nginx installed)."""
    for key in sorted(set(env.charts) - set(CHART_KEYS)):
        guess = closest(key, CHART_KEYS)
        hint = f"did you mean {guess}? " if guess else ""
        comp.event(
            f"environment.charts.{key}: not a chart of this module, ignored; {hint}"
            f"valid: {', '.join(sorted(CHART_KEYS))}",
            warning=True,
            reason="UnknownChart",
        )


def _dns_identity(
    comp: Composition, zones: tuple[IdentityZone, ...]
) -> tuple[dict[str, object], dict[str, tuple[str, ...]]]:
    """cert-manager's DNS01 identity: its chart variables, and what its release waits for.

    The release waits until the cloud has bound the identity to the service account: pods
    started before the binding exists (EKS Pod Identity, say) never get credentials. With a
    private zone of the same name, cert-manager must check propagation against public
    resolvers, or it waits forever for TXT records the private zone hides.
    """
    if not zones:
        return {"identity_annotations": {}, "identity_pod_labels": {}, "split_horizon": False}, {}
    identity = WorkloadIdentitySpec(
        cluster=CLUSTER,
        namespace="cert-manager",
        service_account="cert-manager",
        purpose=IdentityPurpose.DNS_RECORDS,
        zones=zones,
    )
    add_workload_identity(
        comp, DNS_IDENTITY, identity, uses=[CLUSTER], fields={"zones": "spec.parameters.domain"}
    )
    variables: dict[str, object] = {
        "identity_annotations": identity_annotations(comp, DNS_IDENTITY, identity),
        "identity_pod_labels": identity_pod_labels(comp),
        "split_horizon": any(zone.private for zone in zones),
    }
    return variables, {"cert-manager": (identity_binding(comp, DNS_IDENTITY),)}
