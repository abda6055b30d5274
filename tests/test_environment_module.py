"""The environment module over gRPC: every cloud and size, the hold-back of the backend, the
connection Secret's delivery, status write-back, validation errors and convergence.

Every composed body is validated against the pinned provider CRDs (``schemas/crds``).
"""

from __future__ import annotations

import copy
import dataclasses
from typing import Any

import providersim
import pytest
from crossplane.function.proto.v1 import run_function_pb2 as fnv1
from fnplatform.clouds.aws.cdn import certificate_name as acm_certificate
from fnplatform.clouds.gcp.cdn import certificate_name
from fnplatform.library.cdn import CdnSpec

from tests.support.cases import (
    ENVIRONMENT_REGION,
    ENVIRONMENT_SETTINGS,
    converge,
    environment_case,
    environment_composite,
    environment_config,
)
from tests.support.controls import (
    BREAKAGES,
    READY_FALSE,
    SYNCED_FALSE,
    Breakage,
    broken,
    resolve,
)
from tests.support.harness import FunctionClient, Rendered, observed_ready, request, step_input
from tests.support.schemas import Catalog
from tests.support.table import case

CLOUDS = ("aws", "gcp", "azure")
SIZES = ("small", "medium", "large")
NAMESPACE = "payments-squad-k4x9p-environment"
ADMIN_NAMESPACE = "payments-squad-k4x9p-dbadmin"
SECRET = "db-connection-details"
ADMIN_SECRET = "db-admin-connection"
BUCKET = "acme-mfe-payments-7d3f9a12"
DB_KIND = {
    "aws": ("rds.aws.upbound.io/v1beta3", "Instance"),
    "gcp": ("sql.gcp.upbound.io/v1beta2", "DatabaseInstance"),
    "azure": ("dbforpostgresql.azure.upbound.io/v1beta2", "FlexibleServer"),
}
SECRETS = {"password": b"env-db-s3cr3t-pw-6b2e", "endpoint": b"db-s3cr3t-host.internal"}


def run(
    client: FunctionClient,
    composite: dict[str, Any],
    *,
    settings: dict[str, Any] | None = None,
    observed: dict[str, dict[str, Any]] | None = None,
    connection: dict[str, dict[str, bytes]] | None = None,
) -> Rendered:
    """One pass with the platform EnvironmentConfig (``settings`` replaces its data)."""
    env = environment_config("environment-platform", settings or ENVIRONMENT_SETTINGS)
    return client.run(
        request(
            composite,
            step_input("environment", environment=[{"name": "environment-platform"}]),
            observed=observed,
            observed_connection=connection,
            required={"environment-0": [env]},
        )
    )


def all_ready(rendered: Rendered) -> dict[str, dict[str, Any]]:
    """Every desired resource observed Ready as the simulated providers report it (the
    database with its address, the CDN with its domain)."""
    return {name: providersim.ready(body) for name, body in rendered.resources.items()}


def at_provider(observed: dict[str, Any], name: str) -> dict[str, Any]:
    """What the simulated provider reported for ``name``."""
    return dict(observed[name]["status"]["atProvider"])


def settle(
    client: FunctionClient, composite: dict[str, Any], **kwargs: Any
) -> tuple[Rendered, dict[str, dict[str, Any]]]:
    """Pass after pass with everything desired observed Ready, until nothing new appears
    (without connection details unless given): the state just before the backend."""
    observed: dict[str, dict[str, Any]] = {}
    rendered = run(client, composite, **kwargs)
    for _ in range(6):
        now = all_ready(rendered)
        if set(now) == set(observed):
            break
        observed = now
        rendered = run(client, composite, observed=observed, **kwargs)
    return rendered, observed


def assert_schema_valid(rendered: Rendered, catalog: Catalog) -> None:
    problems = {name: catalog.validate(body) for name, body in rendered.resources.items()}
    assert {name: p for name, p in problems.items() if p} == {}


def converged(client: FunctionClient, cloud: str) -> tuple[Rendered, dict[str, Any]]:
    return converge(client.run, environment_case(cloud))


# -- every cloud, every size --------------------------------------------------------------


@pytest.mark.parametrize("cloud", CLOUDS)
@pytest.mark.parametrize("size", SIZES)
def test_database_per_cloud_and_size_is_private_and_provider_passworded(
    client: FunctionClient, catalog: Catalog, cloud: str, size: str
) -> None:
    composite = environment_composite(cloud, database={"size": size})
    rendered, _ = settle(client, composite)
    assert rendered.fatal == []
    db = rendered.resource("database")
    assert (db["apiVersion"], db["kind"]) == DB_KIND[cloud]
    for_provider = db["spec"]["forProvider"]
    # the administrator's details go to the admin namespace only, never the app's
    assert db["spec"]["writeConnectionSecretToRef"] == {
        "name": ADMIN_SECRET,
        "namespace": ADMIN_NAMESPACE,
    }
    expected = {
        "aws": {"small": "db.t4g.micro", "medium": "db.t4g.medium", "large": "db.m6g.large"},
        "gcp": {
            "small": "db-custom-1-3840",
            "medium": "db-custom-2-7680",
            "large": "db-custom-4-15360",
        },
        "azure": {
            "small": "B_Standard_B1ms",
            "medium": "GP_Standard_D2ds_v5",
            "large": "GP_Standard_D4ds_v5",
        },
    }[cloud][size]
    if cloud == "aws":
        assert for_provider["instanceClass"] == expected
        assert for_provider["autoGeneratePassword"] is True
        assert for_provider["passwordSecretRef"]["namespace"] == "crossplane-system"
        assert for_provider["publiclyAccessible"] is False
        assert for_provider["multiAz"] is (size == "large")
        ingress = rendered.resource("database-ingress")["spec"]["forProvider"]
        assert (ingress["cidrIpv4"], ingress["fromPort"], ingress["toPort"]) == (
            "10.20.0.0/16",
            5432,
            5432,
        )
    elif cloud == "gcp":
        settings = for_provider["settings"]
        assert settings["tier"] == expected
        assert settings["ipConfiguration"]["ipv4Enabled"] is False
        assert settings["ipConfiguration"]["privateNetwork"].endswith("/networks/apps")
        assert for_provider["rootPasswordSecretRef"]["name"] == "cloudsql-root-password"
        assert settings["availabilityType"] == ("REGIONAL" if size == "large" else "ZONAL")
    else:
        assert for_provider["skuName"] == expected
        assert for_provider["autoGeneratePassword"] is True
        assert for_provider["publicNetworkAccessEnabled"] is False
        assert "delegatedSubnetId" in for_provider
        assert ("highAvailability" in for_provider) is (size == "large")
    text = str(rendered.resources)
    assert "s3cr3t" not in text and 'password": "' not in text
    assert_schema_valid(rendered, catalog)


# -- hold-back of the backend -------------------------------------------------------------


ADMIN_HOST_KEY = {"aws": "host", "gcp": "privateIP", "azure": "endpoint"}


def _manifest(rendered: Rendered, name: str) -> dict[str, Any]:
    manifest: dict[str, Any] = rendered.resource(name)["spec"]["forProvider"]["manifest"]
    return manifest


