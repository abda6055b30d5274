"""Stand-ins for the providers that cannot run here (they would call AWS, GCP, Azure, Helm and
Gardener), and the real provider-kubernetes' launch.

CloudStandIn plays provider-upjet-aws/gcp/azure for every managed resource a composite
composes (found through the composites' resourceRefs, so it lists only what exists), as upjet's
managed reconciler does (crossplane-runtime pkg/reconciler/managed):
- adds the finalizer `finalizer.managedresource.crossplane.io`; on delete removes it;
- resolves references first (crossplane-runtime pkg/reference): a `*Ref` naming a resource
  that does not exist, or a `*Selector` that matches none, leaves the resource
  `Synced=False, ReconcileError` with "cannot resolve references", as the real provider does;
- refuses what the cloud refuses where the CRD cannot say it: an SQS redrive policy whose
  deadLetterTargetArn is no queue's ARN (AWS: "InvalidParameterValue: Value ... for parameter
  RedrivePolicy is invalid. Reason: Dead-letter target does not exist"), and an Azure storage
  account encrypted with a Key Vault key through a user-assigned identity before that identity
  is granted on the vault (Azure Storage checks wrapKey/unwrapKey when the key is set:
  "The key vault ... does not grant the identity ... the permissions ..."), and an RDS
  instance in a parameter group of another family than its engine's major (RDS:
  "InvalidParameterCombination: The parameter group ... can't be used for this instance");
- else fills `status.atProvider` from `forProvider` plus the computed ids (id, arn, selfLink,
  URLs: upjet copies the Terraform state, which holds every argument and attribute), sets
  `Synced=True, ReconcileSuccess` and `Ready=True, Available`, and writes the connection secret
  named by writeConnectionSecretToRef with the keys upjet writes for the kind.

HelmStandIn: provider-helm Releases become `Ready=True` with `atProvider.state: deployed`.
GardenerStandIn: Shoots report the status Gardener reports for a healthy shoot.

provider-kubernetes itself is real, started with the args examples/install ships
(`provider_kubernetes_command`) plus only process-local ports.
"""

from __future__ import annotations

import base64
import hashlib
import time
from pathlib import Path
from typing import Any

import yaml

from tests.live.controlplane import REPO, ControlPlane, Processes
from tests.live.kube import Kube
from tests.live.standins import Loop, _now

FINALIZER = "finalizer.managedresource.crossplane.io"
CLOUD_SUFFIXES = ("aws.upbound.io", "aws.m.upbound.io", "gcp.upbound.io", "gcp.m.upbound.io",
                  "azure.upbound.io", "azure.m.upbound.io",
                  # provider-helm: a Release is ready once deployed (atProvider.state)
                  "helm.crossplane.io", "helm.m.crossplane.io")
# Connection secret keys upjet writes, by kind (the providers' config/<group>/config.go
# "Sensitive"/connection details): a cluster's kubeconfig, a database's endpoint and
# credentials, a key's secret.
CONNECTION_KEYS: dict[str, tuple[str, ...]] = {
    "Cluster": ("kubeconfig", "endpoint", "clusterCA"),
    "KubernetesCluster": ("kubeconfig", "kube_admin_config", "client_certificate",
                          "client_key", "cluster_ca_certificate"),
    "ClusterAuth": ("kubeconfig",),
    "Instance": ("endpoint", "address", "port", "username", "password"),
    "DatabaseInstance": ("connectionName", "privateIP", "publicIP", "serverCACertificateCert"),
    "FlexibleServer": ("fqdn", "administrator_login", "administrator_password"),
    "User": ("password",),
    "ServiceAccountKey": ("private_key", "public_key"),
    "Account": ("primary_access_key", "primary_blob_endpoint", "primary_connection_string"),
}


def _h(*parts: str) -> str:
    return hashlib.sha256("/".join(parts).encode()).hexdigest()[:12]


_CA = "LS0tLS1CRUdJTiBDRVJUSUZJQ0FURS0tLS0tCnN0YW5kLWluCi0tLS0tRU5EIENFUlRJRklDQVRFLS0tLS0K"


