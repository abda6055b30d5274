"""One simulation of the providers: what a provider reports once a resource is Ready, and
what a cloud refuses.

Everything that plays a provider reads it from here:

- the observed-state fixtures: ``tools/make_observed.py`` (cluster, contact-center),
  ``tools/make_openstack_observed.py`` and ``tests/render-cases/<module>/make_observed.py``
  (async-actor, environment);
- the tests: :func:`ready` (what a provider reports, with an explicit ``over`` only where a
  test observes something deliberately unlike it) in the module cases of
  ``tests/support/cases.py``, the capability harness (``tests/capabilities``) and the module
  tests, which assert on what it reported; :func:`observed_ready` (``tests/support/harness.py``
  re-exports it) where only the conditions matter;
- the live control plane's stand-ins (``tests/live/providers.py``), which add what only a
  running API server has on top: finalizers, connection Secrets as objects, the provider
  CRD's schema (``prune``), references resolved to ids, generated passwords, time stamps.

What a provider reports (:func:`reported`): every upjet provider writes ``status.atProvider``
from the Terraform state, which holds the ids the cloud computes on create (an id for every
resource, an ARN on AWS) and the attributes of each kind (an EKS cluster's endpoint, CA and
OIDC issuer, an RDS instance's address, an Azure key's versionless id...; the attribute
references of terraform-provider-aws/-google/-azurerm). :data:`ATTRIBUTES` is the one table
of those, by API group and kind; the values are fake but deterministic (digests of the
external name), so fixtures and goldens stay byte-identical. A fixture that records fixed
example values (the environment module's) passes them as ``recorded``: the simulation checks
that each recorded field is one the provider reports for the kind.

What a cloud refuses (:data:`REFUSALS`): each :class:`Refusal` is a rule that the cloud
enforces where the CRD cannot say it, and that a builder obeys. It names the builder code it
mirrors (``mirrors``) and that code names the rule's identifier (``rule``) in a comment or
docstring: tests/test_providersim.py checks both ways, so neither can move without the other.
"""

from __future__ import annotations

import base64
import copy
import hashlib
import importlib
import json
from collections.abc import Callable, Container, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from fnplatform.cloud import cloud_profiles
from fnplatform.merge import deep_merge

Body = dict[str, Any]

EXTERNAL_NAME = "crossplane.io/external-name"
RESOURCE_NAME = "crossplane.io/composition-resource-name"
#: The fake AWS account, Azure subscription and CA every simulated provider reports.
ACCOUNT = "123456789012"
SUBSCRIPTION = "00000000-0000-0000-0000-000000000000"
CA_PEM = "-----BEGIN CERTIFICATE-----\nMIIBexample\n-----END CERTIFICATE-----\n"
CA_DATA = base64.b64encode(CA_PEM.encode()).decode()
#: A namespaced twin's group (``s3.aws.m.upbound.io``) reports what its cluster-scoped one does.
_NAMESPACED_SUFFIXES = {".m.upbound.io": ".upbound.io", ".m.crossplane.io": ".crossplane.io"}


def digest(text: str, length: int = 12) -> str:
    """A fake id of ``length`` hex digits, the same for the same text."""
    return hashlib.sha256(text.encode()).hexdigest()[:length]


def _uuid(text: str) -> str:
    hexa = digest(text, 32)
    return f"{hexa[:8]}-{hexa[8:12]}-{hexa[12:16]}-{hexa[16:20]}-{hexa[20:]}"


def group_of(api_version: str) -> str:
    """The API group of ``api_version``, a namespaced twin's folded to its cluster-scoped one."""
    group = api_version.split("/", maxsplit=1)[0] if "/" in api_version else ""
    for namespaced, cluster in _NAMESPACED_SUFFIXES.items():
        if group.endswith(namespaced):
            return group[: -len(namespaced)] + cluster
    return group


def cloud_of(api_version: str) -> str | None:
    """The cloud whose upjet provider serves ``api_version``'s group (its profile's
    ``api_group``: ``aws``, ``gcp``, ``azure``), else None."""
    group = group_of(api_version)
    for profile in cloud_profiles():
        if group == profile.api_group or group.endswith(f".{profile.api_group}"):
            return profile.name
    return None