@pytest.mark.parametrize("cloud", CLOUDS)
def test_deployment_waits_for_the_apps_own_database_user(
    client: FunctionClient, catalog: Catalog, cloud: str
) -> None:
    composite = environment_composite(cloud)
    held, observed = settle(client, composite)
    assert "backend-deployment" not in held.resources and "db-user" not in held.resources
    composed = held.condition("Composed")
    assert composed is not None
    assert "db-user (waits for database connection details)" in composed.message
    assert "backend-service" in held.resources

    # the administrator's details exist: the Job creating the app's user runs, the app waits
    with_admin = run(client, composite, observed=observed, connection={"database": SECRETS})
    assert "backend-deployment" not in with_admin.resources
    composed = with_admin.condition("Composed")
    assert composed is not None and "backend-deployment (waits for db-user complete" in (
        composed.message
    )
    job_object = with_admin.resource("db-user")
    assert job_object["spec"]["readiness"]["policy"] == "DeriveFromCelQuery"
    assert "'Complete'" in job_object["spec"]["readiness"]["celQuery"]
    job = _manifest(with_admin, "db-user")
    assert job["metadata"]["namespace"] == ADMIN_NAMESPACE
    pod = job["spec"]["template"]["spec"]
    grant = {c["name"]: c for c in pod["containers"]}["grant"]
    env = {item["name"]: item for item in grant["env"]}
    assert env["DB_HOST"]["valueFrom"] == {
        "secretKeyRef": {"name": ADMIN_SECRET, "key": ADMIN_HOST_KEY[cloud]}
    }
    assert env["DB_PASSWORD"]["valueFrom"] == {
        "secretKeyRef": {"name": ADMIN_SECRET, "key": "password"}
    }
    assert env["APP_USER"] == {"name": "APP_USER", "value": "app"}
    observed["db-user"] = observed_ready(job_object)

    released = run(client, composite, observed=observed, connection={"database": SECRETS})
    deployment = released.resource("backend-deployment")
    manifest = deployment["spec"]["forProvider"]["manifest"]
    container = manifest["spec"]["template"]["spec"]["containers"][0]
    assert container["envFrom"] == [{"secretRef": {"name": SECRET}}]
    env = {item["name"]: item for item in container["env"]}
    # the same keys on every cloud: the Job writes them
    for name, key in (
        ("DB_HOST", "host"),
        ("DB_PORT", "port"),
        ("DB_USER", "username"),
        ("DB_PASSWORD", "password"),
        ("DB_NAME", "database"),
        ("PGSSLMODE", "sslmode"),
    ):  # libpq clients require TLS by themselves
        assert env[name]["valueFrom"] == {"secretKeyRef": {"name": SECRET, "key": key}}
    assert ADMIN_SECRET not in str(manifest)
    # the design's backend names no health path: the probes connect to its port
    assert container["readinessProbe"]["tcpSocket"] == {"port": "http"}
    assert container["livenessProbe"]["tcpSocket"] == {"port": "http"}
    assert manifest["spec"]["replicas"] == 2
    assert manifest["metadata"]["namespace"] == NAMESPACE
    assert deployment["spec"]["readiness"]["policy"] == "DeriveFromCelQuery"
    assert "s3cr3t" not in str(released.response)
    assert_schema_valid(released, catalog)


@pytest.mark.parametrize("cloud", CLOUDS)
def test_the_app_user_has_its_databases_privileges_only(client: FunctionClient, cloud: str) -> None:
    """Issue 22 item 19: a role of its own, CONNECT/TEMPORARY on its database and USAGE/CREATE
    on its public schema; the Job writes only the app's Secret; nothing else."""
    rendered, _ = converged(client, cloud)
    pod = _manifest(rendered, "db-user")["spec"]["template"]["spec"]
    grant_script = pod["containers"][0]["command"][-1]
    assert "CREATE ROLE %I LOGIN" in grant_script
    assert 'REVOKE ALL ON DATABASE :"db" FROM PUBLIC' in grant_script
    assert 'GRANT CONNECT, TEMPORARY ON DATABASE :"db" TO :"app_user"' in grant_script
    assert 'GRANT USAGE, CREATE ON SCHEMA public TO :"app_user"' in grant_script
    for word in (
        "SUPERUSER",
        "CREATEDB",
        "CREATEROLE",
        "cloudsqlsuperuser",
        "rds_superuser",
        "azure_pg_admin",
        "GRANT ALL",
    ):
        assert word not in grant_script.replace("NOT EXISTS", ""), word
    assert "PGSSLMODE=require" in grant_script
    credentials = pod["initContainers"][0]
    assert "/dev/urandom" in credentials["command"][-1]
    assert "--from-file=password=" in credentials["command"][-1]  # never on a command line
    assert {item["name"] for item in credentials["env"]} >= {"DB_HOST", "DB_PORT"}
    assert "DB_PASSWORD" not in {item["name"] for item in credentials["env"]}
    for container in [*pod["initContainers"], *pod["containers"]]:
        assert container["securityContext"]["allowPrivilegeEscalation"] is False
        assert container["securityContext"]["readOnlyRootFilesystem"] is True
    assert pod["securityContext"]["runAsNonRoot"] is True
    assert pod["serviceAccountName"] == "db-user"
    role = _manifest(rendered, "db-user-role")
    assert role["metadata"]["namespace"] == NAMESPACE
    assert role["rules"] == [
        {"apiGroups": [""], "resources": ["secrets"], "verbs": ["create"]},
        {
            "apiGroups": [""],
            "resources": ["secrets"],
            "resourceNames": [SECRET],
            "verbs": ["get", "patch", "update"],
        },
    ]
    binding = _manifest(rendered, "db-user-binding")
    assert binding["subjects"] == [
        {"kind": "ServiceAccount", "name": "db-user", "namespace": ADMIN_NAMESPACE}
    ]
    assert rendered.status["pending"] == []


def test_the_user_job_is_a_new_job_when_it_changes(client: FunctionClient) -> None:
    """A Job's pod template is immutable: another image is a new Job, not a refused update."""
    rendered, observed = converged(client, "aws")
    before = _manifest(rendered, "db-user")["metadata"]["name"]
    settings = copy.deepcopy(ENVIRONMENT_SETTINGS)
    settings["databaseUser"] = {"postgresImage": "registry.acme.example/postgres:17.6-alpine"}
    again = run(
        client,
        environment_composite("aws"),
        settings=settings,
        observed=observed,
        connection={"database": SECRETS},
    )
    job = _manifest(again, "db-user")
    assert job["metadata"]["name"] != before and job["metadata"]["name"].startswith("db-user-")
    assert job["spec"]["template"]["spec"]["containers"][0]["image"] == (
        "registry.acme.example/postgres:17.6-alpine"
    )
    assert "backend-deployment" in again.resources  # the running app is not taken away


def test_an_existing_deployment_is_kept_when_details_are_briefly_unobserved(
    client: FunctionClient,
) -> None:
    _, observed = converged(client, "aws")
    assert "backend-deployment" in observed
    again = run(client, environment_composite("aws"), observed=observed)  # no details now
    assert "backend-deployment" in again.resources


def test_on_another_cluster_the_secret_is_copied_at_apply_time(
    client: FunctionClient, catalog: Catalog
) -> None:
    settings = {**ENVIRONMENT_SETTINGS, "appCluster": {"providerConfig": "apps-eu-west-1"}}
    composite = environment_composite("aws")
    first = run(client, composite, settings=settings)
    assert first.resource("namespace")["spec"]["providerConfigRef"] == {"name": "apps-eu-west-1"}
    settled, observed = settle(client, composite, settings=settings)
    db = settled.resource("database")
    source = db["spec"]["writeConnectionSecretToRef"]
    assert source == {
        "name": "payments-squad-k4x9p-database-connection",
        "namespace": "crossplane-system",
    }

    details = {"database": SECRETS}
    with_details = run(client, composite, settings=settings, observed=observed, connection=details)
    copy_object = with_details.resource("db-connection")
    assert copy_object["spec"]["providerConfigRef"] == {"name": "apps-eu-west-1"}
    manifest = copy_object["spec"]["forProvider"]["manifest"]
    assert (manifest["kind"], manifest["metadata"]) == (
        "Secret",
        {"name": ADMIN_SECRET, "namespace": ADMIN_NAMESPACE},
    )
    assert "data" not in manifest  # the provider patches it in; it never passes through here
    assert copy_object["spec"]["references"] == [
        {
            "patchesFrom": {
                "apiVersion": "v1",
                "kind": "Secret",
                "name": source["name"],
                "namespace": "crossplane-system",
                "fieldPath": "data",
            },
            "toFieldPath": "data",
        }
    ]
    assert "db-user" not in with_details.resources  # the copy is not Ready yet
    assert "backend-deployment" not in with_details.resources
    assert_schema_valid(with_details, catalog)

    observed["db-connection"] = observed_ready(copy_object)
    copied = run(client, composite, settings=settings, observed=observed, connection=details)
    job = copied.resource("db-user")
    assert job["spec"]["providerConfigRef"] == {"name": "apps-eu-west-1"}
    observed["db-user"] = observed_ready(job)
    ready = run(client, composite, settings=settings, observed=observed, connection=details)
    deployment = ready.resource("backend-deployment")
    assert deployment["spec"]["providerConfigRef"] == {"name": "apps-eu-west-1"}