def attributes(cloud: str, kind: str, name: str, region: str) -> dict[str, Any]:
    """The attributes the cloud computes on create that the modules wait for, by kind, in the
    shape the provider's CRD gives them (terraform-provider-aws/-google/-azurerm attribute
    references): an EKS cluster's endpoint, CA and OIDC issuer, a launch template's version, an
    Azure key's versionless id... Without them a composer waits for ever."""
    h = _h(cloud, kind, name)
    if cloud == "aws":
        return {
            "Cluster": {
                "endpoint": f"https://{h.upper()}.gr7.{region}.eks.amazonaws.com",
                "certificateAuthority": [{"data": _CA}],
                "identity": [{"oidc": [{
                    "issuer": f"https://oidc.eks.{region}.amazonaws.com/id/{h.upper()}"}]}],
            },
            "LaunchTemplate": {"latestVersion": 1, "defaultVersion": 1},
            "Zone": {"zoneId": f"Z{h.upper()}"},
            "Instance": {"address": f"{name}.{h}.{region}.rds.amazonaws.com",
                         "endpoint": f"{name}.{h}.{region}.rds.amazonaws.com:5432"},
            "Distribution": {"domainName": f"d{h}.cloudfront.net"},
        }.get(kind, {})
    if cloud == "gcp":
        return {
            "ServiceAccount": {"email": f"{name}@live.iam.gserviceaccount.com"},
            "Cluster": {"endpoint": f"10.{int(h[:2], 16)}.0.2",
                        "masterAuth": {"clusterCaCertificate": _CA}},
            "DatabaseInstance": {"privateIpAddress": f"10.{int(h[:2], 16)}.1.3"},
        }.get(kind, {})
    return {
        "KubernetesCluster": {
            "fqdn": f"{name}-{h[:8]}.hcp.{region}.azmk8s.io",
            "oidcIssuerUrl": f"https://{region}.oic.prod-aks.azure.com/live/{h}/",
            "identity": {"principalId": f"{h[:8]}-1111-0000-0000-{h}"},
        },
        "UserAssignedIdentity": {"clientId": f"{h[:8]}-2222-0000-0000-{h}"},
        "Key": {"versionlessId": f"https://{name[:24]}.vault.azure.net/keys/{name}"},
        "FrontdoorEndpoint": {"hostName": f"{name}-{h[:10]}.z01.azurefd.net"},
        "FlexibleServer": {"fqdn": f"{name}.postgres.database.azure.com"},
        "TrafficManagerProfile": {"fqdn": f"{name}.trafficmanager.net"},
    }.get(kind, {})


def computed(cloud: str, group: str, kind: str, name: str, region: str) -> dict[str, str]:
    """The ids a real provider reports after create (the shapes each cloud gives): an AWS ARN
    is ``arn:aws:<service>:<region>:<account>:<name>``, the service being the API group's first
    label (``sqs.aws.upbound.io`` -> ``sqs``; AWS General Reference, "Amazon Resource Names")."""
    h = _h(cloud, kind, name)
    if cloud == "aws":
        service, region = group.split(".", maxsplit=1)[0], region or "us-east-1"
        ids = {
            "id": name if kind in {"Bucket", "Queue", "Role", "Policy"} else f"{kind.lower()}-{h}",
            "arn": f"arn:aws:{service}:{region}:123456789012:{name}",
        }
        if kind == "Queue":
            # terraform-provider-aws aws_sqs_queue: id and url are the queue URL
            ids["url"] = f"https://sqs.{region}.amazonaws.com/123456789012/{name}"
        return ids
    if cloud == "gcp":
        return {
            "id": f"projects/live/locations/{region or 'global'}/{kind.lower()}s/{name}",
            "selfLink": f"https://www.googleapis.com/live/{kind.lower()}s/{name}",
        }
    return {
        "id": f"/subscriptions/00000000-0000-0000-0000-000000000000/resourceGroups/live/"
        f"providers/{kind}/{name}",
        "principalId": f"{h[:8]}-0000-0000-0000-{h}",
    }


def _cloud_of(group: str) -> str:
    for cloud in ("aws", "gcp", "azure", "helm"):
        if group.startswith(f"{cloud}.") or f".{cloud}." in group:
            return cloud
    return "azure"


