"""The GCP kinds this cloud module emits, declared once with their traits.

apiVersions are the STORAGE versions served by provider-upjet-gcp v3.0.0 (v3 removed the old
``v1beta1`` of every kind that has a ``v1beta2``). Labels go where the CRD really has a
top-level labels field in ``forProvider``: ``resourceLabels`` on the GKE Cluster, ``labels`` on
the DNS ManagedZone; compute networking and IAM kinds have none.
"""

from __future__ import annotations

from fnplatform.clouds.gcp.tags import GCP_LABELS
from fnplatform.kinds import Readiness, register

NETWORK = register("compute.gcp.upbound.io/v1beta1", "Network", readiness=Readiness.CONDITION)
SUBNETWORK = register("compute.gcp.upbound.io/v1beta2", "Subnetwork")
ROUTER = register("compute.gcp.upbound.io/v1beta2", "Router")
ROUTER_NAT = register("compute.gcp.upbound.io/v1beta2", "RouterNAT")
FIREWALL = register("compute.gcp.upbound.io/v1beta2", "Firewall")

# Losing the control plane or a node pool loses running workloads: stateful.
CLUSTER = register(
    "container.gcp.upbound.io/v1beta2",
    "Cluster",
    tag_style=GCP_LABELS,
    tags_field="resourceLabels",
    stateful=True,
)
# NodePool's labels live in nodeConfig.resourceLabels (not top-level): set by the builder.
NODE_POOL = register("container.gcp.upbound.io/v1beta2", "NodePool", stateful=True)

# A zone holds records other systems (cert-manager, external-dns, users) wrote: stateful.
MANAGED_ZONE = register(
    "dns.gcp.upbound.io/v1beta2",
    "ManagedZone",
    tag_style=GCP_LABELS,
    tags_field="labels",
    stateful=True,
)

SERVICE_ACCOUNT = register("cloudplatform.gcp.upbound.io/v1beta1", "ServiceAccount")
SERVICE_ACCOUNT_IAM_MEMBER = register(
    "cloudplatform.gcp.upbound.io/v1beta2", "ServiceAccountIAMMember"
)
PROJECT_IAM_MEMBER = register("cloudplatform.gcp.upbound.io/v1beta2", "ProjectIAMMember")

# Cloud SQL: the instance holds the data; its user labels live in settings.userLabels.
SQL_DATABASE_INSTANCE = register("sql.gcp.upbound.io/v1beta2", "DatabaseInstance", stateful=True)
SQL_DATABASE = register("sql.gcp.upbound.io/v1beta1", "Database", stateful=True)
BACKEND_BUCKET = register("compute.gcp.upbound.io/v1beta2", "BackendBucket")
URL_MAP = register("compute.gcp.upbound.io/v1beta2", "URLMap")
MANAGED_SSL_CERTIFICATE = register("compute.gcp.upbound.io/v1beta2", "ManagedSSLCertificate")
TARGET_HTTPS_PROXY = register("compute.gcp.upbound.io/v1beta1", "TargetHTTPSProxy")
GLOBAL_ADDRESS = register(
    "compute.gcp.upbound.io/v1beta1", "GlobalAddress", tag_style=GCP_LABELS, tags_field="labels"
)
GLOBAL_FORWARDING_RULE = register(
    "compute.gcp.upbound.io/v1beta2",
    "GlobalForwardingRule",
    tag_style=GCP_LABELS,
    tags_field="labels",
)
# -- storage, keys, failover (contact-center and environment) -------------------------------------
BUCKET = register(
    "storage.gcp.upbound.io/v1beta2",
    "Bucket",
    tag_style=GCP_LABELS,
    tags_field="labels",
    stateful=True,
)
BUCKET_IAM_MEMBER = register("storage.gcp.upbound.io/v1beta2", "BucketIAMMember")
# Cloud KMS never deletes key rings or keys (only key versions, after a delay): stateful.
KEY_RING = register("kms.gcp.upbound.io/v1beta1", "KeyRing", stateful=True)
CRYPTO_KEY = register(
    "kms.gcp.upbound.io/v1beta2",
    "CryptoKey",
    tag_style=GCP_LABELS,
    tags_field="labels",
    stateful=True,
)
CRYPTO_KEY_IAM_MEMBER = register("kms.gcp.upbound.io/v1beta2", "CryptoKeyIAMMember")
HEALTH_CHECK = register("compute.gcp.upbound.io/v1beta2", "HealthCheck")
RECORD_SET = register("dns.gcp.upbound.io/v1beta2", "RecordSet")