# -- status write-back and convergence ----------------------------------------------------


@pytest.mark.parametrize("cloud", CLOUDS)
def test_converges_to_ready_with_status_from_observed_state(
    client: FunctionClient, catalog: Catalog, cloud: str
) -> None:
    rendered, observed = converged(client, cloud)
    assert rendered.fatal == []
    assert {"namespace", "database", "backend-deployment", "backend-service"} <= set(observed)
    status = rendered.status
    assert status["namespace"] == NAMESPACE
    host = {"aws": "address", "gcp": "privateIpAddress", "azure": "fqdn"}[cloud]
    assert status["databaseHost"] == at_provider(observed, "database")[host]
    assert status["backendService"] == f"backend.{NAMESPACE}.svc.cluster.local:8000"
    assert status["frontendBucketName"] == {"azure": "acmemfepayments7d3f9a12"}.get(cloud, BUCKET)
    assert (
        status["cdnDomainName"]
        == {
            "aws": lambda: at_provider(observed, "cdn")["domainName"],
            "gcp": lambda: "payments.apps.acme.example",  # the platform's domain: no CDN host
            "azure": lambda: at_provider(observed, "cdn")["hostName"],
        }[cloud]()
    )
    assert status["ready"] is True
    assert status["pending"] == []
    condition = rendered.condition("PartsReady")
    assert condition is not None
    assert condition.reason == "AllPartsReady"
    assert_schema_valid(rendered, catalog)


def test_pending_parts_are_named_until_ready(client: FunctionClient) -> None:
    rendered = run(client, environment_composite("aws"))
    assert rendered.status["ready"] is False
    assert {"namespace", "database", "backend"} <= set(rendered.status["pending"])
    condition = rendered.condition("PartsReady")
    assert condition is not None
    assert condition.reason == "Pending"
    assert "database" in condition.message


def test_the_same_request_gives_the_same_bytes(client: FunctionClient) -> None:
    _, observed = converged(client, "gcp")
    one = run(client, environment_composite("gcp"), observed=observed)
    two = run(client, environment_composite("gcp"), observed=copy.deepcopy(observed))
    assert one.response.SerializeToString(deterministic=True) == two.response.SerializeToString(
        deterministic=True
    )


def test_app_name_cannot_change_once_the_bucket_exists(client: FunctionClient) -> None:
    rendered, observed = converged(client, "gcp")
    composite = environment_composite("gcp")
    composite["status"] = rendered.status
    composite["spec"]["frontend"]["appName"] = "payments-v2"
    renamed = run(client, composite, observed=observed)
    assert len(renamed.fatal) == 1
    assert "spec.frontend.appName" in renamed.fatal[0]
    assert "acme-mfe-payments-7d3f9a12" in renamed.fatal[0]


# -- validation ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("mutate", "field"),
    [
        case(
            "a database size outside the offered sizes is refused naming spec.database.size",
            lambda s: s["database"].update(size="huge"),
            "spec.database.size",
        ),
        case(
            "a backend without its image cannot be deployed: refused naming spec.backend.image",
            lambda s: s["backend"].pop("image"),
            "spec.backend.image",
        ),
        case(
            "an app name with upper case and underscores cannot be part of bucket and DNS "
            "names: refused naming spec.frontend.appName",
            lambda s: s["frontend"].update(appName="Payments_App"),
            "spec.frontend.appName",
        ),
        case(
            "an app name longer than bucket names leave room for is refused naming "
            "spec.frontend.appName",
            lambda s: s["frontend"].update(appName="p" * 46),
            "spec.frontend.appName",
        ),
        case(
            "two micro-frontends on the same path would shadow each other: refused naming "
            "spec.frontend.microFrontends",
            lambda s: s["frontend"]["microFrontends"].append({"name": "again", "path": "/wallet"}),
            "spec.frontend.microFrontends",
        ),
        case(
            "a cloud the module does not compose for is refused naming spec.cloud",
            lambda s: s.update(cloud="mars"),
            "spec.cloud",
        ),
        case(
            "without a region nothing can be placed: refused naming spec.region",
            lambda s: s.pop("region"),
            "spec.region",
        ),
        case(
            "port 0 is no port a backend can listen on: refused naming spec.backend.port",
            lambda s: s["backend"].update(port=0),
            "spec.backend.port",
        ),
    ],
    ids=[
        "bad-size",
        "no-image",
        "bad-app-name",
        "app-name-too-long",
        "duplicate-path",
        "bad-cloud",
        "no-region",
        "bad-port",
    ],
)
def test_bad_input_is_a_fatal_result_naming_the_field(
    client: FunctionClient, mutate: Any, field: str
) -> None:
    composite = environment_composite("aws")
    mutate(composite["spec"])
    rendered = run(client, composite)
    assert len(rendered.fatal) == 1
    assert field in rendered.fatal[0]
    assert "Traceback" not in rendered.fatal[0]


@pytest.mark.parametrize(
    ("cloud", "drop", "field"),
    [
        case(
            "AWS databases join the platform's private networks: without them the fatal "
            "result names environment.aws.privateNetworks",
            "aws",
            "privateNetworks",
            "environment.aws.privateNetworks",
        ),
        case(
            "GCP Cloud SQL peers with the platform's private network: without it the "
            "fatal result names environment.gcp.privateNetwork",
            "gcp",
            "privateNetwork",
            "environment.gcp.privateNetwork",
        ),
        case(
            "GCP resources need the platform's project: without it the fatal result names "
            "environment.gcp.project",
            "gcp",
            "project",
            "environment.gcp.project",
        ),
        case(
            "Azure databases join delegated subnets of the platform's networks: without "
            "them the fatal result names environment.azure.privateNetworks",
            "azure",
            "privateNetworks",
            "environment.azure.privateNetworks",
        ),
        case(
            "Azure resources go in the platform's resource group: without it the fatal "
            "result names environment.azure.resourceGroup",
            "azure",
            "resourceGroup",
            "environment.azure.resourceGroup",
        ),
    ],
)
def test_missing_platform_settings_name_the_environment_key(
    client: FunctionClient, cloud: str, drop: str, field: str
) -> None:
    settings = copy.deepcopy(ENVIRONMENT_SETTINGS)
    del settings[cloud][drop]
    rendered, _ = settle(client, environment_composite(cloud), settings=settings)
    assert len(rendered.fatal) == 1
    assert field in rendered.fatal[0]


# -- the design's own backend and bucket names (issue 22 items 14 and 16) -------------------


def _backend(client: FunctionClient, cloud: str, **backend: Any) -> dict[str, Any]:
    composite = environment_composite(cloud)
    composite["spec"]["backend"] = {**composite["spec"]["backend"], **backend}
    settled, _ = converge(
        client.run, dataclasses.replace(environment_case(cloud), composite=composite)
    )
    deployment = settled.resource("backend-deployment")["spec"]["forProvider"]["manifest"]
    return deployment["spec"]["template"]["spec"]["containers"][0]