def external_name(body: Mapping[str, Any]) -> str:
    """The name the cloud knows the resource by: the external-name annotation, else its name."""
    metadata = body.get("metadata") or {}
    return str((metadata.get("annotations") or {}).get(EXTERNAL_NAME) or metadata.get("name", ""))


# -- conditions ---------------------------------------------------------------------------


def ready_conditions(stamp: str | None = None) -> list[Body]:
    """``Ready=True, Available`` and ``Synced=True, ReconcileSuccess``, as every managed
    reconciler reports a resource that exists and is up to date (crossplane-runtime
    ``xpv1.Available()``/``ReconcileSuccess()``), with ``lastTransitionTime`` when given."""
    conditions = [
        {"type": "Ready", "status": "True", "reason": "Available"},
        {"type": "Synced", "status": "True", "reason": "ReconcileSuccess"},
    ]
    if stamp is not None:
        for condition in conditions:
            condition["lastTransitionTime"] = stamp
    return conditions


def observed_ready(body: Mapping[str, Any], **status: Any) -> Body:
    """``body`` as Crossplane observes it once Ready, with the ``status`` fields given (an
    ``atProvider``): what tests feed back when only the conditions matter."""
    observed = {k: v for k, v in body.items() if k != "status"}
    observed["status"] = {**status, "conditions": ready_conditions()}
    return observed


def observed(
    body: Mapping[str, Any],
    at_provider: Mapping[str, Any] | None,
    *,
    name: str | None = None,
    stamp: str | None = None,
    external: bool = False,
) -> Body:
    """A copy of ``body`` observed Ready with ``at_provider`` (None: no ``atProvider``), its
    composition-resource-name annotation ``name`` and, with ``external``, the external-name
    annotation a provider sets (its name) when the body has none."""
    out = copy.deepcopy({k: v for k, v in body.items() if k != "status"})
    if name is not None or external:
        metadata = out.setdefault("metadata", {})
        annotations = metadata.setdefault("annotations", {})
        if name is not None:
            annotations[RESOURCE_NAME] = name
        if external:
            annotations.setdefault(EXTERNAL_NAME, metadata.get("name", name or ""))
    status: Body = {}
    if at_provider is not None:
        status["atProvider"] = dict(at_provider)
    status["conditions"] = ready_conditions(stamp)
    out["status"] = status
    return out


# -- what a provider reports --------------------------------------------------------------


@dataclass(frozen=True)
class Resource:
    """What the cloud knows of a managed resource when it computes its attributes."""

    group: str  # cluster-scoped API group (s3.aws.upbound.io)
    kind: str
    external: str  # the cloud's name for it
    for_provider: Mapping[str, Any]

    @property
    def service(self) -> str:
        """The group's first label: the AWS service of an ARN (``sqs.aws.upbound.io``: sqs)."""
        return self.group.split(".")[0]

    @property
    def region(self) -> str:
        """AWS's region (eu-west-1 when the body names none)."""
        return str(self.for_provider.get("region") or "eu-west-1")

    @property
    def location(self) -> str:
        """GCP's location or region (global when the body names none)."""
        return str(self.for_provider.get("location") or self.for_provider.get("region") or "global")

    @property
    def project(self) -> str:
        """GCP's project (example-project when the body names none)."""
        return str(self.for_provider.get("project") or "example-project")


def resource(body: Mapping[str, Any]) -> Resource:
    """``body`` as :class:`Resource`."""
    spec = body.get("spec") or {}
    return Resource(
        group_of(str(body["apiVersion"])),
        str(body["kind"]),
        external_name(body),
        spec.get("forProvider") or {},
    )


def _ids(r: Resource, cloud: str) -> Body:
    """The ids every resource of ``cloud`` reports (its Terraform ``id``, an AWS ARN)."""
    if cloud == "aws":
        return {
            "id": r.external,
            "arn": f"arn:aws:{r.service}:{r.region}:{ACCOUNT}:{r.kind.lower()}/{r.external}",
        }
    if cloud == "azure":
        return {"id": f"/subscriptions/{SUBSCRIPTION}/resourceGroups/{r.external}"}
    return {"id": r.external}