class CloudStandIn:
    """The upjet providers' stand-in (see the module doc)."""

    MANAGER = "upjet-provider-stand-in"

    def __init__(self, kube: Kube, xr_kinds: list[tuple[str, str]]) -> None:
        self.kube = kube
        self.xr_kinds = xr_kinds  # (apiVersion, kind) of the composites to follow
        self._schemas: dict[tuple[str, str], dict[str, Any]] = {}
        self._known: dict[tuple[str, str, str, str], None] = {}
        #: kind -> (the cloud's error, until when: time.monotonic()): fail()
        self.failing: dict[str, tuple[str, float]] = {}
        self.loop = Loop("cloud-provider-stand-in", self.step)

    def fail(self, kind: str, error: str, seconds: float) -> None:
        """Let the cloud refuse every resource of ``kind`` with ``error`` for ``seconds``:
        ``Synced=False, ReconcileError`` with the error, ``Ready`` as it was (an outage of the
        cloud's API or a revoked permission: the resource exists, the provider cannot sync
        it), then as before."""
        self.failing[kind] = (error, time.monotonic() + seconds)

    def composed(self) -> list[Any]:
        """Every managed resource of a cloud group that some composite composes."""
        seen: dict[tuple[str, str, str, str], None] = {}
        for api_version, kind in self.xr_kinds:
            try:
                xrs = self.kube.list(api_version, kind)
            except Exception:  # the XRD of the other form: not served now
                continue
            for xr in xrs:
                d = xr.to_dict()
                spec = d.get("spec") or {}
                refs = spec.get("resourceRefs") or (spec.get("crossplane") or {}).get(
                    "resourceRefs"
                ) or []
                ns = d["metadata"].get("namespace")
                for ref in refs:
                    group = ref["apiVersion"].split("/")[0]
                    if not group.endswith(CLOUD_SUFFIXES) or ref["kind"].endswith(
                        ("ProviderConfig", "ProviderConfigUsage")
                    ):
                        continue  # not a managed resource (a ProviderConfig has no external)
                    seen[(ref["apiVersion"], ref["kind"], ns or "", ref["name"])] = None
        # and every resource seen before: once its composite is gone (deleted), a resource is
        # still the provider's to finish (its finalizer) until it is gone
        self._known.update(dict.fromkeys(seen))
        # one list per kind, not one get per resource: under load (issue 34) a pass over
        # hundreds of resources must stay within seconds
        current: dict[tuple[str, str, str, str], dict[str, Any]] = {}
        for api_version, kind in {(k[0], k[1]) for k in self._known}:
            for obj in self.kube.list(api_version, kind):
                d = obj.to_dict()
                meta = d["metadata"]
                current[(api_version, kind, meta.get("namespace") or "", meta["name"])] = d
        out = []
        for key in list(self._known):
            if key in current:
                out.append(current[key])
            else:
                del self._known[key]
        return out

    def step(self) -> None:
        """One pass over every composed managed resource (one failing does not stop the rest)."""
        mrs = self.composed()
        for mr in mrs:
            try:
                self.reconcile(mr, mrs)
            except Exception as e:  # kept for the test's failure message
                self.loop.errors.append(f"{mr['kind']}/{mr['metadata']['name']}: {e}"[:500])
                del self.loop.errors[:-20]

    def at_provider_schema(self, api_version: str, kind: str) -> dict[str, Any]:
        """The CRD's schema of status.atProvider for the version (cached)."""
        key = (api_version, kind)
        if key not in self._schemas:
            status = status_schema(self.kube, api_version, kind)
            self._schemas[key] = status.get("properties", {}).get("atProvider", {})
        return self._schemas[key]

    def reconcile(self, mr: dict[str, Any], mrs: list[dict[str, Any]]) -> None:
        """Reconcile one managed resource as upjet's managed reconciler would."""
        meta = mr["metadata"]
        obj = _O(mr)
        if meta.get("deletionTimestamp"):
            if FINALIZER in (meta.get("finalizers") or []):
                rest = [f for f in meta["finalizers"] if f != FINALIZER]
                self.kube.patch(obj, {"metadata": {"finalizers": rest}})
            return
        if FINALIZER not in (meta.get("finalizers") or []):
            self.kube.patch(
                obj, {"metadata": {"finalizers": [*(meta.get("finalizers") or []), FINALIZER]}}
            )
        fp = (mr.get("spec") or {}).get("forProvider") or {}
        refusal = self.refusal(mr, fp, mrs)
        now = _now()
        error, until = self.failing.get(mr["kind"], ("", 0.0))
        if error and time.monotonic() < until:
            ready = [c for c in (mr.get("status") or {}).get("conditions") or []
                     if c.get("type") == "Ready"]
            self._status(mr, {"conditions": [
                {"type": "Synced", "status": "False", "reason": "ReconcileError",
                 "message": error, "lastTransitionTime": now}, *ready,
            ]})
            return
        if refusal:
            self._status(mr, {"conditions": [
                {"type": "Synced", "status": "False", "reason": "ReconcileError",
                 "message": refusal, "lastTransitionTime": now},
            ]})
            return
        group = mr["apiVersion"].split("/")[0]
        cloud = _cloud_of(group)
        region = str(fp.get("region") or fp.get("location") or "")
        at = {k: v for k, v in fp.items() if not k.endswith(("Ref", "Refs", "Selector"))}
        # resolved references: crossplane-runtime writes the referenced resource's id (or the
        # extractor's field) into forProvider; upjet's state then has it in atProvider
        by_name = {m["metadata"]["name"]: m for m in mrs}
        for field, ref in fp.items():
            if field.endswith("Ref") and isinstance(ref, dict) and ref.get("name") in by_name:
                target = ((by_name[ref["name"]].get("status") or {}).get("atProvider") or {})
                if target.get("id"):
                    at.setdefault(field[:-3], target["id"])
        if cloud == "helm":
            # provider-helm: atProvider.state from the Helm release (helm.sh/helm/v3 release)
            at = {"state": "deployed", "revision": 1, "releaseDescription": "Install complete"}
        else:
            # the cloud names a resource by its external name: the queue's or the bucket's own
            # name where forProvider carries one (SQS: arn:aws:sqs:<region>:<account>:<name>)
            cloud_name = str(
                (meta.get("annotations") or {}).get("crossplane.io/external-name")
                or fp.get("name") or meta["name"]
            )
            at.update(computed(cloud, group, mr["kind"], cloud_name, region))
            for key, value in attributes(cloud, mr["kind"], cloud_name, region).items():
                old = at.get(key)
                at[key] = {**old, **value} if isinstance(old, dict) and isinstance(
                    value, dict) else value
        at = prune(at, self.at_provider_schema(mr["apiVersion"], mr["kind"]))
        self._status(mr, {"atProvider": at, "conditions": [
            {"type": "Synced", "status": "True", "reason": "ReconcileSuccess",
             "lastTransitionTime": now},
            {"type": "Ready", "status": "True", "reason": "Available", "lastTransitionTime": now},
        ]})
        self.connection_secret(mr)

    @staticmethod
    def _foreign_parameter_group(mr: dict[str, Any], fp: dict[str, Any],
                                 mrs: list[dict[str, Any]]) -> str:
        """RDS refuses a DB parameter group whose family is not the engine's major's."""
        ref = fp.get("parameterGroupNameRef")
        if mr["kind"] != "Instance" or not isinstance(ref, dict) or not fp.get("engineVersion"):
            return ""
        groups = [m for m in mrs if m["kind"] == "ParameterGroup"
                  and m["metadata"]["name"] == ref.get("name")]
        wanted = f"{fp.get('engine', 'postgres')}{str(fp['engineVersion']).split('.')[0]}"
        family = groups[0]["spec"]["forProvider"].get("family") if groups else wanted
        if family == wanted:
            return ""
        return (f"InvalidParameterCombination: The parameter group {ref['name']} with "
                f"DBParameterGroupFamily {family} can't be used for this instance. Use a "
                f"parameter group with DBParameterGroupFamily {wanted}.")

    def refusal(self, mr: dict[str, Any], fp: dict[str, Any], mrs: list[dict[str, Any]]) -> str:
        """Why the provider (reference resolution) or the cloud refuses this resource, or ''."""
        names = {m["metadata"]["name"] for m in mrs}
        for field, sel in fp.items():
            # a sensitive input: upjet reads the key of the Secret (pkg/resource/sensitive.go);
            # with autoGeneratePassword (provider-upjet-aws RDS) the provider writes it first
            if field.endswith("SecretRef") and isinstance(sel, dict) and sel.get("key"):
                sns = sel.get("namespace") or mr["metadata"].get("namespace")
                if self.kube.get("v1", "Secret", sel["name"], sns) is None:
                    if fp.get("autoGeneratePassword"):
                        self.kube.apply({
                            "apiVersion": "v1", "kind": "Secret",
                            "metadata": {"name": sel["name"], "namespace": sns},
                            "data": {sel["key"]: base64.b64encode(
                                _h("password", sel["name"]).encode()).decode()},
                        }, self.MANAGER)
                    else:
                        return (
                            f"cannot get sensitive parameters: cannot get secret value for "
                            f"{sns}/{sel['name']}: secrets \"{sel['name']}\" not found"
                        )
        for field, ref in fp.items():
            if field.endswith("SecretRef"):
                continue
            if (
                field.endswith("Ref")
                and isinstance(ref, dict)
                and ref.get("name")
                and ref["name"] not in names
            ):
                return (
                    f"cannot resolve references: mg.Spec.ForProvider.{field[:-3]}: "
                    f"cannot get referenced resource: \"{ref['name']}\" not found"
                )
            if field.endswith("Selector") and isinstance(ref, dict):
                labels = ref.get("matchLabels") or {}
                ctrl = (mr["metadata"].get("ownerReferences") or [{}])[0].get("uid")
                hits = [
                    m for m in mrs
                    if all((m["metadata"].get("labels") or {}).get(k) == v
                           for k, v in labels.items())
                    and (not ref.get("matchControllerRef")
                         or (m["metadata"].get("ownerReferences") or [{}])[0].get("uid") == ctrl)
                ]
                if not hits:
                    return (
                        f"cannot resolve references: mg.Spec.ForProvider.{field[:-8]}: "
                        "no resources matched selector"
                    )
        refused = self._key_without_grant(mr, fp, mrs) or self._foreign_parameter_group(mr, fp, mrs)
        if refused:
            return refused
        redrive = fp.get("redrivePolicy")
        if mr["kind"] in {"Queue", "QueueRedrivePolicy"} and isinstance(redrive, str) and redrive:
            import json

            target = (json.loads(redrive) or {}).get("deadLetterTargetArn", "")
            arns = {
                ((m.get("status") or {}).get("atProvider") or {}).get("arn")
                for m in mrs if m["kind"] == "Queue"
            }
            if target not in arns:
                return (
                    "InvalidParameterValue: Value "
                    f"{redrive} for parameter RedrivePolicy is invalid. "
                    "Reason: Dead-letter target does not exist."
                )
        return ""

    @staticmethod
    def _key_without_grant(
        mr: dict[str, Any], fp: dict[str, Any], mrs: list[dict[str, Any]]
    ) -> str:
        """An Azure storage account whose customer-managed key its identity may not use yet:
        no Key Vault access policy for the identity's principal exists (Azure Storage reads
        the key with the identity when the account is created or the key is set)."""
        cmk = fp.get("customerManagedKey")
        if mr["kind"] != "Account" or not isinstance(cmk, dict):
            return ""
        identity_id = cmk.get("userAssignedIdentityId")
        principals = {
            ((m.get("status") or {}).get("atProvider") or {}).get("principalId")
            for m in mrs if m["kind"] == "UserAssignedIdentity"
            and ((m.get("status") or {}).get("atProvider") or {}).get("id") == identity_id
        } - {None}
        granted = {
            ((m.get("spec") or {}).get("forProvider") or {}).get("objectId")
            for m in mrs if m["kind"] == "AccessPolicy"
        }
        if identity_id and not principals & granted:
            return (
                f"storage.AccountsClient#Create: Failure: StatusCode=400 -- Original Error: "
                f"Code=\"KeyVaultAccessDenied\" Message=\"The key vault of "
                f"{cmk.get('keyVaultKeyId')} does not grant the identity {identity_id} the "
                f"get, wrapKey and unwrapKey permissions\""
            )
        return ""

    def _status(self, mr: dict[str, Any], status: dict[str, Any]) -> None:
        old = mr.get("status") or {}
        same = all(
            next((c for c in old.get("conditions") or [] if c["type"] == n["type"]), {}).get(
                "status") == n["status"]
            and next((c for c in old.get("conditions") or [] if c["type"] == n["type"]),
                     {}).get("message") == n.get("message")
            for n in status["conditions"]
        ) and ("atProvider" not in status or old.get("atProvider") == status["atProvider"])
        if same:
            return
        # keep the lastTransitionTime of a condition whose status did not change
        for n in status["conditions"]:
            o = next((c for c in old.get("conditions") or [] if c["type"] == n["type"]), None)
            if o and o.get("status") == n["status"]:
                n["lastTransitionTime"] = o.get("lastTransitionTime", n["lastTransitionTime"])
        self.kube.patch_status(_O(mr), status, self.MANAGER)

    def connection_secret(self, mr: dict[str, Any]) -> None:
        """Write the connection secret the resource names, with upjet's keys for its kind."""
        ref = (mr.get("spec") or {}).get("writeConnectionSecretToRef")
        if not ref:
            return
        ns = ref.get("namespace") or mr["metadata"].get("namespace")
        if self.kube.get("v1", "Secret", ref["name"], ns) is not None:
            return
        keys = CONNECTION_KEYS.get(mr["kind"], ("attribute.id",))
        data = {k: base64.b64encode(f"live-{k}-{mr['metadata']['name']}".encode()).decode()
                for k in keys}
        if "kubeconfig" in data:
            data["kubeconfig"] = base64.b64encode(_kubeconfig(mr["metadata"]["name"])).decode()
        self.kube.apply({
            "apiVersion": "v1", "kind": "Secret",
            "metadata": {
                "name": ref["name"], "namespace": ns,
                "ownerReferences": [{
                    "apiVersion": mr["apiVersion"], "kind": mr["kind"],
                    "name": mr["metadata"]["name"], "uid": mr["metadata"]["uid"],
                    "controller": True,
                }],
            },
            "type": "connection.crossplane.io/v1alpha1",
            "data": data,
        }, self.MANAGER)


