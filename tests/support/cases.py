"""One place that knows, for every module, what a valid request looks like and how to break it.

The robustness, stateful, secrets, server and benchmark suites are parametrized over
:func:`module_cases`; a module added to ``fnplatform.composers.composers()`` only adds its
:class:`ModuleCase` here (``tests/test_robustness.py`` fails while a shipped module has none).

A case is a baseline composite, its step input (settings and EnvironmentConfig sources), the
EnvironmentConfigs Crossplane fetches for those sources, resources it fetches for requirements
the composer declares itself (flavors...), and named invalid variants (each a mutation that
must give a fatal result naming a field). :func:`converge` plays Crossplane: it composes, marks
everything desired as observed Ready, fetches what the function requires, and repeats until
the desired set stops changing, which gives the "observed after the first passes" state.
"""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

import providersim
from crossplane.function.proto.v1 import run_function_pb2 as fnv1

from tests.support.harness import Rendered, request, step_input
from tests.support.namespaced import namespaced_composite

ENVIRONMENT_API = "apiextensions.crossplane.io/v1beta1"
Body = dict[str, Any]
Runner = Callable[[fnv1.RunFunctionRequest], Rendered]


def environment_config(name: str, data: Mapping[str, Any], **labels: str) -> Body:
    """An EnvironmentConfig as Crossplane would fetch it."""
    metadata: Body = {"name": name}
    if labels:
        metadata["labels"] = dict(labels)
    return {
        "apiVersion": ENVIRONMENT_API,
        "kind": "EnvironmentConfig",
        "metadata": metadata,
        "data": dict(data),
    }


@dataclass(frozen=True)
class Invalid:
    """A broken variant of a case: ``mutate`` edits (composite, input) in place.

    ``field`` is a substring the fatal result must contain: the field the user has to fix.
    """

    name: str
    mutate: Callable[[Body, Body], None]
    field: str


@dataclass(frozen=True)
class ModuleCase:
    """A valid baseline request for one module, and ways to break it."""

    id: str
    module: str
    composite: Body
    settings: Body = field(default_factory=dict)
    environment: tuple[Body, ...] = ()  # fetched for the single name source environment-0
    required: Mapping[str, list[Body]] = field(default_factory=dict)  # composer requirements
    invalid: tuple[Invalid, ...] = ()
    secrets: Mapping[str, bytes] = field(default_factory=dict)  # connection details to observe
    #: By composition name: status laid over what the simulation reports once Ready
    #: (:func:`as_reported`), only where a case observes something deliberately unlike it.
    observed_status: Mapping[str, Body] = field(default_factory=dict)
    #: Composed resources that publish connection details (``secrets``) once they exist.
    publishes: tuple[str, ...] = ()
    #: The composite composes without labels (a composite made without a claim).
    label_free: bool = False
    form: str = "cluster-scoped"  # or "namespaced": a Crossplane v2 namespaced composite

    @property
    def namespaced(self) -> bool:
        """Whether the composite is a v2 namespaced XR (see :func:`namespaced_twin`)."""
        return self.form == NAMESPACED

    @property
    def xr_name(self) -> str:
        """The composite's name."""
        return str(self.composite["metadata"]["name"])

    def step(self) -> Body:
        """The step input: settings, plus one named EnvironmentConfig source if the case has one."""
        fields: Body = {"settings": copy.deepcopy(self.settings)}
        if self.environment:
            fields["environment"] = [{"name": str(self.environment[0]["metadata"]["name"])}]
        return step_input(self.module, **fields)

    def fetched(self) -> dict[str, list[Body]]:
        """Everything Crossplane fetches for this case, by requirement key."""
        found = {key: copy.deepcopy(items) for key, items in self.required.items()}
        if self.environment:
            found["environment-0"] = [copy.deepcopy(e) for e in self.environment]
        return found

    def request(
        self,
        *,
        composite: Body | None = None,
        input: Body | None = None,
        observed: Mapping[str, Body] | None = None,
        required: Mapping[str, list[Body]] | None = None,
        connection: Mapping[str, Mapping[str, bytes]] | None = None,
        tag: str = "",
    ) -> fnv1.RunFunctionRequest:
        """The case's request, with any part replaced."""
        return request(
            composite if composite is not None else copy.deepcopy(self.composite),
            input if input is not None else self.step(),
            observed=observed,
            observed_connection=connection,
            required=required if required is not None else self.fetched(),
            tag=tag,
        )

    def renamed(self, name: str) -> ModuleCase:
        """The same case for a composite called ``name`` (concurrency tests need many)."""
        composite = copy.deepcopy(self.composite)
        composite["metadata"]["name"] = name
        return dataclasses.replace(self, composite=composite)

    def with_composite(self, composite: Body) -> ModuleCase:
        """The same case for another composite (the benchmark's large clusters)."""
        return dataclasses.replace(self, composite=composite)