def _eks_cluster(r: Resource) -> Body:
    cluster_id = digest(r.external, 32).upper()
    return {
        "endpoint": f"https://{cluster_id}.gr7.{r.region}.eks.amazonaws.com",
        "certificateAuthority": [{"data": CA_DATA}],
        "identity": [
            {"oidc": [{"issuer": f"https://oidc.eks.{r.region}.amazonaws.com/id/{cluster_id}"}]}
        ],
    }


def _sqs_queue(r: Resource) -> Body:
    """terraform-provider-aws aws_sqs_queue: ``id`` and ``url`` are the queue URL, the ARN
    has no resource type (``arn:aws:sqs:<region>:<account>:<name>``), as
    ``fnplatform.clouds.aws.queue.queue_arn`` predicts."""
    name = str(r.for_provider.get("name") or r.external)
    url = f"https://sqs.{r.region}.amazonaws.com/{ACCOUNT}/{name}"
    return {"id": url, "url": url, "arn": f"arn:aws:sqs:{r.region}:{ACCOUNT}:{name}", "name": name}


def _rds_instance(r: Resource) -> Body:
    address = f"{r.external}.{digest(ACCOUNT + r.region, 10)}.{r.region}.rds.amazonaws.com"
    return {"address": address, "port": 5432, "endpoint": f"{address}:5432"}


def _cloudfront(r: Resource) -> Body:
    distribution = "E" + digest(r.external, 13).upper()
    return {
        "arn": f"arn:aws:cloudfront::{ACCOUNT}:distribution/{distribution}",
        "domainName": f"d{digest(r.external, 13)}.cloudfront.net",
    }


def _acm_certificate(r: Resource) -> Body:
    """ACM once the validation records exist: issued, one validation record per name (the
    n-th name's record and value carry n)."""
    names = [
        r.for_provider.get("domainName", r.external),
        *r.for_provider.get("subjectAlternativeNames", []),
    ]
    return {
        "arn": f"arn:aws:acm:us-east-1:{ACCOUNT}:certificate/5d2c6e1a-0b7f-4c39-9e84",
        "status": "ISSUED",
        "domainValidationOptions": [
            {
                "domainName": host,
                "resourceRecordName": f"_3f1a9c{i}e.{host}.",
                "resourceRecordType": "CNAME",
                "resourceRecordValue": f"_7b2d4e{i}a.acm-validations.aws.",
            }
            for i, host in enumerate(names)
        ],
    }


def _gke_cluster(r: Resource) -> Body:
    return {
        "id": f"projects/{r.project}/locations/{r.location}/clusters/{r.external}",
        "endpoint": f"34.{int(digest(r.external, 2), 16)}.10.20",
        "masterAuth": {"clusterCaCertificate": CA_DATA},
    }


def _aks_cluster(r: Resource) -> Body:
    return {
        "fqdn": f"{r.external}-{digest(r.external, 8)}.hcp.westeurope.azmk8s.io",
        "oidcIssuerUrl": f"https://westeurope.oic.prod-aks.azure.com/{digest(r.external, 36)}/",
        "identity": {"type": "SystemAssigned", "principalId": digest(f"{r.external}-identity", 32)},
    }


def _user_assigned_identity(r: Resource) -> Body:
    group = r.for_provider.get("resourceGroupName", "example-group")
    return {
        "id": f"/subscriptions/{SUBSCRIPTION}/resourceGroups/{group}/providers/"
        f"Microsoft.ManagedIdentity/userAssignedIdentities/{r.external}",
        "clientId": _uuid(r.external),
        "principalId": _uuid(f"principal-{r.external}"),
    }


def _traffic_manager(r: Resource) -> Body:
    relative = (r.for_provider.get("dnsConfig") or {}).get("relativeName", r.external)
    return {"fqdn": f"{relative}.trafficmanager.net"}