def status_schema(kube: Kube, api_version: str, kind: str) -> dict[str, Any]:
    """The schema of the kind's status in its CRD, for that version."""
    res = kube.resource(api_version, kind)
    crd = kube.get("apiextensions.k8s.io/v1", "CustomResourceDefinition",
                   f"{res.name}.{res.group}").to_dict()
    version = api_version.split("/")[1]
    schema = next(v for v in crd["spec"]["versions"] if v["name"] == version)
    props: dict[str, Any] = schema["schema"]["openAPIV3Schema"].get("properties") or {}
    return dict(props.get("status") or {})


def _without_times(value: Any) -> Any:
    """value without the timestamps a status rewrites on every report."""
    if isinstance(value, dict):
        return {k: _without_times(v) for k, v in value.items()
                if k not in {"lastTransitionTime", "lastUpdateTime"}}
    if isinstance(value, list):
        return [_without_times(v) for v in value]
    return value


def prune(value: Any, schema: dict[str, Any]) -> Any:
    """value without what schema does not declare (server-side apply refuses undeclared
    fields: "field not declared in schema"), and with scalars of the declared type only."""
    if isinstance(value, dict):
        if schema.get("x-kubernetes-preserve-unknown-fields"):
            return value
        props = schema.get("properties")
        if props is None:
            extra = schema.get("additionalProperties")
            if isinstance(extra, dict):
                return {k: prune(v, extra) for k, v in value.items()}
            return {} if schema.get("type") == "object" else None
        return {
            k: pv for k, v in value.items() if k in props
            for pv in [prune(v, props[k])] if pv is not None
        }
    if isinstance(value, list):
        items = schema.get("items") or {}
        if schema.get("type") not in (None, "array"):
            return None
        return [x for x in (prune(v, items) for v in value) if x is not None]
    kind = schema.get("type")
    ok = {
        "string": str, "boolean": bool, "integer": int, "number": (int, float),
    }.get(kind or "", object)
    if kind == "integer" and isinstance(value, bool):
        return None
    return value if isinstance(value, ok) else None