@pytest.mark.parametrize("cloud", CLOUDS)
def test_the_backend_is_probed_on_its_port_unless_it_names_a_health_path(
    client: FunctionClient, cloud: str
) -> None:
    container = _backend(client, cloud)  # the design's backend serves no /healthz
    assert container["readinessProbe"]["tcpSocket"] == {"port": "http"}
    assert container["livenessProbe"]["tcpSocket"] == {"port": "http"}
    assert "httpGet" not in container["readinessProbe"]
    named = _backend(client, cloud, healthPath="/ready")
    assert named["readinessProbe"]["httpGet"] == {"path": "/ready", "port": "http"}
    off = _backend(client, cloud, probes=False)
    assert "readinessProbe" not in off and "livenessProbe" not in off


@pytest.mark.parametrize("cloud", CLOUDS)
def test_the_asset_bucket_takes_the_platforms_prefix(client: FunctionClient, cloud: str) -> None:
    settings = copy.deepcopy(ENVIRONMENT_SETTINGS)
    settings["frontend"]["bucketPrefix"] = "globex-web"
    rendered = run(client, environment_composite(cloud), settings=settings)
    bucket = rendered.resource("assets")
    names = [
        bucket["metadata"].get("annotations", {}).get("crossplane.io/external-name"),
        bucket["spec"]["forProvider"].get("name"),
        bucket["metadata"]["name"],
    ]
    assert any(n and n.replace("-", "").startswith("globexwebpayments") for n in names), names
    assert not any(n and "acme" in n for n in names), names


@pytest.mark.parametrize(
    ("prefix", "message"),
    [
        case(
            "bucket names are global: without a platform prefix the fatal result says why "
            "one is required and gives an example",
            None,
            "environment.frontend.bucketPrefix: required: asset buckets are named "
            "<prefix>-<appName>-<8 hex>, and S3 and GCS bucket names are global, so the "
            "platform names its own prefix (e.g. acme-mfe)",
        ),
        case(
            "S3 and GCS reserve names starting with goog: such a prefix is refused before "
            "a bucket is created and fails",
            "goog-apps",
            "environment.frontend.bucketPrefix: must not start with goog: S3 or GCS reserves it",
        ),
        case(
            "an upper-case prefix cannot be in a bucket name: refused saying which "
            "characters are allowed",
            "Acme",
            "environment.frontend.bucketPrefix: must be lowercase letters, digits and '-', "
            "starting and ending with a letter or digit",
        ),
    ],
)
def test_a_bucket_prefix_no_cloud_accepts_is_refused(
    client: FunctionClient, prefix: str | None, message: str
) -> None:
    settings = copy.deepcopy(ENVIRONMENT_SETTINGS)
    settings["frontend"].pop("bucketPrefix")
    if prefix is not None:
        settings["frontend"]["bucketPrefix"] = prefix
    rendered = run(client, environment_composite("aws"), settings=settings)
    assert rendered.fatal == [message]


def test_a_long_prefix_leaves_less_room_for_the_app_name(client: FunctionClient) -> None:
    settings = copy.deepcopy(ENVIRONMENT_SETTINGS)
    settings["frontend"]["bucketPrefix"] = "p" * 20
    composite = environment_composite("aws")
    composite["spec"]["frontend"]["appName"] = "a" * 40
    (message,) = run(client, composite, settings=settings).fatal
    assert message.startswith(
        "spec.frontend.appName: at most 33 characters with the "
        f"platform's bucket prefix {'p' * 20!r}"
    )


# -- private networks per region, a default region (issue 22 item 15) ------------------------

PER_REGION = {
    "aws": {
        "eu-west-1": ENVIRONMENT_SETTINGS["aws"]["privateNetworks"]["eu-west-1"],
        "us-east-1": {
            "vpcId": "vpc-0b2c3d4e5f6071829",
            "cidr": "10.30.0.0/16",
            "subnetIds": ["subnet-0123456789abcdef0", "subnet-0fedcba9876543210"],
        },
    },
    "gcp": {
        "europe-west1": ENVIRONMENT_SETTINGS["gcp"]["privateNetwork"],
        "us-east1": {"network": "projects/acme-apps-prod/global/networks/apps-us"},
    },
    "azure": {
        "westeurope": ENVIRONMENT_SETTINGS["azure"]["privateNetworks"]["westeurope"],
        "eastus": {
            "virtualNetworkId": "/subscriptions/0/resourceGroups/net/providers/"
            "Microsoft.Network/virtualNetworks/apps-eastus",
            "databaseSubnetId": "/subscriptions/0/resourceGroups/net/providers/"
            "Microsoft.Network/virtualNetworks/apps-eastus/subnets/pg",
        },
    },
}
OTHER_REGION = {"aws": "us-east-1", "gcp": "us-east1", "azure": "eastus"}


def _per_region(cloud: str, default: str | None = None) -> dict[str, Any]:
    settings = copy.deepcopy(ENVIRONMENT_SETTINGS)
    section = settings[cloud]
    section.pop("privateNetwork", None)
    section["privateNetworks"] = copy.deepcopy(PER_REGION[cloud])
    if default:
        section["defaultRegion"] = default
    return settings


@pytest.mark.parametrize("cloud", CLOUDS)
def test_the_database_joins_the_private_network_of_its_region(
    client: FunctionClient, cloud: str
) -> None:
    composite = environment_composite(cloud)
    composite["spec"]["region"] = OTHER_REGION[cloud]
    rendered, _ = settle(client, composite, settings=_per_region(cloud))
    assert not rendered.fatal, rendered.fatal
    assert "database" in rendered.resources
    text = str(rendered.resources)
    other = PER_REGION[cloud][OTHER_REGION[cloud]]
    marker = {
        "aws": other.get("subnetIds", [""])[0],
        "gcp": other.get("network", ""),
        "azure": other.get("databaseSubnetId", ""),
    }[cloud]
    assert marker in text
    home = next(iter(PER_REGION[cloud].values()))
    assert str(next(iter(home.values()))) not in text or cloud == "gcp"


@pytest.mark.parametrize("cloud", CLOUDS)
def test_a_region_without_a_private_network_is_refused_naming_the_configured_ones(
    client: FunctionClient, cloud: str
) -> None:
    composite = environment_composite(cloud)
    composite["spec"]["region"] = (
        "ap-south-1" if cloud == "aws" else ("asia-south1" if cloud == "gcp" else "centralindia")
    )
    rendered = run(client, composite, settings=_per_region(cloud))
    configured = ", ".join(sorted(PER_REGION[cloud]))
    assert rendered.fatal == [
        f"spec.region: {composite['spec']['region']} has no private network on {cloud}; the "
        f"platform configures {configured} (environment.{cloud}.privateNetworks)"
    ]
    assert not rendered.resources


@pytest.mark.parametrize(
    ("cloud", "key", "value"),
    [
        case(
            "an AWS VPC id that is not vpc-<hex> is refused on the region entry the platform wrote",
            "aws",
            "vpcId",
            "vpc-NOT-HEX",
        ),
        case(
            "an Azure subnet id that is no resource id is refused on the region entry the "
            "platform wrote",
            "azure",
            "databaseSubnetId",
            "not-a-subnet-id",
        ),
        case(
            "a GCP allocated IP range that is no resource name is refused on the region "
            "entry the platform wrote",
            "gcp",
            "allocatedIpRange",
            "Not_A_Name",
        ),
    ],
)
def test_a_bad_network_is_an_error_on_the_region_entry_the_platform_wrote(
    client: FunctionClient, cloud: str, key: str, value: str
) -> None:
    """The builder reads the network the composer chose (``DatabaseSpec.network``) with the
    field it came from: an error names ``privateNetworks.<region>``, where it is written."""
    settings = _per_region(cloud)
    region = ENVIRONMENT_REGION[cloud]
    settings[cloud]["privateNetworks"][region][key] = value
    rendered, _ = settle(client, environment_composite(cloud), settings=settings)
    assert len(rendered.fatal) == 1
    assert rendered.fatal[0].startswith(f"environment.{cloud}.privateNetworks.{region}.{key}: "), (
        rendered.fatal
    )