#: By (cluster-scoped group, kind): the attributes the cloud computes on create that the
#: modules read (terraform-provider-aws/-google/-azurerm attribute references). Without
#: them a composer waits for ever.
ATTRIBUTES: dict[tuple[str, str], Callable[[Resource], Body]] = {
    ("eks.aws.upbound.io", "Cluster"): _eks_cluster,
    ("ec2.aws.upbound.io", "LaunchTemplate"): lambda r: {"latestVersion": 1},
    ("route53.aws.upbound.io", "Zone"): lambda r: {"zoneId": "Z" + digest(r.external, 13).upper()},
    ("sqs.aws.upbound.io", "Queue"): _sqs_queue,
    ("rds.aws.upbound.io", "Instance"): _rds_instance,
    ("cloudfront.aws.upbound.io", "Distribution"): _cloudfront,
    ("acm.aws.upbound.io", "Certificate"): _acm_certificate,
    ("container.gcp.upbound.io", "Cluster"): _gke_cluster,
    ("cloudplatform.gcp.upbound.io", "ServiceAccount"): lambda r: {
        "email": f"{r.external}@{r.project}.iam.gserviceaccount.com"
    },
    ("sql.gcp.upbound.io", "DatabaseInstance"): lambda r: {
        "privateIpAddress": f"10.{int(digest(r.external, 2), 16)}.1.3"
    },
    ("compute.gcp.upbound.io", "GlobalAddress"): lambda r: {
        "address": f"34.{int(digest(r.external, 2), 16)}.20.30"
    },
    ("containerservice.azure.upbound.io", "KubernetesCluster"): _aks_cluster,
    ("managedidentity.azure.upbound.io", "UserAssignedIdentity"): _user_assigned_identity,
    ("keyvault.azure.upbound.io", "Key"): lambda r: {
        "versionlessId": f"https://{digest(r.external, 10)}.vault.azure.net/keys/{r.external}"
    },
    ("network.azure.upbound.io", "TrafficManagerProfile"): _traffic_manager,
    ("dbforpostgresql.azure.upbound.io", "FlexibleServer"): lambda r: {
        "fqdn": f"{r.external}.postgres.database.azure.com"
    },
    ("compute.gcp.upbound.io", "ManagedSSLCertificate"): lambda r: {
        "expireTime": "2027-02-01T00:00:00Z"
    },  # set once issued
    ("cdn.azure.upbound.io", "FrontdoorCustomDomain"): lambda r: {
        "validationToken": f"token-{digest(r.external, 8)}"
    },
    ("cdn.azure.upbound.io", "FrontdoorEndpoint"): lambda r: {
        "hostName": f"{r.external}-{digest(r.external, 16)}.z01.azurefd.net"
    },
}


def reported(
    body: Mapping[str, Any],
    *,
    ids: bool = True,
    recorded: Mapping[tuple[str, str], Body | None] | None = None,
) -> Body | None:
    """``status.atProvider`` of ``body`` once Ready, or None for what no upjet provider
    manages (provider-kubernetes and provider-helm kinds: see :func:`wrapped_status`).

    With ``ids`` every resource reports its ids (cloud-specific) and then its kind's
    :data:`ATTRIBUTES`; without, only the attributes (fixtures that show only what a module
    reads). ``recorded`` narrows the attributes to the kinds it names, each with fixed
    example values (or None: the simulation's); each recorded field must be one the
    simulation reports for that kind, so a fixture cannot show what no provider reports.
    """
    api_version = str(body["apiVersion"])
    if group_of(api_version).endswith(("kubernetes.crossplane.io", "helm.crossplane.io")):
        return None
    r = resource(body)
    at: Body = {"id": r.external} if ids else {}
    cloud = cloud_of(api_version)
    if ids and cloud:
        at.update(_ids(r, cloud))
    attributes = ATTRIBUTES.get((r.group, r.kind))
    found = attributes(r) if attributes else {}
    if recorded is not None:
        example = recorded.get((r.group, r.kind), {})
        if example is not None:
            unknown = set(example) - set(found)
            if unknown:
                raise ValueError(
                    f"{r.group} {r.kind}: the provider reports no "
                    f"{sorted(unknown)} (platform/providersim/simulation.py ATTRIBUTES)"
                )
            found = copy.deepcopy(dict(example))
    at.update(found)
    return at