def _kubeconfig(name: str) -> bytes:
    n = name
    return (
        f"apiVersion: v1\nkind: Config\nclusters:\n- name: {n}\n  cluster:\n"
        f"    server: https://{n}.live.invalid\ncontexts:\n- name: {n}\n  context:\n"
        f"    cluster: {n}\n    user: {n}\ncurrent-context: {n}\nusers:\n- name: {n}\n"
        "  user:\n    token: live\n"
    ).encode()


class _O:
    def __init__(self, d: dict[str, Any]) -> None:
        self.apiVersion = d["apiVersion"]
        self.kind = d["kind"]
        self.metadata = type("M", (), dict(d["metadata"]))


INSTALL = REPO / "examples" / "install"
#: The container Crossplane runs a provider package's image in; a DeploymentRuntimeConfig
#: sets its args by naming it (Crossplane internal/controller/pkg/runtime: the template's
#: container of this name is merged into the provider's Deployment).
RUNTIME_CONTAINER = "package-runtime"
#: What only this harness adds to provider-kubernetes' args, nothing else. In a cluster the
#: provider's pod has its own network namespace; here every process of the control plane
#: shares one (tools/live/netns.sh), so each listener gets a port of its own on 127.0.0.1:
#: - metrics (default `:8080`) and health probes (default `:8081`): controller-runtime's
#:   defaults, which Crossplane's own manager has too (moved to 8180/8181 in crossplane.py);
#:   a wildcard bind would also take the port on every Service cluster IP of the loopback;
#: - the webhook server (Object conversion only, never called here: docs/live.md; default
#:   9443): 9443 is the function's gRPC port (Crossplane's function runtime port), which the
#:   kubelet stand-in serves on a loopback address of its own, and Linux refuses a wildcard
#:   bind on a port a specific address already listens on; 9444 is Crossplane's webhook.
#: Behaviour (watches, poll, sync) is never set here: it comes from examples/install.
PROVIDER_KUBERNETES_HARNESS_ARGS = (
    "--metrics-bind-address=127.0.0.1:8280",
    "--health-probe-bind-addr=127.0.0.1:8281",
    "--webhook-port=9445",
)