@pytest.mark.parametrize(
    ("cloud", "both"),
    [
        case(
            "AWS VPC ids do not say their region: one network for every region is "
            "refused, pointing to the per-region form",
            "aws",
            False,
        ),
        case(
            "Azure VNet ids do not say their region: one network for every region is "
            "refused the same way",
            "azure",
            False,
        ),
        case(
            "the single form next to the per-region form is refused too, rather than one "
            "silently winning",
            "aws",
            True,
        ),
    ],
)
def test_one_network_for_every_region_is_refused_where_networks_are_regional(
    client: FunctionClient, cloud: str, both: bool
) -> None:
    """An AWS VPC's or Azure VNet's region is not in its ids, so the single form could put a
    database in one region on another region's subnets, refused only by the cloud: it is
    refused up front, saying where to move it (also next to the per-region form)."""
    settings = copy.deepcopy(ENVIRONMENT_SETTINGS)
    section = settings[cloud]
    region = ENVIRONMENT_REGION[cloud]
    section["privateNetwork"] = section["privateNetworks"][region]
    if not both:
        del section["privateNetworks"]
    rendered = run(client, environment_composite(cloud), settings=settings)
    assert rendered.fatal == [
        f"environment.{cloud}.privateNetwork: one network for every region is not accepted on "
        f"{cloud}: a database must join a network in its own region, and the network's ids do "
        f"not say which region that is (a database in another region would fail only when "
        f"{cloud} creates it); name it by its region instead: environment.{cloud}."
        f"privateNetworks.<region> (this claim asks for {region})"
    ]
    assert not rendered.resources


def test_one_gcp_network_serves_every_region(client: FunctionClient) -> None:
    """A GCP VPC network is global and Cloud SQL takes a subnet of its private services range
    in the instance's own region, so the single form is right for a claim in any region."""
    composite = environment_composite("gcp")
    composite["spec"]["region"] = OTHER_REGION["gcp"]
    rendered, _ = settle(client, composite)
    assert rendered.fatal == [], rendered.messages
    database = rendered.resource("database")["spec"]["forProvider"]
    assert database["region"] == OTHER_REGION["gcp"]
    assert (
        database["settings"]["ipConfiguration"]["privateNetwork"]
        == (ENVIRONMENT_SETTINGS["gcp"]["privateNetwork"]["network"])
    )


def test_the_documents_claim_without_a_region_takes_the_platform_default(
    client: FunctionClient,
) -> None:
    composite = environment_composite("aws")
    del composite["spec"]["region"]
    settings = _per_region("aws", default="eu-west-1")
    rendered, _ = settle(client, composite, settings=settings)
    assert not rendered.fatal, rendered.fatal
    assert rendered.resource("database")["spec"]["forProvider"]["region"] == "eu-west-1"
    del settings["aws"]["defaultRegion"]
    assert run(client, composite, settings=settings).fatal == [
        "spec.region: required: the platform sets no environment.aws.defaultRegion"
    ]


# -- deletion always finishes; the environment class says what stays (issue 22 item 18) -----


@pytest.mark.parametrize("cloud", CLOUDS)
def test_by_default_deleting_an_environment_keeps_its_data_and_says_so(
    client: FunctionClient, cloud: str
) -> None:
    settled, _ = converge(client.run, environment_case(cloud))
    database, bucket = settled.resource("database"), settled.resource("assets")
    assert database["spec"]["deletionPolicy"] == bucket["spec"]["deletionPolicy"] == "Orphan"
    objects = [n for n, b in settled.resources.items() if b["kind"] == "Object"]
    assert all("deletionPolicy" not in settled.resource(n)["spec"] for n in objects)
    kept = settled.condition("DataOnDelete")
    assert kept is not None and kept.reason == "KeptOnDelete" and "database" in kept.message
    if cloud == "aws":  # the cloud refuses to delete these while the kept database exists
        for name in ("database-subnet-group", "database-security-group"):
            assert settled.resource(name)["spec"]["deletionPolicy"] == "Orphan"
        assert database["spec"]["forProvider"]["skipFinalSnapshot"] is False


@pytest.mark.parametrize("cloud", CLOUDS)
def test_an_environment_class_may_delete_everything(client: FunctionClient, cloud: str) -> None:
    settings = copy.deepcopy(ENVIRONMENT_SETTINGS)
    settings["dataOnDelete"] = "delete"
    settled, _ = settle(client, environment_composite(cloud), settings=settings)
    assert all("deletionPolicy" not in body["spec"] for body in settled.resources.values())
    if cloud in ("aws", "gcp"):  # a bucket holding objects is deleted with them
        assert settled.resource("assets")["spec"]["forProvider"]["forceDestroy"] is True
    if cloud == "aws":
        database = settled.resource("database")["spec"]["forProvider"]
        assert database["skipFinalSnapshot"] is True and "finalSnapshotIdentifier" not in database
    condition = settled.condition("DataOnDelete")
    assert condition is not None and condition.reason == "DeletedWithEnvironment"


def test_the_namespaced_form_keeps_data_by_management_policies(client: FunctionClient) -> None:
    """v2 namespaced managed resources have no deletionPolicy: no Delete policy instead."""
    from tests.support.cases import namespaced_twin

    settled, _ = converge(client.run, namespaced_twin(environment_case("aws")))
    for name in ("assets", "database-subnet-group", "database-parameters-16"):
        spec = settled.resource(name)["spec"]
        assert "deletionPolicy" not in spec
        assert spec["managementPolicies"] == ["Observe", "Create", "Update", "LateInitialize"]
    # the instance's own narrower policies (no LateInitialize, docs/drift.md) stay narrow
    database = settled.resource("database")["spec"]
    assert "deletionPolicy" not in database
    assert database["managementPolicies"] == ["Observe", "Create", "Update"]


# -- the frontends reach the backend through the same CDN (issue 22 item 17) ----------------

API_HOST = "payments-7d3f9a12.api.apps.acme.example"
GCP_API_BACKEND = "projects/acme-apps-prod/global/backendServices/platform-ingress"


def _with_api(**extra: Any) -> dict[str, Any]:
    settings = copy.deepcopy(ENVIRONMENT_SETTINGS)
    settings["api"] = {
        "originDomain": "api.apps.acme.example",
        "ingressClassName": "nginx",
        "gcpBackendService": GCP_API_BACKEND,
        **extra,
    }
    return settings