NAMESPACED = "namespaced"


def namespaced_twin(case: ModuleCase) -> ModuleCase:
    """``case`` as a Crossplane v2 namespaced composite: same spec, in its claim's namespace.

    Any module's case has one, so every suite parametrized over :func:`in_both_forms` proves the
    namespaced form of every module, including modules added later.
    """
    required = {
        key: [namespaced_composite(item) if _claimed(item) else item for item in items]
        for key, items in case.required.items()
    }  # fetched composites are v2 ones too
    return dataclasses.replace(
        case,
        id=f"{case.id}-{NAMESPACED}",
        form=NAMESPACED,
        composite=namespaced_composite(case.composite),
        required=required,
    )


def _claimed(resource: Body) -> bool:
    """Whether ``resource`` is a composite behind a claim (it carries the claim labels)."""
    return "crossplane.io/claim-name" in ((resource.get("metadata") or {}).get("labels") or {})


def in_both_forms(cases: list[ModuleCase]) -> list[ModuleCase]:
    """Each case as written (cluster-scoped, claim-bound) and as its namespaced twin."""
    return [twin for case in cases for twin in (case, namespaced_twin(case))]


def fulfil(rendered: Rendered, fetched: Mapping[str, list[Body]]) -> dict[str, list[Body]]:
    """What Crossplane fetches for the requirements of ``rendered``: known items, else none."""
    return {key: copy.deepcopy(list(fetched.get(key, []))) for key in rendered.requirements}


def each_pass(
    run: Runner, case: ModuleCase, limit: int
) -> Iterator[tuple[Rendered, dict[str, Body]]]:
    """Each pass from nothing (at most ``limit``) and the observed state it was given, until
    the desired set is stable with every resource fed back Ready.

    Pass ``n`` sees as observed exactly what pass ``n-1`` desired, all Ready as the providers
    report it (:func:`as_reported`), and what the function required fetched.
    """
    observed: dict[str, Body] = {}
    fetched = case.fetched()
    rendered = run(case.request(observed=observed, required=fetched))
    yield rendered, observed
    for _ in range(limit - 1):
        fetched = {**fetched, **fulfil(rendered, {**case.required, **fetched})}
        now = as_reported(case, rendered.resources)
        if set(now) == set(observed) and not rendered.fatal:
            return
        observed = now
        rendered = run(
            case.request(observed=observed, required=fetched, connection=published(case, observed))
        )
        yield rendered, observed


def converge_passes(run: Runner, case: ModuleCase, limit: int = 12) -> list[Rendered]:
    """Every pass until the desired set is stable (:func:`each_pass`): the last desires nothing
    new (or ``limit`` passes were made: the caller asserts on the count)."""
    return [rendered for rendered, _ in each_pass(run, case, limit)]


def converge(run: Runner, case: ModuleCase, passes: int = 8) -> tuple[Rendered, dict[str, Body]]:
    """Compose until the desired set is stable with everything observed Ready.

    Returns the last response and the observed state that produced it: the state of a composite
    whose resources all exist, as after the first reconciles.
    """
    *_, last = each_pass(run, case, passes + 1)
    return last