def _flag(arg: str) -> str:
    """`--poll` of `--poll=10m`; `--enable-watches` of `--no-enable-watches` (kingpin's
    negation of a boolean flag is the same flag)."""
    name = arg.split("=", 1)[0]
    return "--" + name[len("--no-"):] if name.startswith("--no-") else name


def shipped_args(provider: str, install: Path = INSTALL) -> list[str]:
    """The container args the install set (examples/install) gives `provider`'s pods.

    Its Provider's `runtimeConfigRef` (Crossplane's default: the DeploymentRuntimeConfig
    `default`) names a DeploymentRuntimeConfig whose `package-runtime` container's args
    Crossplane sets on the provider's Deployment. Read at test time, so the live test runs the
    provider with exactly what a user's installation runs (issue 30 item 7: a live test with
    its own faster flags hid a 10-minute wait). Crossplane's own `default` config sets no args;
    any other name that the install set does not define is an error.
    """
    docs = [d for path in sorted(install.glob("*.yaml"))
            for d in yaml.safe_load_all(path.read_text()) if isinstance(d, dict)]
    providers = [d for d in docs if d.get("kind") == "Provider"
                 and (d.get("metadata") or {}).get("name") == provider]
    if len(providers) != 1:
        raise LookupError(f"{install}: {len(providers)} Provider named {provider}")
    ref = ((providers[0].get("spec") or {}).get("runtimeConfigRef") or {}).get("name", "default")
    configs = [d for d in docs if d.get("kind") == "DeploymentRuntimeConfig"
               and (d.get("metadata") or {}).get("name") == ref]
    if not configs:
        if ref == "default":
            return []
        raise LookupError(f"{install}: Provider {provider} names DeploymentRuntimeConfig "
                          f"{ref}, which is not there")
    template = (((configs[0].get("spec") or {}).get("deploymentTemplate") or {})
                .get("spec") or {}).get("template") or {}
    containers = (template.get("spec") or {}).get("containers") or []
    args: list[str] = []
    for container in containers:
        if container.get("name") == RUNTIME_CONTAINER:
            args = [str(a) for a in container.get("args") or []]
    return args


