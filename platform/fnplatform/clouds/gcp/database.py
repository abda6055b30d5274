"""GCP database: a Cloud SQL for PostgreSQL instance with a private IP only.

Composed as ``name`` (``sql.gcp.upbound.io/v1beta2 DatabaseInstance``) and ``name-database``
(``Database``). The instance joins the VPC network the environment names
(``gcp.privateNetwork.network``) with no public IPv4 address and TLS required. A private IP
needs the network's private services access (a ``servicenetworking`` connection with an
allocated range): that connection is one per VPC network and shared by every instance on it,
so it belongs to whoever owns the network, not to one environment; the environment may name
the allocated range to use (``gcp.privateNetwork.allocatedIpRange``).

Password: the pinned provider-upjet-gcp (v3.0.0) CRDs have no ``autoGenerate*`` field for
Cloud SQL, and a ``User`` has no generated password either. So the function never makes one
up: the instance's root password comes from a Secret the platform provides
(``gcp.databasePasswordSecretRef``, e.g. synced from Secret Manager), else from the one the
composer had generated for this instance (``DatabaseSpec.password_secret``, see
``composers/environment/password.py``). provider-upjet-gcp publishes it, with
``privateIP``, ``connectionName`` and the server CA, in the instance's connection secret
(``config/sql/config.go``). The user is ``postgres``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from fnplatform.api.validation import parse
from fnplatform.clouds.gcp.common import project
from fnplatform.clouds.gcp.kinds import SQL_DATABASE, SQL_DATABASE_INSTANCE
from fnplatform.clouds.gcp.settings import GcpPrivateNetwork, gcp_environment
from fnplatform.composition import Composition
from fnplatform.errors import InputError
from fnplatform.kinds import WITHOUT_LATE_INITIALIZE, connection_secret_ref
from fnplatform.library.database import (
    DatabaseSpec,
    PasswordSource,
    add_database,
    database_env,
    database_host,
    database_password_source,
    global_private_network,
)
from fnplatform.library.kubernetes import secret_env
from fnplatform.observation.resources import never_below_observed

POSTGRES_PORT = 5432
ROOT_USER = "postgres"


@dataclass(frozen=True)
class CloudSqlPreset:
    """One row of the size table."""

    tier: str
    disk_gb: int
    availability: str  # ZONAL or REGIONAL (a standby in a second zone)


#: ``database.size`` -> Cloud SQL Enterprise edition custom machine (vCPUs-memory MiB).
PRESETS = {
    "small": CloudSqlPreset("db-custom-1-3840", 10, "ZONAL"),
    "medium": CloudSqlPreset("db-custom-2-7680", 50, "ZONAL"),
    "large": CloudSqlPreset("db-custom-4-15360", 100, "REGIONAL"),
}


@add_database.on("gcp")
def database(comp: Composition, name: str, spec: DatabaseSpec) -> None:
    """A private Cloud SQL PostgreSQL instance and its application database."""
    row = spec.preset(PRESETS)
    env = gcp_environment(comp)
    joined = spec.required_network("the VPC network (with private services access) it joins")
    network = parse(GcpPrivateNetwork, dict(joined.settings), joined.field)
    secret = env.databasePasswordSecretRef or spec.password_secret
    if secret is None:
        raise InputError(
            "environment.gcp.databasePasswordSecretRef",
            "required for a Cloud SQL database without a generated password: the provider "
            "cannot generate one and the function never makes one up; name a Secret that "
            "holds it",
        )
    ip_configuration: dict[str, object] = {
        "ipv4Enabled": False,
        "privateNetwork": network.network,
        "sslMode": "ENCRYPTED_ONLY",
    }
    if network.allocatedIpRange:
        ip_configuration["allocatedIpRange"] = network.allocatedIpRange
    comp.emit(
        name,
        SQL_DATABASE_INSTANCE.new(
            {
                "project": project(comp),
                "region": comp.region,
                "databaseVersion": f"POSTGRES_{spec.engine_version}",
                "deletionProtection": False,
                "rootPasswordSecretRef": {
                    "name": secret.name,
                    "namespace": secret.namespace,
                    "key": secret.key,
                },
                "settings": {
                    "edition": "ENTERPRISE",
                    "tier": row.tier,
                    "availabilityType": row.availability,
                    "diskType": "PD_SSD",
                    "diskSize": _disk_size(comp, name, row.disk_gb),
                    "diskAutoresize": True,
                    "ipConfiguration": ip_configuration,
                    "backupConfiguration": {
                        "enabled": True,
                        "pointInTimeRecoveryEnabled": True,
                    },
                },
            },
            writeConnectionSecretToRef=connection_secret_ref(
                spec.connection_secret, spec.connection_namespace
            ),
            # No LateInitialize: Cloud SQL picks the primary zone (``settings.
            # locationPreference.zone``) and moves it on a regional failover; late-initialised
            # into forProvider, the provider would move the instance back (docs/drift.md).
            managementPolicies=list(WITHOUT_LATE_INITIALIZE),
        ),
    )
    comp.emit(
        f"{name}-database",
        SQL_DATABASE.new({"project": project(comp), "instanceRef": comp.ref(name)}),
        external_name=spec.database_name,
        uses=[name],
    )


def _disk_size(comp: Composition, name: str, preset_gb: int) -> int:
    """The preset's disk, never less than the instance has: with ``diskAutoresize`` Cloud SQL
    grows the disk, and a disk "cannot be reduced" (Terraform google provider,
    ``google_sql_database_instance`` ``disk_size``: "this value will override the resizing from
    disk_autoresize"), so the preset alone would ask for a shrink the API refuses. A bigger
    preset still grows it."""
    return never_below_observed(
        preset_gb, comp.observed_value(name, "status.atProvider.settings.diskSize")
    )


@database_host.on("gcp")
def gcp_database_host(comp: Composition, name: str) -> str | None:
    """The instance's private IP address, once observed."""
    return comp.observed_string(name, "status.atProvider.privateIpAddress")


@database_env.on("gcp")
def gcp_database_env(comp: Composition, spec: DatabaseSpec, secret: str) -> list[dict[str, Any]]:
    """``DB_HOST``/``DB_PASSWORD`` from the Cloud SQL connection secret (``privateIP``,
    ``password``); the port and the root user ``postgres`` are fixed."""
    return [
        secret_env("DB_HOST", secret, "privateIP"),
        {"name": "DB_PORT", "value": str(POSTGRES_PORT)},
        {"name": "DB_USER", "value": ROOT_USER},
        secret_env("DB_PASSWORD", secret, "password"),
    ]


@database_password_source.on("gcp")
def gcp_database_password_source(comp: Composition) -> PasswordSource:
    """The platform's Secret when it names one, else generated per instance: the provider
    cannot generate a Cloud SQL password."""
    return "platform" if gcp_environment(comp).databasePasswordSecretRef else "generated"


# A VPC network is global (its self link is ``projects/<p>/global/networks/<n>``), and private
# services access is one connection per network: "Each Google service creates a subnet from
# the allocated block to provision new resources in a given region" (Cloud SQL, "About private
# IP"). So one ``gcp.privateNetwork`` serves a Cloud SQL instance in any region.
global_private_network.on("gcp")