def as_reported(case: ModuleCase, desired: Mapping[str, Body]) -> dict[str, Body]:
    """Every ``desired`` body observed Ready as the providers report it
    (:func:`providersim.ready`), with the case's :attr:`ModuleCase.observed_status` laid over."""
    return {
        name: providersim.ready(body, case.observed_status.get(name))
        for name, body in desired.items()
    }


def published(case: ModuleCase, observed: Mapping[str, Body]) -> dict[str, dict[str, bytes]]:
    """The connection details Crossplane observes: ``case.secrets`` on each existing publisher."""
    return {name: dict(case.secrets) for name in case.publishes if name in observed}


# -- cluster ------------------------------------------------------------------------------

CLUSTER_MACHINE = {"aws": "m6i.large", "gcp": "e2-standard-4", "azure": "Standard_D4s_v5"}
CLUSTER_LOCATION = {"aws": "eu-west-1", "gcp": "europe-west1", "azure": "westeurope"}


def cluster_composite(cloud: str, name: str = "acme-prod", pools: int | None = 2) -> Body:
    """An XCluster on ``cloud``; ``pools`` node pools (None: the default pool)."""
    spec: Body = {
        "forProvider": {"location": CLUSTER_LOCATION[cloud]},
        "parameters": {
            "domain": "acme.example.com",
            "kubernetesVersion": "1.33",
            "tags": {"team": "platform"},
        },
    }
    if pools is not None:
        spec["pools"] = {
            f"pool{i}": {"autoscaling": {"minNodeCount": 1, "maxNodeCount": 3 + i % 5}}
            for i in range(pools)
        }
    return {
        "apiVersion": "platform.fn.crossplane.io/v1alpha1",
        "kind": "XCluster",
        "metadata": {
            "name": name,
            "labels": {
                "cloud": cloud,
                "planeId": "plane-1",
                "crossplane.io/claim-name": "prod",
                "crossplane.io/claim-namespace": "team-a",
            },
        },
        "spec": spec,
    }


def _set(path: str, value: Any) -> Callable[[Body, Body], None]:
    """A mutation setting ``composite.<path>`` (or ``input.<path>`` with an ``input.`` prefix)."""

    def mutate(composite: Body, input_: Body) -> None:
        target = input_ if path.startswith("input.") else composite
        parts = path.removeprefix("input.").split(".")
        for part in parts[:-1]:
            target = target.setdefault(part, {})
        target[parts[-1]] = value

    return mutate


def _delete(path: str) -> Callable[[Body, Body], None]:
    def mutate(composite: Body, input_: Body) -> None:
        target = input_ if path.startswith("input.") else composite
        parts = path.removeprefix("input.").split(".")
        for part in parts[:-1]:
            target = target[part]
        del target[parts[-1]]

    return mutate


#: Who Crossplane's providers are on AKS (local accounts are disabled).
AZURE_CLUSTER_IDENTITY: Body = {
    "type": "AzureWorkloadIdentityCredentials",
    "secretRef": {"name": "crossplane-aks-identity"},
    "principalId": "00000000-0000-0000-0000-0000000000e1",
}
#: Who may reach the API server: each cloud requires it where the endpoint is public.
CLUSTER_API_ALLOWLIST: dict[str, Body] = {
    "aws": {"aws": {"endpointPublicAccessCidrs": ["203.0.113.0/24"]}},
    "gcp": {
        "gcp": {
            "masterAuthorizedNetworks": [
                {"cidrBlock": "203.0.113.0/24", "displayName": "management cluster"}
            ]
        }
    },
    "azure": {
        "azure": {
            "apiServerAuthorizedIpRanges": ["203.0.113.0/24"],
            "clusterIdentity": AZURE_CLUSTER_IDENTITY,
        }
    },
}