def provider_kubernetes_command(binary: Path, install: Path = INSTALL) -> list[str]:
    """provider-kubernetes' command line here: the shipped args, then the harness's
    process-local ones (PROVIDER_KUBERNETES_HARNESS_ARGS). A shipped arg that the harness
    would set too is an error rather than an override: kingpin refuses a repeated flag
    ("flag 'x' cannot be repeated"), and the live test must not run other settings than the
    install set's."""
    shipped = shipped_args("provider-kubernetes", install)
    local = {_flag(a) for a in PROVIDER_KUBERNETES_HARNESS_ARGS}
    clash = [a for a in shipped if _flag(a) in local]
    if clash:
        raise ValueError(f"examples/install sets {clash}, which the live harness sets itself "
                         "(process-local ports): drop them there or from the harness")
    return [str(binary), *shipped, *PROVIDER_KUBERNETES_HARNESS_ARGS]


def start_provider_kubernetes(
    cp: ControlPlane, procs: Processes, bins: dict[str, Path], kube: Kube
) -> None:
    """provider-kubernetes as a local process: its own client from the admin kubeconfig (the
    pod's), and for `InjectedIdentity` ProviderConfigs the in-cluster identity of its service
    account (crossplane-system/provider-kubernetes): a token from the TokenRequest API written
    where the kubelet projects it (/var/run/secrets/kubernetes.io/serviceaccount, a private
    mount in tools/live/netns.sh), and KUBERNETES_SERVICE_HOST/PORT pointing at the apiserver.
    Its args are the install set's (provider_kubernetes_command): watches on, the shipped
    poll."""
    kube.apply({
        "apiVersion": "v1", "kind": "ServiceAccount",
        "metadata": {"name": "provider-kubernetes", "namespace": "crossplane-system"},
    })
    token = kube.core.create_namespaced_service_account_token(
        "provider-kubernetes", "crossplane-system",
        {"spec": {"audiences": [], "expirationSeconds": 86400}},
    ).status.token
    sa_dir = Path("/var/run/secrets/kubernetes.io/serviceaccount")
    sa_dir.mkdir(parents=True, exist_ok=True)
    (sa_dir / "token").write_text(token)
    (sa_dir / "ca.crt").write_bytes(cp.ca_pem)
    (sa_dir / "namespace").write_text("crossplane-system")
    # its webhook server (Object conversion only, not called here: see docs/live.md) needs a
    # serving certificate, which Crossplane writes for a provider package; any will do
    tls = cp.dir / "provider-kubernetes-tls"
    tls.mkdir(exist_ok=True)
    pki = cp.dir / "pki"
    (tls / "tls.crt").write_bytes((pki / "apiserver.crt").read_bytes())
    (tls / "tls.key").write_bytes((pki / "apiserver.key").read_bytes())
    (tls / "ca.crt").write_bytes(cp.ca_pem)
    procs.start(
        "provider-kubernetes",
        provider_kubernetes_command(bins["provider-kubernetes"]),
        env={
            "KUBECONFIG": str(cp.kubeconfig),
            "KUBERNETES_SERVICE_HOST": "127.0.0.1",
            "KUBERNETES_SERVICE_PORT": "6443",
            "POD_NAMESPACE": "crossplane-system",
            "TLS_SERVER_CERTS_DIR": str(tls),
        },
    )


