"""add_database on every cloud: a private PostgreSQL server in the environment's network.

The environment module's settings name the private network per cloud; the call passes the one
of the probe's region (``DatabaseSpec.network``), as the environment composer does. The server
reports its private host once Ready (platform/providersim/simulation.py), read by
``database_host``.
"""

from __future__ import annotations

import pytest
from fnplatform.composition import Composition
from fnplatform.library.database import DatabaseSpec, PrivateNetwork, add_database, database_host

from tests.capabilities.harness import REGION, Case, check_converges, compose_once, table
from tests.support.cases import ENVIRONMENT_SETTINGS


def network(cloud: str) -> PrivateNetwork:
    """The platform's network of the probe's region, and the field it is written in."""
    section = ENVIRONMENT_SETTINGS[cloud]
    if "privateNetworks" in section:
        field = f"environment.{cloud}.privateNetworks.{REGION[cloud]}"
        return PrivateNetwork(section["privateNetworks"][REGION[cloud]], field)
    return PrivateNetwork(section["privateNetwork"], f"environment.{cloud}.privateNetwork")


def database(comp: Composition) -> None:
    add_database(
        comp,
        "db",
        DatabaseSpec(
            size=comp.spec.get("size", "small"),
            engine_version="16",
            database_name="app",
            connection_secret="db-conn",
            connection_namespace="crossplane-system",
            final_snapshot=comp.spec.get("finalSnapshot", True),
            network=network(str(comp.cloud)),
        ),
        fields={"size": "spec.size"},
    )
    comp.set_status("host", database_host(comp, "db"))


KINDS = {
    "aws": frozenset({"rds/Instance"}),
    "gcp": frozenset({"sql/DatabaseInstance"}),
    "azure": frozenset({"dbforpostgresql/FlexibleServer", "network/PrivateDNSZone"}),
}
CASES = [
    Case("small", database, kinds=KINDS),
    Case(
        "large-no-snapshot", database, kinds=KINDS, spec={"size": "large", "finalSnapshot": False}
    ),
]
HOST = {"aws": "address", "gcp": "privateIpAddress", "azure": "fqdn"}


@pytest.mark.parametrize(("case", "cloud"), table(add_database, CASES))
def test_composes_schema_valid_bodies_that_converge(case: Case, cloud: str) -> None:
    done = check_converges(case, cloud)
    assert done.status["host"] == done.reported("db")[HOST[cloud]]


@pytest.mark.parametrize("cloud", add_database.clouds())
def test_an_unknown_size_is_an_error_on_the_users_field(cloud: str) -> None:
    failed = compose_once(cloud, database, spec={"size": "huge"})
    assert failed.fatal and failed.fatal[0].startswith("spec.size:"), failed.fatal
    assert "small" in failed.fatal[0]


@pytest.mark.parametrize("cloud", add_database.clouds())
def test_a_bad_network_is_an_error_on_the_field_it_was_written_in(cloud: str) -> None:
    def broken(comp: Composition) -> None:
        add_database(
            comp,
            "db",
            DatabaseSpec(
                size="small",
                engine_version="16",
                database_name="app",
                connection_secret="c",
                connection_namespace="crossplane-system",
                network=PrivateNetwork({"unknown": 1}, "environment.x.privateNetworks.r1"),
            ),
        )

    failed = compose_once(cloud, broken)
    assert failed.fatal and failed.fatal[0].startswith("environment.x.privateNetworks.r1."), (
        failed.fatal
    )