def cluster_case(cloud: str) -> ModuleCase:
    """A two-pool cluster with DNS on ``cloud``, machine type from an EnvironmentConfig."""
    return ModuleCase(
        id=f"cluster-{cloud}",
        module="cluster",
        composite=cluster_composite(cloud),
        settings={"ingress_replicas": 2},
        environment=(
            environment_config(
                f"cluster-{cloud}",
                {
                    "defaultMachineType": CLUSTER_MACHINE[cloud],
                    "tags": {"cost-center": "42"},
                    **CLUSTER_API_ALLOWLIST[cloud],
                },
            ),
        ),
        invalid=(
            Invalid(
                "no-location", _delete("spec.forProvider.location"), "spec.forProvider.location"
            ),
            Invalid(
                "bad-domain",
                _set("spec.parameters.domain", "Not A Domain"),
                "spec.parameters.domain",
            ),
            Invalid(
                "bad-version",
                _set("spec.parameters.kubernetesVersion", 133),
                "spec.parameters.kubernetesVersion",
            ),
            Invalid(
                "min-over-max",
                _set("spec.pools.pool0.autoscaling", {"minNodeCount": 9, "maxNodeCount": 2}),
                "spec.pools.pool0",
            ),
            Invalid(
                "string-boolean",
                _set("spec.parameters.privateCluster", "false"),
                "spec.parameters.privateCluster",
            ),
            Invalid("bad-cloud", _set("metadata.labels.cloud", "mars"), "metadata.labels.cloud"),
            Invalid("bad-ttl", _set("input.ttl", "forever"), "input.ttl"),
        ),
        secrets={
            "kubeconfig": b"apiVersion: v1\nclusters: [] # s3cr3t-kubeconfig-7f3a",
            "password": b"hunter2-cluster-pw-91c",
        },
    )


def cluster_import_case(cloud: str, mode: str) -> ModuleCase:
    """:func:`cluster_case` adopting an existing network, node subnets and cluster on
    ``cloud``, with the node pools opted in (``import.include``); in manage mode the cluster's
    version is taken over. The adopted cluster reports the version it runs."""
    case = cluster_case(cloud)
    composite = copy.deepcopy(case.composite)
    subnets = {
        "aws": ("network-public-a", "network-public-b"),
        "gcp": ("network-subnet",),
        "azure": ("network-nodes",),
    }[cloud]
    resources: Body = {
        name: {"externalName": f"legacy-{name}"} for name in ("network", *subnets, "cluster")
    }
    if mode == "manage":
        resources["cluster"]["manage"] = [
            "kubernetesVersion"
            if cloud == "azure"
            else "minMasterVersion"
            if cloud == "gcp"
            else "version"
        ]
    composite["spec"]["parameters"]["createDnsZones"] = False
    composite["spec"]["parameters"]["import"] = {
        "enabled": True,
        "mode": mode,
        "resources": resources,
        "include": ["pool-pool0", "pool-pool1"],
    }
    # the adopted cluster runs its own version, older than the one the composite asks for
    status = {**case.observed_status, "cluster": {"atProvider": {"kubernetesVersion": "1.32"}}}
    return dataclasses.replace(
        case, id=f"cluster-{cloud}-import-{mode}", composite=composite, observed_status=status
    )


# -- async-actor ---------------------------------------------------------------------------


def async_actor_composite(name: str = "text-processor-x7k2p") -> Body:
    """The seed's text-processor actor as an XAsyncActor."""
    return {
        "apiVersion": "asya.sh/v1alpha1",
        "kind": "XAsyncActor",
        "metadata": {
            "name": name,
            "labels": {
                "crossplane.io/claim-name": "text-processor",
                "crossplane.io/claim-namespace": "default",
            },
        },
        "spec": {
            "actor": "text-processor",
            "image": "ghcr.io/example/text-processor:1.0.0",
            "handler": "processor.handle",
            "scaling": {"enabled": True, "minReplicaCount": 0, "maxReplicaCount": 10},
        },
    }