@pytest.mark.parametrize("cloud", CLOUDS)
def test_the_cdn_sends_api_to_the_backend_on_the_platforms_ingress(
    client: FunctionClient, catalog: Catalog, cloud: str
) -> None:
    rendered, _ = settle(client, environment_composite(cloud), settings=_with_api())
    assert rendered.fatal == []
    ingress = _manifest(rendered, "backend-ingress")
    assert ingress["kind"] == "Ingress" and ingress["metadata"]["namespace"] == NAMESPACE
    assert ingress["spec"]["ingressClassName"] == "nginx"
    (rule,) = ingress["spec"]["rules"]
    assert rule["host"] == API_HOST
    assert rule["http"]["paths"] == [
        {
            "path": "/api",
            "pathType": "Prefix",
            "backend": {"service": {"name": "backend", "port": {"name": "http"}}},
        }
    ]
    if cloud == "aws":
        distribution = rendered.resource("cdn")["spec"]["forProvider"]
        api = next(o for o in distribution["origin"] if o["originId"] == "api")
        assert api["domainName"] == API_HOST
        assert api["customOriginConfig"]["originProtocolPolicy"] == "https-only"
        assert api["customOriginConfig"]["originSslProtocols"] == ["TLSv1.2"]
        first = distribution["orderedCacheBehavior"][0]
        assert (first["pathPattern"], first["targetOriginId"]) == ("/api/*", "api")
        assert first["cachePolicyId"] == "4135ea2d-6df8-44a3-9df3-4b5a84be39ad"  # disabled
        assert "POST" in first["allowedMethods"]
        assert first["viewerProtocolPolicy"] == "https-only"
    elif cloud == "gcp":
        (matcher,) = rendered.resource("cdn")["spec"]["forProvider"]["pathMatcher"]
        api = matcher["pathRule"][0]
        assert api == {
            "paths": ["/api/*"],
            "service": GCP_API_BACKEND,
            "routeAction": {"urlRewrite": {"hostRewrite": API_HOST}},
        }
    else:
        origin = rendered.resource("cdn-api-origin")["spec"]["forProvider"]
        assert (origin["hostName"], origin["originHostHeader"]) == (API_HOST, API_HOST)
        assert origin["certificateNameCheckEnabled"] is True
        route = rendered.resource("cdn-route-api")["spec"]["forProvider"]
        assert route["patternsToMatch"] == ["/api/*"]
        assert route["supportedProtocols"] == ["Https"] and "cache" not in route
    assert_schema_valid(rendered, catalog)


def test_without_api_settings_nothing_is_routed_to_the_backend(client: FunctionClient) -> None:
    rendered, _ = settle(client, environment_composite("aws"))
    assert "backend-ingress" not in rendered.resources
    assert len(rendered.resource("cdn")["spec"]["forProvider"]["origin"]) == 1


def test_gcp_without_a_backend_service_says_so(client: FunctionClient) -> None:
    settings = _with_api()
    del settings["api"]["gcpBackendService"]
    rendered, _ = settle(client, environment_composite("gcp"), settings=settings)
    assert rendered.fatal == []
    gap = rendered.condition("CapabilitiesAvailable")
    assert (
        gap is not None and "cdn-api: " in gap.message and "api.gcpBackendService" in (gap.message)
    )
    assert rendered.resource("backend-ingress")  # the ingress is there for when it is set


def test_a_micro_frontend_may_not_take_the_api_path(client: FunctionClient) -> None:
    composite = environment_composite("aws")
    composite["spec"]["frontend"]["microFrontends"].append({"name": "api", "path": "/api"})
    (message,) = run(client, composite, settings=_with_api()).fatal
    assert message.startswith("spec.frontend.microFrontends")
    assert "/api is the backend's path on the CDN" in message


# -- custom CDN domains with their certificates (issue 22 item 17) --------------------------

DOMAINS = ["shop.example.com", "www.shop.example.com"]
ZONES: dict[str, dict[str, Any]] = {
    "aws": {"cdnDomains": {"hostedZoneId": "Z0123456789ABCDEFGHIJ"}},
    "gcp": {"cdnDomains": {"managedZone": "example-com"}},
    "azure": {
        "cdnDomains": {
            "dnsZoneId": "/subscriptions/00000000-0000-0000-0000-000000000000/"
            "resourceGroups/acme-dns/providers/Microsoft.Network/dnsZones/"
            "example.com"
        }
    },
}


def _domain_case(
    cloud: str, *, zone: bool, issued: bool = True, settings: dict[str, Any] | None = None
) -> Any:
    """The payments environment with custom domains, providers reporting what they would
    (platform/providersim/simulation.py); ``issued`` False: the certificate is not issued yet."""
    settings = copy.deepcopy(settings or ENVIRONMENT_SETTINGS)
    if zone:
        settings[cloud] = {**settings[cloud], **ZONES[cloud]}
    composite = environment_composite(cloud)
    composite["spec"]["frontend"]["customDomains"] = DOMAINS
    status: dict[str, Any] = {}
    if cloud == "aws" and not issued:  # ACM validates: the records exist, no certificate yet
        status[acm_certificate("cdn", tuple(DOMAINS))] = {
            "atProvider": {"status": "PENDING_VALIDATION"}
        }
    elif cloud == "gcp" and not issued:  # a managed certificate reports no expiry until issued
        hostname = (
            None
            if settings["frontend"].get("domain") is None
            else (f"payments.{settings['frontend']['domain']}")
        )
        current = certificate_name(
            "cdn",
            CdnSpec(
                bucket="assets", bucket_name="-", hostname=hostname, custom_domains=tuple(DOMAINS)
            ),
        )
        status[current] = {"atProvider": {"expireTime": None}}
    return dataclasses.replace(
        environment_case(cloud),
        composite=composite,
        environment=(environment_config("environment-platform", settings),),
        observed_status=status,
    )


@pytest.mark.parametrize("zone", [True, False], ids=["zone", "no-zone"])
@pytest.mark.parametrize("cloud", CLOUDS)
def test_custom_domains_are_served_with_their_certificates(
    client: FunctionClient, catalog: Catalog, cloud: str, zone: bool
) -> None:
    rendered, _ = converge(client.run, _domain_case(cloud, zone=zone))
    assert rendered.fatal == []
    assert_schema_valid(rendered, catalog)
    domains = rendered.status["customDomains"]
    assert [d["host"] for d in domains] == DOMAINS
    assert all(d["ready"] for d in domains), domains
    assert all(("dnsRecords" in d) is not zone for d in domains), domains
    condition = rendered.condition("CustomDomainsReady")
    assert condition is not None and condition.reason == "Served"
    kinds = {body["kind"] for body in rendered.resources.values()}
    dns = {"aws": {"Record"}, "gcp": {"RecordSet"}, "azure": {"DNSTXTRecord", "DNSCNAMERecord"}}
    assert (dns[cloud] <= kinds) is zone
    certificate = {
        "aws": "Certificate",
        "gcp": "ManagedSSLCertificate",
        "azure": "FrontdoorCustomDomain",
    }[cloud]
    assert certificate in kinds


def test_without_a_zone_the_claim_names_the_dns_records_the_platform_must_create(
    client: FunctionClient,
) -> None:
    rendered, observed = converge(client.run, _domain_case("aws", zone=False, issued=False))
    assert rendered.fatal == []
    validation = at_provider(observed, acm_certificate("cdn", tuple(DOMAINS)))[
        "domainValidationOptions"
    ][0]
    record = validation["resourceRecordName"].rstrip(".")
    cdn = at_provider(observed, "cdn")["domainName"]
    distribution = rendered.resource("cdn")["spec"]["forProvider"]
    assert "aliases" not in distribution  # CloudFront refuses aliases without a valid certificate
    condition = rendered.condition("CustomDomainsReady")
    assert condition is not None and condition.reason == "DnsRecordsNeeded"
    assert record in condition.message
    assert f"CNAME shop.example.com {cdn}" in condition.message
    assert rendered.status["customDomains"][0] == {
        "host": "shop.example.com",
        "ready": False,
        "dnsRecords": [
            {"name": record, "type": "CNAME", "value": validation["resourceRecordValue"]},
            {"name": "shop.example.com", "type": "CNAME", "value": cdn},
        ],
    }


def test_custom_domains_make_gcps_platform_domain_unnecessary(client: FunctionClient) -> None:
    settings = copy.deepcopy(ENVIRONMENT_SETTINGS)
    del settings["frontend"]["domain"]
    rendered, _ = converge(
        client.run, _domain_case("gcp", zone=True, issued=False, settings=settings)
    )
    assert rendered.fatal == []
    gap = rendered.condition("CapabilitiesAvailable")
    assert gap is None or "cdn:" not in gap.message
    (certificate,) = [
        b for b in rendered.resources.values() if b["kind"] == "ManagedSSLCertificate"
    ]
    assert certificate["spec"]["forProvider"]["managed"]["domains"] == DOMAINS