def report(
    body: Mapping[str, Any],
    *,
    name: str | None = None,
    stamp: str | None = None,
    external: bool = False,
    ids: bool = True,
    recorded: Mapping[tuple[str, str], Body | None] | None = None,
    controllers: Container[str] | None = None,
    replicas: int | None = None,
    generation: int | None = None,
    keep_empty: bool = True,
    over: Mapping[str, Any] | None = None,
) -> Body:
    """``body`` observed Ready as its provider reports it (see :func:`observed` for ``name``,
    ``stamp`` and ``external``): :func:`reported` for a managed resource (``ids``,
    ``recorded``); for a provider-kubernetes Object its manifest as observed
    (:func:`live_manifest`: ``controllers``, ``replicas``, ``generation``). ``keep_empty``
    False leaves out an empty ``atProvider`` rather than writing ``{}``.

    ``over`` is laid over the status (maps merge, anything else replaces): what a test
    observes deliberately unlike the simulation (a failure, a missing field, an adopted
    resource's own version), each with its reason where the test writes it."""
    at = reported(body, ids=ids, recorded=recorded)
    manifest = ((body.get("spec") or {}).get("forProvider") or {}).get("manifest")
    if body.get("kind") == "Object" and isinstance(manifest, dict):
        at = {
            "manifest": live_manifest(
                manifest, controllers=controllers, replicas=replicas, generation=generation
            )
        }
    if at is not None and not at and not keep_empty:
        at = None
    out = observed(body, at, name=name, stamp=stamp, external=external)
    if over:
        out["status"] = deep_merge(out["status"], copy.deepcopy(dict(over)))
    return out


def ready(body: Mapping[str, Any], over: Mapping[str, Any] | None = None) -> Body:
    """``body`` as a test feeds it back once Ready: :func:`report` with every id and
    attribute the simulation reports, and ``over`` laid over its status."""
    return report(body, over=over)


def helm_release() -> Body:
    """provider-helm's ``status.atProvider`` of a Release once installed (the Helm release's
    state, helm.sh/helm/v3 pkg/release)."""
    return {"state": "deployed", "revision": 1, "releaseDescription": "Install complete"}


#: Connection secret keys upjet writes, by kind (the providers' ``config/<group>/config.go``
#: sensitive attributes and connection details): a cluster's kubeconfig, a database's
#: endpoint and credentials, a key's secret. Other kinds publish ``attribute.id``.
CONNECTION_KEYS: dict[str, tuple[str, ...]] = {
    "Cluster": ("kubeconfig", "endpoint", "clusterCA"),
    "KubernetesCluster": (
        "kubeconfig",
        "kube_admin_config",
        "client_certificate",
        "client_key",
        "cluster_ca_certificate",
    ),
    "ClusterAuth": ("kubeconfig",),
    "Instance": ("endpoint", "address", "port", "username", "password"),
    "DatabaseInstance": ("connectionName", "privateIP", "publicIP", "serverCACertificateCert"),
    "FlexibleServer": ("fqdn", "administrator_login", "administrator_password"),
    "User": ("password",),
    "ServiceAccountKey": ("private_key", "public_key"),
    "Account": ("primary_access_key", "primary_blob_endpoint", "primary_connection_string"),
}


def kubeconfig(name: str) -> bytes:
    """A kubeconfig naming a fake server for cluster ``name``."""
    return (
        f"apiVersion: v1\nkind: Config\nclusters:\n- name: {name}\n  cluster:\n"
        f"    server: https://{name}.live.invalid\ncontexts:\n- name: {name}\n  context:\n"
        f"    cluster: {name}\n    user: {name}\ncurrent-context: {name}\nusers:\n"
        f"- name: {name}\n  user:\n    token: live\n"
    ).encode()