def async_actor_case() -> ModuleCase:
    """An actor with scaling on; AWS settings from an EnvironmentConfig."""
    return ModuleCase(
        id="async-actor",
        module="async-actor",
        composite=async_actor_composite(),
        environment=(
            environment_config(
                "asya-settings",
                {
                    "aws": {"region": "eu-west-1", "accountId": "123456789012"},
                    "irsa": {
                        "enabled": True,
                        "serviceAccountName": "asya-actors",
                        "roleArnPattern": "arn:aws:iam::123456789012:role/asya-{namespace}",
                    },
                    "queue": {"visibilityTimeoutSeconds": 60},
                },
            ),
        ),
        invalid=(
            Invalid("no-image", _delete("spec.image"), "spec.image"),
            Invalid("bad-actor", _set("spec.actor", "Not_A_Label"), "spec.actor"),
            Invalid(
                "bad-replicas",
                _set("spec.scaling.maxReplicaCount", "ten"),
                "spec.scaling.maxReplicaCount",
            ),
            Invalid("bad-ttl", _set("input.ttl", "forever"), "input.ttl"),
        ),
        secrets={"password": b"actor-s3cr3t-queue-pw-55d"},
        required={"runtime-configmap": [asya_runtime_configmap("default")]},
    )


def asya_runtime_configmap(namespace: str, name: str = "asya-runtime") -> Body:
    """The ConfigMap the Asya operator installs in an actor namespace (a stand-in script)."""
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"name": name, "namespace": namespace},
        "data": {"asya_runtime.py": "# stand-in for the Asya runtime script\n"},
    }


# -- openstack ----------------------------------------------------------------------------


def openstack_pool_case() -> ModuleCase:
    """The hv-pool-a hypervisor pool of eu-de-1: a Shoot, its access and ProviderConfig."""
    from tests.support import openstack as o

    return ModuleCase(
        id="openstack-hypervisor-pool",
        module="openstack",
        composite=o.hypervisor("hv-pool-a"),
        environment=(o.environment(),),
        invalid=(
            Invalid(
                "no-machine-pool", _delete("spec.ironcore.machinePool"), "spec.ironcore.machinePool"
            ),
            Invalid("max-under-min", _set("spec.maxWorkers", 10), "spec"),
            Invalid("bad-label", _set("spec.labels", {"bad key!": "x"}), "spec.labels"),
            Invalid("no-region", _delete("spec.region"), "spec.region"),
            Invalid("bad-ttl", _set("input.ttl", "forever"), "input.ttl"),
        ),
        secrets={"kubeconfig": b"apiVersion: v1\nusers: [] # s3cr3t-shoot-admin-4b1e"},
    )


def openstack_cluster_case() -> ModuleCase:
    """customer-a-prod on hv-pool-a, hv-pool-b and st-pool-a, all Ready."""
    from tests.support import openstack as o

    return ModuleCase(
        id="openstack-cluster",
        module="openstack",
        composite=o.openstack(),
        environment=(o.environment(),),
        required=o.pools_and_holders(*o.region_pools()),
        invalid=(
            Invalid("bad-size", _set("spec.size", "huge"), "spec.size"),
            Invalid("no-pools", _set("spec.hypervisorClusters", []), "spec.hypervisorClusters"),
            Invalid("bad-service", _set("spec.services.nova", "maybe"), "spec.services.nova"),
            Invalid("bad-ttl", _set("input.ttl", "forever"), "input.ttl"),
        ),
        secrets={"userKey": b"AQBceph-s3cr3t-client-key-99e==", "password": b"os-admin-pw-2c7"},
    )


