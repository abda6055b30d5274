"""The database administrator's password where the provider cannot generate one (GCP).

Issue 22 item 19: every Cloud SQL instance shared the platform's one root password. Without
``gcp.databasePasswordSecretRef`` a Job on the Crossplane cluster now generates one Secret per
environment, and the instance waits for it (``composers/environment/password.py``). Every
body is validated against the pinned provider CRDs.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest

from tests.support.cases import ENVIRONMENT_SETTINGS, environment_composite
from tests.support.deletion import usage_edges
from tests.support.harness import FunctionClient, Rendered
from tests.support.namespaced import namespaced_composite
from tests.support.schemas import Catalog
from tests.test_environment_module import all_ready, assert_schema_valid, run

ROOT_OBJECTS = (
    "db-root-namespace",
    "db-root-account",
    "db-root-role",
    "db-root-binding",
    "db-root",
)
JOB_NAMESPACE = "payments-squad-k4x9p-dbroot"
SECRET = "payments-squad-k4x9p-db-root-password"


def generated_settings(**extra: Any) -> dict[str, Any]:
    """The example platform settings without the platform's GCP password Secret."""
    settings = copy.deepcopy(ENVIRONMENT_SETTINGS)
    del settings["gcp"]["databasePasswordSecretRef"]
    settings.update(extra)
    return settings


def manifest(rendered: Rendered, name: str) -> dict[str, Any]:
    body: dict[str, Any] = rendered.resource(name)["spec"]["forProvider"]["manifest"]
    return body


def passes_until_stable(
    client: FunctionClient, composite: dict[str, Any], settings: dict[str, Any], cloud: str = "gcp"
) -> list[Rendered]:
    """Every pass, everything desired observed Ready, until nothing new appears."""
    observed: dict[str, dict[str, Any]] = {}
    passes = [run(client, composite, settings=settings)]
    for _ in range(8):
        now = all_ready(passes[-1])
        if set(now) == set(observed):
            break
        observed = now
        passes.append(run(client, composite, settings=settings, observed=observed))
    return passes


def test_generated_password_comes_first_and_the_instance_waits_for_it(
    client: FunctionClient, catalog: Catalog
) -> None:
    passes = passes_until_stable(client, environment_composite("gcp"), generated_settings())
    assert "db-root-namespace" in passes[0].resources
    # the pass that first composes the Job has no instance yet: it waits for the Job
    first = next(p for p in passes if "db-root" in p.resources)
    assert first.fatal == []
    assert set(ROOT_OBJECTS) <= set(first.resources)
    assert "database" not in first.resources
    composed = first.condition("Composed")
    assert composed is not None and "db-root complete" in composed.message, composed
    job = manifest(first, "db-root")
    assert job["metadata"]["namespace"] == JOB_NAMESPACE
    container = job["spec"]["template"]["spec"]["containers"][0]
    env = {e["name"]: e["value"] for e in container["env"]}
    assert (env["SECRET"], env["SECRET_NAMESPACE"]) == (SECRET, JOB_NAMESPACE)
    # the script never overwrites an existing password and nothing secret is in the spec
    assert "exit 0" in container["command"][2]
    assert container["securityContext"]["readOnlyRootFilesystem"] is True
    role = manifest(first, "db-root-role")
    assert role["rules"][1] == {
        "apiGroups": [""],
        "resources": ["secrets"],
        "resourceNames": [SECRET],
        "verbs": ["get"],
    }
    # the Job runs on the Crossplane cluster (default ProviderConfig), not the app's
    assert first.resource("db-root")["spec"]["providerConfigRef"]["name"] == "default"
    assert_schema_valid(first, catalog)
    assert "database" in passes[-1].resources


def test_instance_reads_its_own_generated_secret_once_the_job_completed(
    client: FunctionClient, catalog: Catalog
) -> None:
    last = passes_until_stable(client, environment_composite("gcp"), generated_settings())[-1]
    assert last.fatal == []
    for_provider = last.resource("database")["spec"]["forProvider"]
    assert for_provider["rootPasswordSecretRef"] == {
        "name": SECRET,
        "namespace": JOB_NAMESPACE,
        "key": "password",
    }
    # the Secret's namespace outlives the instance; the Job waits for its identity
    edges = set(usage_edges(last.resources))
    assert ("db-root-namespace", "database") in edges
    assert {("db-root-account", "db-root"), ("db-root-binding", "db-root")} <= edges
    assert_schema_valid(last, catalog)