def connection_details(body: Mapping[str, Any]) -> dict[str, bytes]:
    """The connection details the provider publishes for ``body`` (:data:`CONNECTION_KEYS`),
    fake values naming the key and the resource."""
    name = str((body.get("metadata") or {}).get("name", ""))
    keys = CONNECTION_KEYS.get(str(body.get("kind")), ("attribute.id",))
    details = {key: f"live-{key}-{name}".encode() for key in keys}
    if "kubeconfig" in details:
        details["kubeconfig"] = kubeconfig(name)
    return details


def connection_secret(
    body: Mapping[str, Any], details: Mapping[str, bytes] | None = None
) -> Body | None:
    """The Secret the provider writes for ``body``'s ``spec.writeConnectionSecretToRef`` (a
    namespaced managed resource's names only the Secret: it is in the resource's namespace),
    holding ``details`` (recorded ones, as an upgrade fixture keeps them), else
    :func:`connection_details`; None when it asks for none. Crossplane reads a
    composed resource's connection details from that Secret, and so does the render engine
    from the objects given to ``--required-resources``."""
    ref = (body.get("spec") or {}).get("writeConnectionSecretToRef") or {}
    if not ref.get("name"):
        return None
    namespace = ref.get("namespace") or (body.get("metadata") or {}).get("namespace")
    return {
        "apiVersion": "v1",
        "kind": "Secret",
        "type": "connection.crossplane.io/v1alpha1",
        "metadata": {"name": ref["name"], **({"namespace": namespace} if namespace else {})},
        "data": {
            key: base64.b64encode(value).decode()
            for key, value in sorted(
                (connection_details(body) if details is None else details).items()
            )
        },
    }


# -- what the controllers of wrapped objects report ----------------------------------------


def controller_of(manifest: Mapping[str, Any]) -> str | None:
    """Who reports the status of a wrapped object: ``kubelet`` (Deployment, Job), ``keda``,
    ``gardener``, ``rook``, ``c5c3`` (its ControlPlane), or None (nothing here plays it)."""
    kind = manifest.get("kind")
    if kind in ("Deployment", "Job"):
        return "kubelet"
    if kind == "ScaledObject":
        return "keda"
    if kind == "Shoot":
        return "gardener"
    if str(manifest.get("apiVersion", "")).startswith("ceph.rook.io/"):
        return "rook"
    if kind == "ControlPlane":
        return "c5c3"
    return None


def wrapped_status(manifest: Mapping[str, Any], *, replicas: int | None = None) -> Body:
    """The status the controller of a provider-kubernetes Object's manifest reports once the
    object is healthy ({} when nothing here plays it: :func:`controller_of`):

    - Deployment (``replicas``, default its spec's): ``Available`` with the replica counts
      (none at zero); a Job: ``succeeded: 1`` and ``Complete``;
    - a KEDA ScaledObject: ``Ready`` and ``Active`` (True unless scaled to zero);
    - a Gardener Shoot: ``lastOperation`` Create/Succeeded (gardener docs/usage/shoot_status.md);
    - a Rook Ceph object: ``phase: Ready`` (rook pkg/apis/ceph.rook.io/v1);
    - a c5c3 ControlPlane: ``Ready`` and each service ready.
    """
    kind = manifest.get("kind")
    controller = controller_of(manifest)
    if kind == "Deployment":
        count = (manifest.get("spec") or {}).get("replicas", 1) if replicas is None else replicas
        status: Body = {
            "conditions": [
                {"type": "Available", "status": "True", "reason": "MinimumReplicasAvailable"}
            ]
        }
        if count:
            status.update(replicas=count, readyReplicas=count, availableReplicas=count)
        return status
    if kind == "Job":
        return {
            "succeeded": 1,
            "conditions": [{"type": "Complete", "status": "True", "reason": "CompletionsReached"}],
        }
    if controller == "keda":
        active = "False" if replicas == 0 else "True"
        return {
            "conditions": [
                {"type": "Ready", "status": "True", "reason": "ScaledObjectReady"},
                {"type": "Active", "status": active, "reason": "ScalerActive"},
            ]
        }
    if controller == "gardener":
        return {
            "lastOperation": {"type": "Create", "state": "Succeeded", "progress": 100},
            "observedGeneration": 1,
        }
    if controller == "rook":
        return {"phase": "Ready"}
    if controller == "c5c3":
        services = sorted((manifest.get("spec") or {}).get("services") or [])
        return {
            "conditions": [{"type": "Ready", "status": "True", "reason": "Ready"}],
            "services": [{"name": s, "ready": True} for s in services],
        }
    return {}