def openstack_encrypted_pool_case() -> ModuleCase:
    """st-pool-encrypted: a Shoot, its access, and the read of its CephCluster's encryption."""
    from tests.support import openstack as o

    return ModuleCase(
        id="openstack-encrypted-storage-pool",
        module="openstack",
        composite=o.storage("st-pool-encrypted", encrypted=True),
        environment=(o.environment(),),
        invalid=(
            Invalid("bad-encrypted", _set("spec.ceph.encrypted", "yes"), "spec.ceph.encrypted"),
            Invalid(
                "bad-capacity", _set("spec.ceph.targetCapacity", "lots"), "spec.ceph.targetCapacity"
            ),
        ),
        secrets={"kubeconfig": b"apiVersion: v1\nusers: [] # s3cr3t-storage-admin-77c1"},
    )


def openstack_encrypted_cluster_case() -> ModuleCase:
    """finance-prod requiring encrypted storage, on st-pool-encrypted, all Ready."""
    from tests.support import openstack as o

    pools = [
        o.ready(o.control_plane_cluster()),
        o.ready(o.hypervisor("hv-pool-compliance", workers=20)),
        o.ready(o.storage("st-pool-encrypted", encrypted=True, capacity="200Ti")),
    ]
    return ModuleCase(
        id="openstack-cluster-encrypted",
        module="openstack",
        composite=o.openstack(
            "finance-prod",
            "tenant-finance",
            hypervisors=["hv-pool-compliance"],
            storages=["st-pool-encrypted"],
            encryptedStorage=True,
        ),
        environment=(o.environment(),),
        required=o.pools_and_holders(*pools),
        invalid=(
            Invalid(
                "bad-encrypted-storage",
                _set("spec.encryptedStorage", "yes"),
                "spec.encryptedStorage",
            ),
        ),
        secrets={"userKey": b"AQBceph-s3cr3t-finance-key-41a=="},
    )


# -- contact-center -------------------------------------------------------------------------

CONTACT_CENTER_REGION = {"aws": "us-east-1", "gcp": "us-east1", "azure": "eastus"}
CONTACT_CENTER_SECONDARY = {"aws": "us-west-2", "gcp": "us-west1", "azure": "westus2"}
CONTACT_CENTER_ENVIRONMENT: Body = {
    "aws": {"accountId": "123456789012"},
    "gcp": {"project": "acme-contact", "projectNumber": "123456789012"},
    "azure": {
        "tenantId": "00000000-0000-0000-0000-00000000aaaa",
        "keyVaultAdminObjectId": "00000000-0000-0000-0000-00000000bbbb",
    },
}


def contact_center_composite(
    cloud: str,
    name: str = "us-east-agent-cluster-x7k2p",
    *,
    failover: bool = False,
    **spec: Any,
) -> Body:
    """A ContactCenterEndpoint on ``cloud`` (PCI-DSS, Genesys Cloud), optionally failing over."""
    body: Body = {
        "cloud": cloud,
        "region": CONTACT_CENTER_REGION[cloud],
        "platform": "genesys-cloud",
        "encryptionStandard": "TLS1.2",
        "taggingPolicy": {"costCenter": "cc-4711", "complianceLevel": "PCI-DSS"},
        "network": {"cidr": "10.60.0.0/16"},
        "sip": {"trustedCidrs": ["52.129.96.0/20", "198.51.100.0/24"]},
        "recording": {"retentionDays": 400},
    }
    if failover:
        zone = {"aws": "Z0CONTACT000001", "gcp": "contact-zone", "azure": "acme-agents"}[cloud]
        body["failoverPolicy"] = {
            "secondaryRegion": CONTACT_CENTER_SECONDARY[cloud],
            "healthCheckPath": "/health",
            "dns": {"zone": zone, "recordName": "sip.contact.example.com"},
            "primaryTarget": "203.0.113.10",
            "secondaryTarget": "203.0.113.20",
        }
    body.update(spec)
    return {
        "apiVersion": "contact-center.infra/v1alpha1",
        "kind": "ContactCenterEndpoint",
        "metadata": {
            "name": name,
            "labels": {
                "crossplane.io/claim-name": "us-east-agent-cluster",
                "crossplane.io/claim-namespace": "contact-center",
            },
        },
        "spec": body,
    }