def test_two_environments_never_share_a_password_secret(client: FunctionClient) -> None:
    names = set()
    for name in ("payments-squad-k4x9p", "ledger-squad-a1b2c"):
        composite = environment_composite("gcp", name=name)
        last = passes_until_stable(client, composite, generated_settings())[-1]
        env = manifest(last, "db-root")
        container = env["spec"]["template"]["spec"]["containers"][0]
        names.add(next(e["value"] for e in container["env"] if e["name"] == "SECRET"))
    assert len(names) == 2


def test_platform_secret_still_wins_and_nothing_is_generated(client: FunctionClient) -> None:
    first = passes_until_stable(client, environment_composite("gcp"), ENVIRONMENT_SETTINGS)[-1]
    assert not set(ROOT_OBJECTS) & set(first.resources)
    assert (
        first.resource("database")["spec"]["forProvider"]["rootPasswordSecretRef"]["name"]
        == "cloudsql-root-password"
    )


@pytest.mark.parametrize("cloud", ["aws", "azure"])
def test_provider_generated_passwords_compose_no_job(client: FunctionClient, cloud: str) -> None:
    first = passes_until_stable(client, environment_composite(cloud), generated_settings(), cloud)[
        -1
    ]
    assert not set(ROOT_OBJECTS) & set(first.resources)
    assert first.resource("database")["spec"]["forProvider"]["autoGeneratePassword"] is True


def test_keep_data_keeps_the_generated_password_with_the_database(
    client: FunctionClient,
) -> None:
    last = passes_until_stable(
        client, environment_composite("gcp"), generated_settings(dataOnDelete="keep")
    )[-1]
    assert last.resource("db-root-namespace")["spec"]["deletionPolicy"] == "Orphan"
    assert last.resource("database")["spec"]["deletionPolicy"] == "Orphan"
    delete = run(
        client,
        environment_composite("gcp"),
        settings=generated_settings(dataOnDelete="delete"),
        observed=all_ready(last),
    )
    assert "deletionPolicy" not in delete.resource("db-root-namespace")["spec"]


def test_namespaced_form_writes_the_secret_where_the_instance_reads_it(
    client: FunctionClient, catalog: Catalog
) -> None:
    composite = namespaced_composite(environment_composite("gcp"))
    namespace = composite["metadata"]["namespace"]
    passes = passes_until_stable(client, composite, generated_settings())
    first, last = next(p for p in passes if "db-root" in p.resources), passes[-1]
    job = manifest(first, "db-root")
    container = job["spec"]["template"]["spec"]["containers"][0]
    env = {e["name"]: e["value"] for e in container["env"]}
    assert env["SECRET_NAMESPACE"] == namespace
    assert manifest(first, "db-root-role")["metadata"]["namespace"] == namespace
    ref = last.resource("database")["spec"]["forProvider"]["rootPasswordSecretRef"]
    assert ref == {"name": env["SECRET"], "key": "password"}
    # the namespaced form reads it locally: nothing left unexpressed about it
    form = last.condition("NamespacedForm")
    assert form is None or "rootPasswordSecretRef" not in form.message
    assert_schema_valid(last, catalog)


def test_a_job_not_complete_holds_the_instance(client: FunctionClient) -> None:
    passes = passes_until_stable(client, environment_composite("gcp"), generated_settings())
    first = next(p for p in passes if "db-root" in p.resources)
    observed = all_ready(first)
    observed["db-root"]["status"] = {
        "conditions": [{"type": "Ready", "status": "False", "reason": "Unavailable"}]
    }
    second = run(
        client, environment_composite("gcp"), settings=generated_settings(), observed=observed
    )
    assert "database" not in second.resources
    assert "database" in second.status["pending"]