def live_manifest(
    manifest: Mapping[str, Any],
    *,
    controllers: Container[str] | None = None,
    replicas: int | None = None,
    generation: int | None = None,
) -> Body:
    """The object provider-kubernetes observes for ``manifest``: a copy, with
    ``metadata.generation`` when given and :func:`wrapped_status` when its controller is
    among ``controllers`` (None: every one :func:`controller_of` names)."""
    live = copy.deepcopy(dict(manifest))
    if generation is not None:
        live["metadata"] = {**(live.get("metadata") or {}), "generation": generation}
    controller = controller_of(manifest)
    if controller is not None and (controllers is None or controller in controllers):
        if manifest.get("kind") == "CephCluster":
            # read only (the storage operator's own): the platform's encrypted cluster, as
            # Rook's CephCluster spec asks for encrypted OSDs (storage.config.encryptedDevice)
            live["spec"] = {
                "storage": {
                    "useAllNodes": True,
                    "useAllDevices": True,
                    "config": {"encryptedDevice": "true"},
                }
            }
        status = wrapped_status(manifest, replicas=replicas)
        if status:
            live["status"] = status
    return live


# -- what a cloud refuses ------------------------------------------------------------------


def _at(mr: Mapping[str, Any]) -> Body:
    return dict((mr.get("status") or {}).get("atProvider") or {})


def _fp(mr: Mapping[str, Any]) -> Body:
    return dict((mr.get("spec") or {}).get("forProvider") or {})


def _unresolved_reference(mr: Body, mrs: Sequence[Body]) -> str:
    """A ``*Ref`` naming no resource, or a ``*Selector`` matching none (crossplane-runtime
    pkg/reference: "cannot resolve references")."""
    names = {m["metadata"]["name"] for m in mrs}
    for field, ref in _fp(mr).items():
        if field.endswith("SecretRef") or not isinstance(ref, dict):
            continue
        if field.endswith("Ref") and ref.get("name") and ref["name"] not in names:
            return (
                f"cannot resolve references: mg.Spec.ForProvider.{field[:-3]}: "
                f'cannot get referenced resource: "{ref["name"]}" not found'
            )
        if field.endswith("Selector"):
            labels = ref.get("matchLabels") or {}
            owner = (mr["metadata"].get("ownerReferences") or [{}])[0].get("uid")
            hits = [
                m
                for m in mrs
                if all((m["metadata"].get("labels") or {}).get(k) == v for k, v in labels.items())
                and (
                    not ref.get("matchControllerRef")
                    or (m["metadata"].get("ownerReferences") or [{}])[0].get("uid") == owner
                )
            ]
            if not hits:
                return (
                    f"cannot resolve references: mg.Spec.ForProvider.{field[:-8]}: "
                    "no resources matched selector"
                )
    return ""


def _foreign_parameter_group(mr: Body, mrs: Sequence[Body]) -> str:
    """RDS refuses a DB parameter group whose family is not the engine's major's."""
    fp = _fp(mr)
    ref = fp.get("parameterGroupNameRef")
    if mr["kind"] != "Instance" or not isinstance(ref, dict) or not fp.get("engineVersion"):
        return ""
    groups = [
        m for m in mrs if m["kind"] == "ParameterGroup" and m["metadata"]["name"] == ref.get("name")
    ]
    wanted = f"{fp.get('engine', 'postgres')}{str(fp['engineVersion']).split('.')[0]}"
    family = _fp(groups[0]).get("family") if groups else wanted
    if family == wanted:
        return ""
    return (
        f"InvalidParameterCombination: The parameter group {ref['name']} with "
        f"DBParameterGroupFamily {family} can't be used for this instance. Use a "
        f"parameter group with DBParameterGroupFamily {wanted}."
    )