def contact_center_case(cloud: str) -> ModuleCase:
    """The seed's PCI-DSS endpoint on ``cloud``, with failover."""
    return ModuleCase(
        id=f"contact-center-{cloud}",
        module="contact-center",
        composite=contact_center_composite(cloud, failover=True),
        environment=(
            environment_config(
                f"contact-center-{cloud}",
                {cloud: CONTACT_CENTER_ENVIRONMENT[cloud], "tags": {"owner": "cx-platform"}},
            ),
        ),
        invalid=(
            Invalid(
                "open-to-internet",
                _set("spec.sip.trustedCidrs", ["10.1.0.0/16", "0.0.0.0/0"]),
                "spec.sip.trustedCidrs[1]",
            ),
            Invalid("region-not-allowed", _set("spec.region", "af-south-1"), "spec.region"),
            Invalid("no-tagging-policy", _delete("spec.taggingPolicy"), "spec.taggingPolicy"),
            Invalid(
                "pci-without-lock",
                _set("spec.recording.objectLock", False),
                "spec.recording.objectLock",
            ),
            Invalid("bad-cloud", _set("spec.cloud", "mars"), "spec.cloud"),
            Invalid("bad-ttl", _set("input.ttl", "forever"), "input.ttl"),
        ),
        required={"providers": [family_provider(cloud)]},
    )


def family_provider(cloud: str, *, healthy: bool = True) -> Body:
    """The family Provider serving ``cloud``'s ProviderConfig, as Crossplane reports it."""
    health = (
        {"type": "Healthy", "status": "True", "reason": "HealthyPackageRevision"}
        if healthy
        else {
            "type": "Healthy",
            "status": "False",
            "reason": "UnhealthyPackageRevision",
            "message": "cannot pull package: unauthorized",
        }
    )
    version = {"aws": "v2.6.0", "gcp": "v3.0.0", "azure": "v2.7.0"}[cloud]
    return {
        "apiVersion": "pkg.crossplane.io/v1",
        "kind": "Provider",
        "metadata": {"name": f"crossplane-contrib-provider-family-{cloud}"},
        "spec": {
            "package": f"xpkg.crossplane.io/crossplane-contrib/provider-family-{cloud}:{version}"
        },
        "status": {
            "conditions": [
                {"type": "Installed", "status": "True", "reason": "ActivePackageRevision"},
                health,
            ]
        },
    }


# -- environment ---------------------------------------------------------------------------

ENVIRONMENT_REGION = {"aws": "eu-west-1", "gcp": "europe-west1", "azure": "westeurope"}
#: AWS VPCs and Azure VNets are regional, named per region (``privateNetworks.<region>``);
#: a GCP VPC network is global, one for every region.
ENVIRONMENT_SETTINGS: Body = {
    "frontend": {"domain": "apps.acme.example", "bucketPrefix": "acme-mfe"},
    "aws": {
        "accountId": "123456789012",
        "privateNetworks": {
            "eu-west-1": {
                "vpcId": "vpc-0a1b2c3d4e5f60718",
                "cidr": "10.20.0.0/16",
                "subnetIds": ["subnet-0aa11bb22cc33dd44", "subnet-0ee55ff66aa77bb88"],
            }
        },
    },
    "gcp": {
        "project": "acme-apps-prod",
        "projectNumber": "412345678901",
        "privateNetwork": {"network": "projects/acme-apps-prod/global/networks/apps"},
        "databasePasswordSecretRef": {
            "name": "cloudsql-root-password",
            "namespace": "crossplane-system",
            "key": "password",
        },
    },
    "azure": {
        "resourceGroup": "acme-apps-westeurope",
        "privateNetworks": {
            "westeurope": {
                "virtualNetworkId": "/subscriptions/0000/resourceGroups/net/providers/"
                "Microsoft.Network/virtualNetworks/apps",
                "databaseSubnetId": "/subscriptions/0000/resourceGroups/net/providers/"
                "Microsoft.Network/virtualNetworks/apps/subnets/postgres",
            }
        },
    },
}