# Gardener serves Shoot from its own aggregated API server and publishes no CRD: this stand-in
# CRD accepts any Shoot body (the unit tests validate Shoots against the derived schema).
SHOOT_CRD: dict[str, Any] = {
    "apiVersion": "apiextensions.k8s.io/v1",
    "kind": "CustomResourceDefinition",
    "metadata": {"name": "shoots.core.gardener.cloud"},
    "spec": {
        "group": "core.gardener.cloud",
        "names": {
            "kind": "Shoot", "plural": "shoots", "singular": "shoot", "listKind": "ShootList"
        },
        "scope": "Namespaced",
        "versions": [{
            "name": "v1beta1", "served": True, "storage": True,
            "subresources": {"status": {}},
            "schema": {"openAPIV3Schema": {"type": "object",
                                           "x-kubernetes-preserve-unknown-fields": True}},
        }],
    },
}


class OperatorStandIn:
    """Plays the operators whose objects provider-kubernetes applies (found through the
    Objects' manifests): Rook reports `status.phase: Ready` with the observed generation
    (rook pkg/apis/ceph.rook.io/v1 ConditionReady phase), KEDA, cert-manager, Flux and c5c3
    report a `Ready=True` condition, Gardener a Shoot's `lastOperation` Create/Succeeded and
    its health conditions (gardener docs/usage/shoot_status.md)."""

    MANAGER = "operator-stand-in"

    def __init__(self, kube: Kube) -> None:
        self.kube = kube
        self.loop = Loop("operator-stand-in", self.step)
        self._schemas: dict[tuple[str, str], dict[str, Any]] = {}

    def step(self) -> None:
        """One pass over the objects every provider-kubernetes Object manages."""
        for api_version in (
            "kubernetes.crossplane.io/v1alpha2",
            "kubernetes.m.crossplane.io/v1alpha1",
        ):
            for obj in self.kube.list(api_version, "Object"):
                m = ((obj.to_dict().get("spec") or {}).get("forProvider") or {}).get("manifest")
                if isinstance(m, dict):
                    self.reconcile(m, obj.metadata.namespace)

    def reconcile(self, manifest: dict[str, Any], object_ns: str | None) -> None:
        """Report the status the object's operator would report."""
        group = manifest["apiVersion"].split("/")[0] if "/" in manifest["apiVersion"] else ""
        if group not in {"ceph.rook.io", "keda.sh", "core.gardener.cloud", "c5c3.io",
                         "cert-manager.io", "helm.toolkit.fluxcd.io",
                         "kustomize.toolkit.fluxcd.io", "source.toolkit.fluxcd.io"}:
            return
        meta = manifest.get("metadata") or {}
        ns = meta.get("namespace") or object_ns
        live = self.kube.get(manifest["apiVersion"], manifest["kind"], meta["name"], ns)
        if live is None:
            return
        d = live.to_dict()
        gen = d["metadata"].get("generation", 1)
        old = d.get("status") or {}
        now = _now()
        ready = {"type": "Ready", "status": "True", "reason": "Ready",
                 "message": "stand-in", "lastTransitionTime": now}
        if group == "ceph.rook.io":
            status: dict[str, Any] = {"phase": "Ready", "observedGeneration": gen}
        elif group == "core.gardener.cloud":
            status = {
                "observedGeneration": gen,
                "lastOperation": {"type": "Create", "state": "Succeeded", "progress": 100,
                                  "lastUpdateTime": now, "description": "Shoot cluster created"},
                "conditions": [
                    {"type": t, "status": "True", "reason": "HealthCheckSucceeded",
                     "lastTransitionTime": now}
                    for t in ("APIServerAvailable", "ControlPlaneHealthy",
                              "ObservabilityComponentsHealthy", "EveryNodeReady",
                              "SystemComponentsHealthy")
                ],
            }
        else:
            status = {"observedGeneration": gen, "conditions": [ready]}
        # what the operator's CRD declares (KEDA's ScaledObject status has no
        # observedGeneration nor condition times: server-side apply refuses undeclared fields)
        key = (manifest["apiVersion"], manifest["kind"])
        if key not in self._schemas:
            self._schemas[key] = status_schema(self.kube, *key)
        status = prune(status, self._schemas[key])
        if _without_times(status) == _without_times(
                {k: old.get(k) for k in status}):
            return
        self.kube.patch_status(live, status, self.MANAGER)