def _key_without_grant(mr: Body, mrs: Sequence[Body]) -> str:
    """An Azure storage account whose customer-managed key its identity may not use yet: no
    Key Vault access policy for the identity's principal exists (Azure Storage reads the key
    with the identity when the account is created or the key is set)."""
    cmk = _fp(mr).get("customerManagedKey")
    if mr["kind"] != "Account" or not isinstance(cmk, dict):
        return ""
    identity_id = cmk.get("userAssignedIdentityId")
    principals = {
        _at(m).get("principalId")
        for m in mrs
        if m["kind"] == "UserAssignedIdentity" and _at(m).get("id") == identity_id
    }
    granted = {_fp(m).get("objectId") for m in mrs if m["kind"] == "AccessPolicy"}
    if identity_id and not (principals - {None}) & granted:
        return (
            f"storage.AccountsClient#Create: Failure: StatusCode=400 -- Original Error: "
            f'Code="KeyVaultAccessDenied" Message="The key vault of '
            f"{cmk.get('keyVaultKeyId')} does not grant the identity {identity_id} the "
            f'get, wrapKey and unwrapKey permissions"'
        )
    return ""


def _redrive_to_no_queue(mr: Body, mrs: Sequence[Body]) -> str:
    """SQS refuses a redrive policy whose deadLetterTargetArn is no existing queue's ARN."""
    redrive = _fp(mr).get("redrivePolicy")
    if (
        mr["kind"] not in {"Queue", "QueueRedrivePolicy"}
        or not isinstance(redrive, str)
        or not redrive
    ):
        return ""
    target = (json.loads(redrive) or {}).get("deadLetterTargetArn", "")
    if target in {_at(m).get("arn") for m in mrs if m["kind"] == "Queue"}:
        return ""
    return (
        f"InvalidParameterValue: Value {redrive} for parameter RedrivePolicy is invalid. "
        "Reason: Dead-letter target does not exist."
    )


@dataclass(frozen=True)
class Refusal:
    """A rule a provider or cloud enforces that the CRD cannot express, and a builder obeys."""

    #: The identifier the builder's code names too (a comment or docstring).
    rule: str
    #: ``module:qualname`` of the builder code obeying it.
    mirrors: str
    #: Where the rule comes from (the cloud's or provider's documentation, source).
    source: str
    #: The refusal message for a managed resource among those that exist, or "".
    check: Callable[[Body, Sequence[Body]], str]

    def builder(self) -> Any:
        """The builder code named by :attr:`mirrors`."""
        module, _, qualname = self.mirrors.partition(":")
        found: Any = importlib.import_module(module)
        for part in qualname.split("."):
            found = getattr(found, part)
        return found


#: Every refusal the simulation plays, in the order the provider meets them (references are
#: resolved before the cloud is called).
REFUSALS: tuple[Refusal, ...] = (
    Refusal(
        "REFERENCES_RESOLVE",
        "fnplatform.composition:Composition.ref",
        "crossplane-runtime pkg/reference (APIResolver)",
        _unresolved_reference,
    ),
    Refusal(
        "AZURE_KEY_GRANT_FIRST",
        "fnplatform.clouds.azure.bucket:_customer_managed_key",
        "Azure Storage: customer-managed keys with a user-assigned identity need get, "
        "wrapKey and unwrapKey on the vault",
        _key_without_grant,
    ),
    Refusal(
        "RDS_PARAMETER_GROUP_FAMILY",
        "fnplatform.clouds.aws.database:database",
        "RDS ModifyDBInstance: the DB parameter group's family must match the engine",
        _foreign_parameter_group,
    ),
    Refusal(
        "SQS_REDRIVE_TARGET_EXISTS",
        "fnplatform.composers.async_actor:_queue",
        "SQS SetQueueAttributes RedrivePolicy: the dead-letter target must exist",
        _redrive_to_no_queue,
    ),
)


def refusal(mr: Body, mrs: Sequence[Body]) -> str:
    """Why the provider or the cloud refuses ``mr`` among the resources ``mrs``, or ""."""
    for rule in REFUSALS:
        message = rule.check(mr, mrs)
        if message:
            return message
    return ""