def environment_composite(cloud: str, name: str = "payments-squad-k4x9p", **spec: Any) -> Body:
    """The seed's payments-squad environment as a UnifiedEnvironment on ``cloud``."""
    body: Body = {
        "cloud": cloud,
        "region": ENVIRONMENT_REGION[cloud],
        "backend": {"image": "ghcr.io/acme/payments-api:1.4.2", "replicas": 2},
        "database": {"size": "medium"},
        "frontend": {
            "appName": "payments",
            "microFrontends": [
                {"name": "checkout", "path": "/checkout"},
                {"name": "wallet", "path": "/wallet"},
            ],
        },
    }
    body.update(spec)
    return {
        "apiVersion": "platform.acme.com/v1alpha1",
        "kind": "UnifiedEnvironment",
        "metadata": {
            "name": name,
            "uid": "7d3f9a12-55c1-4e0b-9a7e-0c2b8e4f1a6d",
            "labels": {
                "crossplane.io/claim-name": "payments-squad",
                "crossplane.io/claim-namespace": "payments",
            },
        },
        "spec": body,
    }


def environment_case(cloud: str) -> ModuleCase:
    """The payments-squad environment on ``cloud``, platform settings from an EnvironmentConfig."""
    return ModuleCase(
        id=f"environment-{cloud}",
        module="environment",
        composite=environment_composite(cloud),
        environment=(environment_config("environment-platform", ENVIRONMENT_SETTINGS),),
        invalid=(
            Invalid("bad-size", _set("spec.database.size", "huge"), "spec.database.size"),
            Invalid("no-image", _delete("spec.backend.image"), "spec.backend.image"),
            Invalid(
                "bad-app-name",
                _set("spec.frontend.appName", "Payments_App"),
                "spec.frontend.appName",
            ),
            Invalid("bad-cloud", _set("spec.cloud", "mars"), "spec.cloud"),
            Invalid("no-region", _delete("spec.region"), "spec.region"),
            Invalid("bad-ttl", _set("input.ttl", "forever"), "input.ttl"),
            Invalid(
                "bad-custom-domain",
                _set("spec.frontend.customDomains", ["*.example.com"]),
                "spec.frontend.customDomains",
            ),
        ),
        secrets={"password": b"env-db-s3cr3t-pw-6b2e", "endpoint": b"db-s3cr3t-host.internal"},
        publishes=("database",),
        label_free=True,
    )


# -- registry ------------------------------------------------------------------------------

CASE_FACTORIES: dict[str, Callable[[], list[ModuleCase]]] = {
    "cluster": lambda: [cluster_case(cloud) for cloud in ("aws", "gcp", "azure")],
    "async-actor": lambda: [async_actor_case()],
    "environment": lambda: [environment_case(cloud) for cloud in ("aws", "gcp", "azure")],
    "openstack": lambda: [
        openstack_pool_case(),
        openstack_cluster_case(),
        openstack_encrypted_pool_case(),
        openstack_encrypted_cluster_case(),
    ],
    "contact-center": lambda: [contact_center_case(cloud) for cloud in ("aws", "gcp", "azure")],
}


def shipped_modules() -> list[str]:
    """Modules this release serves."""
    from fnplatform.composers import composers

    return sorted(composers())


def module_cases() -> list[ModuleCase]:
    """A case for every shipped module that has one (the robustness suite checks coverage)."""
    return [case for module in shipped_modules() for case in CASE_FACTORIES.get(module, list)()]


def baseline_unavailable(rendered: Rendered) -> str | None:
    """Why a baseline can't compose in this checkout (a cloud not written yet), or None."""
    for message in rendered.fatal:
        if "cannot provide" in message:
            return message
    return None