@pytest.mark.parametrize("cloud", CLOUDS)
def test_custom_domains_in_the_namespaced_form(
    client: FunctionClient, catalog: Catalog, cloud: str
) -> None:
    from tests.support.cases import namespaced_twin

    rendered, _ = converge(client.run, namespaced_twin(_domain_case(cloud, zone=True)))
    assert rendered.fatal == []
    assert_schema_valid(rendered, catalog)
    groups = {
        body["apiVersion"].split("/")[0]
        for body in rendered.resources.values()
        if body["kind"]
        in (
            "Certificate",
            "CertificateValidation",
            "Record",
            "RecordSet",
            "FrontdoorCustomDomain",
            "DNSTXTRecord",
            "DNSCNAMERecord",
        )
    }
    assert groups and all(".m." in group for group in groups), groups
    assert all(d["ready"] for d in rendered.status["customDomains"])


@pytest.mark.parametrize(
    ("domains", "message"),
    [
        case(
            "a custom domain with upper case is refused: certificates and DNS records "
            "want a lowercase DNS domain",
            ["Shop.Example.com"],
            "a lowercase DNS domain",
        ),
        case(
            "the same custom domain twice is refused naming the duplicate, as CloudFront "
            "and Front Door refuse it",
            ["shop.example.com", "shop.example.com"],
            "duplicate custom domains: shop.example.com",
        ),
        case(
            "more custom domains than the module provisions certificates for (5) is refused",
            [f"shop{i}.example.com" for i in range(6)],
            "at most 5",
        ),
        case(
            "a wildcard is not a custom domain the module can validate a certificate for: "
            "refused as not a lowercase DNS domain",
            ["*.example.com"],
            "a lowercase DNS domain",
        ),
    ],
    ids=["uppercase", "duplicate", "too-many", "wildcard"],
)
def test_bad_custom_domains_are_a_fatal_result_naming_the_field(
    client: FunctionClient, domains: list[str], message: str
) -> None:
    composite = environment_composite("aws")
    composite["spec"]["frontend"]["customDomains"] = domains
    (fatal,) = run(client, composite).fatal
    assert fatal.startswith("spec.frontend.customDomains"), fatal
    assert message in fatal, fatal


def test_front_door_refuses_a_custom_domain_outside_the_platforms_zone(
    client: FunctionClient,
) -> None:
    settings = copy.deepcopy(ENVIRONMENT_SETTINGS)
    settings["azure"] = {**settings["azure"], **ZONES["azure"]}
    composite = environment_composite("azure")
    composite["spec"]["frontend"]["customDomains"] = ["example.com"]  # the zone's apex
    (fatal,) = run(client, composite, settings=settings).fatal
    assert fatal.startswith("spec.frontend.customDomains: example.com is not under"), fatal


# -- provider review (issue 23): updates the clouds accept, drift they cause ---------------


@pytest.mark.parametrize("cloud", CLOUDS)
def test_storage_the_cloud_grew_is_never_asked_back(client: FunctionClient, cloud: str) -> None:
    """Autoresize/auto-grow grows the disk; a preset value below it would be a shrink the
    cloud refuses (GCP, Azure), or is ignored by the provider (AWS maxAllocatedStorage)."""
    composite = environment_composite(cloud, database={"size": "small"})
    _, observed = settle(client, composite)
    grown = {"aws": {}, "gcp": {"settings": {"diskSize": 37}}, "azure": {"storageMb": 65536}}[cloud]
    observed["database"]["status"]["atProvider"].update(grown)
    again = run(client, composite, observed=observed)
    for_provider = again.resource("database")["spec"]["forProvider"]
    if cloud == "gcp":
        assert for_provider["settings"]["diskSize"] == 37
        assert for_provider["settings"]["diskAutoresize"] is True
    elif cloud == "azure":
        assert for_provider["storageMb"] == 65536
    else:
        assert (for_provider["allocatedStorage"], for_provider["maxAllocatedStorage"]) == (20, 100)
    # a bigger preset still grows it
    bigger = environment_composite(cloud, database={"size": "large"})
    grown_more = run(client, bigger, observed=observed).resource("database")
    value = {"aws": ["allocatedStorage"], "gcp": ["settings", "diskSize"], "azure": ["storageMb"]}[
        cloud
    ]
    got: Any = grown_more["spec"]["forProvider"]
    for key in value:
        got = got[key]
    assert got == {"aws": 100, "gcp": 100, "azure": 131072}[cloud]


def test_a_major_upgrade_is_allowed_in_place(client: FunctionClient) -> None:
    rendered, _ = settle(client, environment_composite("aws"))
    assert rendered.resource("database")["spec"]["forProvider"]["allowMajorVersionUpgrade"]
    composite = environment_composite("azure", database={"size": "medium", "engineVersion": "17"})
    _, observed = settle(client, composite)
    assert (
        "createMode"
        not in run(client, composite, observed=observed).resource("database")["spec"]["forProvider"]
    )
    observed["database"]["status"]["atProvider"]["version"] = "16"
    upgraded = run(client, composite, observed=observed).resource("database")
    # azurerm: only with create_mode Update does a new version not replace the server
    assert upgraded["spec"]["forProvider"]["createMode"] == "Update"


def test_rds_requires_tls_through_a_parameter_group_of_the_major(client: FunctionClient) -> None:
    """RDS PostgreSQL 13/14 default ``rds.force_ssl`` to 0: the instance's own group sets 1.

    One group per major, named by it: a major upgrade composes the new family's group and
    moves the instance to it in the same modification (RDS refuses another family's group).
    """
    rendered, observed = settle(
        client, environment_composite("aws", database={"size": "medium", "engineVersion": "14"})
    )
    group = rendered.resource("database-parameters-14")
    for_provider = group["spec"]["forProvider"]
    assert for_provider["family"] == "postgres14"
    assert for_provider["parameter"] == [
        {"name": "rds.force_ssl", "value": "1", "applyMethod": "immediate"}
    ]
    database = rendered.resource("database")["spec"]["forProvider"]
    assert database["parameterGroupNameRef"] == {"name": group["metadata"]["name"]}
    upgraded = run(
        client,
        environment_composite("aws", database={"size": "medium", "engineVersion": "15"}),
        observed=observed,
    )
    assert upgraded.resource("database-parameters-15")["spec"]["forProvider"]["family"] == (
        "postgres15"
    )
    assert "database-parameters-14" not in upgraded.resources
    assert upgraded.resource("database")["spec"]["forProvider"]["parameterGroupNameRef"] == {
        "name": upgraded.resource("database-parameters-15")["metadata"]["name"]
    }


@pytest.mark.parametrize("cloud", CLOUDS)
def test_an_engine_downgrade_is_refused_naming_the_field(
    client: FunctionClient, cloud: str
) -> None:
    rendered, observed = converged(client, cloud)
    assert rendered.status["databaseEngineVersion"] == "16"
    composite = environment_composite(cloud, database={"size": "medium", "engineVersion": "15"})
    composite["status"] = rendered.status
    (message,) = run(client, composite, observed=observed).fatal
    assert message.startswith(
        "spec.database.engineVersion: cannot go back from PostgreSQL 16 to 15"
    )
    composite["spec"]["database"]["engineVersion"] = "17"
    assert run(client, composite, observed=observed).fatal == []


def test_the_flexible_server_is_not_late_initialized(client: FunctionClient) -> None:
    """Azure moves the zone on a failover; a late-initialized zone would be failed back."""
    from tests.support.cases import namespaced_twin

    settled, _ = converge(client.run, environment_case("azure"))
    spec = settled.resource("database")["spec"]
    assert spec["managementPolicies"] == ["Observe", "Create", "Update", "Delete"]
    assert spec["deletionPolicy"] == "Orphan"
    twin, _ = converge(client.run, namespaced_twin(environment_case("azure")))
    assert twin.resource("database")["spec"]["managementPolicies"] == [
        "Observe",
        "Create",
        "Update",
    ]  # kept on delete, still no LateInitialize


# -- the region is one of the cloud's ------------------------------------------------------


@pytest.mark.parametrize("form", ("cluster-scoped", "namespaced"))
@pytest.mark.parametrize(
    ("cloud", "region", "hint", "reason"),
    [
        case(
            "an invented region: GCP's one global network would otherwise take it to Cloud SQL",
            "gcp",
            "mars-central1",
            "did you mean us-central1?",
            "an invented region: GCP's one global network would otherwise take it to Cloud SQL",
        ),
        case(
            "a typo names the closest region",
            "gcp",
            "europe-wset1",
            "did you mean europe-west1?",
            "a typo names the closest region",
        ),
        case(
            "nothing close: every region of the cloud is listed",
            "gcp",
            "eu",
            "its regions: africa-south1, asia-east1, ",
            "nothing close: every region of the cloud is listed",
        ),
        case(
            "AWS: refused before the region's private network is looked up",
            "aws",
            "eu-wset-1",
            "did you mean eu-west-1?",
            "AWS: refused before the region's private network is looked up",
        ),
        case(
            "Azure: its location names",
            "azure",
            "westeuropa",
            "did you mean westeurope?",
            "Azure: its location names",
        ),
    ],
)
def test_a_region_the_cloud_does_not_have_is_refused(
    client: FunctionClient, *, form: str, cloud: str, region: str, hint: str, reason: str
) -> None:
    from tests.support.namespaced import namespaced_composite

    composite = environment_composite(cloud, region=region)
    if form == "namespaced":
        composite = namespaced_composite(composite)
    rendered = run(client, composite)
    assert len(rendered.fatal) == 1, (reason, rendered.fatal)
    assert rendered.fatal[0].startswith(
        f"spec.region: {region} is not a region of {cloud}; {hint}"
    ), (reason, rendered.fatal)
    assert not rendered.resources, reason


@pytest.mark.parametrize("form", ("cluster-scoped", "namespaced"))
def test_a_default_region_the_cloud_does_not_have_is_refused_on_the_platform_key(
    client: FunctionClient, form: str
) -> None:
    """Without spec.region the platform's defaultRegion is used, and named when it is wrong."""
    from tests.support.namespaced import namespaced_composite

    composite = environment_composite("gcp")
    del composite["spec"]["region"]
    if form == "namespaced":
        composite = namespaced_composite(composite)
    rendered = run(client, composite, settings=_per_region("gcp", default="europe-wset1"))
    assert rendered.fatal == [
        "environment.gcp.defaultRegion: europe-wset1 is not a region of gcp; "
        "did you mean europe-west1?"
    ]


@pytest.mark.parametrize("form", ("cluster-scoped", "namespaced"))
def test_an_existing_environment_in_a_region_the_cloud_does_not_have_keeps_composing(
    client: FunctionClient, form: str
) -> None:
    """Releases up to 0.1.0 composed any region: an environment they composed keeps composing
    (the same resources as before the check) with a warning saying what to fix, never a fatal
    result that would stop it reconciling (docs/upgrading.md, deprecation policy)."""
    from tests.support.namespaced import namespaced_composite

    def in_form(region: str) -> dict[str, Any]:
        composite = environment_composite("gcp", region=region)
        return namespaced_composite(composite) if form == "namespaced" else composite

    composite = in_form("europe-wset1")
    # What an earlier release composed: the same environment, observed as its providers
    # report it (before the check, a region was not looked at before composing).
    existing, _ = settle(client, in_form("europe-west1"))
    observed = all_ready(existing)
    rendered = run(client, composite, observed=observed)
    assert rendered.fatal == [], "an existing composite is never refused for its region"
    assert set(observed) <= set(rendered.resources), "nothing it composed is dropped"
    assert any(
        w.startswith("spec.region: europe-wset1 is not a region of gcp; did you mean europe-west1?")
        and "this composite exists" in w
        for w in rendered.warnings
    ), rendered.warnings


FALSE = fnv1.STATUS_CONDITION_FALSE


# -- PartsReady and CustomDomainsReady vouch only for what is Synced and Ready ----------------

#: (cloud, part, implementing resource, why this resource makes the part).
PART_RESOURCES = [
    ("aws", "database", "database", "the RDS instance itself"),
    (
        "aws",
        "database",
        "database-parameters-16",
        "its parameter group: a setting the provider cannot apply is not in force",
    ),
    ("aws", "frontend bucket", "assets-public-access-block", "the asset bucket's public block"),
    ("aws", "cdn", "cdn-oac", "the CloudFront origin access control"),
    ("aws", "database user", "db-user", "the Job creating the app's database user"),
    ("aws", "backend", "backend-deployment", "the backend Deployment's Object"),
    ("aws", "namespace", "namespace", "the app's namespace"),
    ("gcp", "database", "database-database", "the Cloud SQL database in the instance"),
    ("gcp", "cdn", "cdn-certificate", "the load balancer's certificate"),
    ("gcp", "frontend bucket", "assets-reader-cdn", "the CDN's read grant on the bucket"),
    ("azure", "database", "database-dns-link", "the private DNS zone's network link"),
    ("azure", "cdn", "cdn-route", "the Front Door route"),
    ("azure", "backend", "backend-service", "the backend Service's Object"),
]


@pytest.fixture(scope="module")
def environments(client: FunctionClient) -> dict[str, dict[str, Any]]:
    """Per cloud, the payments environment's converged observed state."""
    return {cloud: converged(client, cloud)[1] for cloud in CLOUDS}


@pytest.mark.parametrize("breakage", BREAKAGES, ids=lambda b: b.name)
@pytest.mark.parametrize("row", PART_RESOURCES, ids=[f"{c}-{r}" for c, _, r, _ in PART_RESOURCES])
def test_a_part_whose_resource_fails_is_pending_and_named(
    client: FunctionClient,
    environments: dict[str, dict[str, Any]],
    row: tuple[str, str, str, str],
    breakage: Breakage,
) -> None:
    cloud, part, resource, why = row
    observed = broken(environments[cloud], resolve(environments[cloud], resource), breakage)
    rendered = client.run(environment_case(cloud).request(observed=observed))
    condition = rendered.condition("PartsReady")
    assert condition is not None, why
    # a part not Ready yet keeps the documented reason Pending; one the provider cannot
    # apply is failing
    reason = "Pending" if breakage is READY_FALSE else breakage.reason
    assert (condition.status, condition.reason) == (FALSE, reason), (why, condition.message)
    assert f"waiting for: {part}" in condition.message, (why, condition.message)
    assert f"[{resource}: {breakage.says}" in condition.message, (why, condition.message)
    assert rendered.status["pending"] == [part], (why, rendered.status["pending"])
    assert rendered.status["ready"] is False, why


def test_custom_domains_are_vouched_for_only_while_the_cdn_is_synced(
    client: FunctionClient,
) -> None:
    """The CDN serves the domains (observed), but the provider cannot apply the distribution:
    not vouched for. (A CDN not Ready serves nothing: ``Pending``, "not served yet".)"""
    case = _domain_case("aws", zone=True)
    _, observed = converge(client.run, case)
    rendered = client.run(
        case.request(observed=broken(observed, "cdn", SYNCED_FALSE), required=case.fetched())
    )
    condition = rendered.condition("CustomDomainsReady")
    assert condition is not None
    assert (condition.status, condition.reason) == (FALSE, "ControlFailing"), condition.message
    assert "custom domains served: shop.example.com" in condition.message
    assert "[cdn: Synced=False: ReconcileError" in condition.message, condition.message
    unready = client.run(
        case.request(observed=broken(observed, "cdn", READY_FALSE), required=case.fetched())
    )
    condition = unready.condition("CustomDomainsReady")
    assert condition is not None
    assert (condition.status, condition.reason) == (FALSE, "Pending"), condition.message
