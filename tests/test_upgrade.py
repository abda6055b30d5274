"""Upgrading the function keeps every composite a release composed.

For each release under ``tests/upgrade/<version>/`` (written by
``tools/make_upgrade_fixtures.py`` from that release's own function), every render case of
that release, in both forms, is what a cluster holds once the composite converged: the
composite with the status the release wrote, the resources it was given, its composed
resources observed Ready and what the release desired. Today's function runs over it through
gRPC, as Crossplane would call it on the first reconcile after the upgrade, and each composed
resource the release composed must stay:

- desired under the same composition-resource-name: Crossplane v2.4 deletes every observed
  composed resource missing from the desired state (``DeletingComposedResourceGarbageCollector``
  in internal/controller/apiextensions/composite/composition_functions.go);
- of the same kind in the same API group (a version the provider serves may change);
- known to the cloud by the same external name (``crossplane.io/external-name``);
- with the same value for every field the cloud cannot change in place
  (``platform/fnplatform/upgrade/immutable-fields.yaml``, each field with its source);

and the composite must not be refused: a fatal result stops Crossplane composing it
(composition_functions.go, ``SEVERITY_FATAL``), so a setting a release accepted keeps its
meaning, deprecated with a Warning (docs/upgrading.md).
"""

from __future__ import annotations

import copy
import functools
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest
import yaml
from fnplatform.upgrade.immutable import kept, load_table

from tests.support.harness import FunctionClient, Rendered, request, start_server
from tests.support.tools import load_tool

UPGRADE_DIR = Path(__file__).resolve().parent / "upgrade"
fixtures_tool = load_tool("make_upgrade_fixtures")
EXTERNAL_NAME = fixtures_tool.EXTERNAL_NAME
Body = dict[str, Any]


def fixture_files() -> list[Path]:
    """Every release's fixtures: ``tests/upgrade/<version>/<module>/[namespaced/]<case>.yaml``."""
    return sorted(p for p in UPGRADE_DIR.glob("*/**/*.yaml") if p.parent != UPGRADE_DIR)


@functools.cache
def load(path: Path) -> Body:
    """One fixture, read once."""
    return dict(yaml.safe_load(path.read_text()))


def every_case() -> Iterator[Any]:
    """One parameter per release and render case (a fixture serves each case it lists)."""
    for path in fixture_files():
        fixture = load(path)
        for case_id in fixture["cases"]:
            yield pytest.param(path, case_id, id=f"v{fixture['release']}:{case_id}")


@pytest.fixture(scope="module")
def client() -> Iterator[FunctionClient]:
    """Today's function, served over gRPC on a free port."""
    server, address = start_server()
    channel = FunctionClient(address)
    yield channel
    channel.close()
    server.stop()


def run_after_upgrade(client: FunctionClient, fixture: Mapping[str, Any]) -> Rendered:
    """Today's function over the release's converged composite, called as Crossplane calls
    it: again while its requirements change, each answered from what the cluster holds."""
    connection = {
        name: {key: value.encode() for key, value in details.items()}
        for name, details in (fixture.get("connection") or {}).items()
    }
    given: dict[str, list[Body]] = {}
    for _ in range(fixtures_tool.MAX_REQUIREMENT_ROUNDS):
        rendered = client.run(
            request(
                fixture["composite"],
                fixture["input"],
                observed=fixture["observed"],
                required=given,
                observed_connection=connection,
            )
        )
        wanted = fixtures_tool.fetch(rendered.requirements, fixture["required"])
        if wanted == given:
            return rendered
        given = wanted
    return rendered


def problems(fixture: Mapping[str, Any], rendered: Rendered, table: Mapping[str, Any]) -> list[str]:
    """Every way today's response would harm what the release composed, each saying what
    Crossplane or the cloud would do and what to change."""
    release = f"v{fixture['release']}"
    found = [
        f"the composite is refused (fatal result: {message}); a composite {release} "
        "composed must keep composing: accept the setting with the meaning it had, with "
        "a Warning result naming the new shape (docs/upgrading.md, deprecation policy)"
        for message in rendered.fatal
    ]
    if found:
        return found  # Crossplane applies nothing of a refused pass
    desired = rendered.resources
    for name, was in sorted(fixture["desired"].items()):
        kind = f"{was['kind']}.{fixtures_tool.group_of(was['apiVersion'])}"
        body = desired.get(name)
        if body is None:
            found.append(
                f"{name} ({kind}): no longer desired, so Crossplane DELETES it "
                f"(composed by {release}); keep composing it under this "
                "composition-resource-name"
            )
            continue
        now = f"{body.get('kind')}.{fixtures_tool.group_of(str(body.get('apiVersion')))}"
        if now != kind:
            found.append(
                f"{name}: was a {kind}, now a {now}: Crossplane would replace the "
                "resource; keep its kind and API group (a served version may change)"
            )
            continue
        external = ((body.get("metadata") or {}).get("annotations") or {}).get(EXTERNAL_NAME)
        if external is not None and external != was["externalName"]:
            found.append(
                f"{name} ({kind}): external name {was['externalName']!r} becomes "
                f"{external!r}: the provider would look for (and create) another "
                "cloud resource; keep the name the cloud knows it by"
            )
        elif external is None and was["externalNameSetByRelease"]:
            found.append(
                f"{name} ({kind}): the external name {was['externalName']!r} "
                f"{release} set is no longer desired: applying without it drops "
                "the annotation, and the provider would create a new resource; "
                "keep setting it"
            )
        rules = {
            rule["path"]: rule
            for rule in fixtures_tool.immutable_fields(table, was["apiVersion"], was["kind"])
        }
        for path, old in sorted((was.get("fields") or {}).items()):
            rule = rules.get(path, {})
            new = fixtures_tool.get_path(body, path)
            if not kept(old, new, rule.get("compare")):
                found.append(
                    f"{name} ({kind}): {path} changes from {old!r} to {new!r}, "
                    "which the cloud cannot change in place (the resource would "
                    f"be replaced or the change refused: {rule.get('source', '?')}); "
                    "an existing composite must keep the value it has"
                )
    return found


@pytest.fixture(scope="module")
def upgraded(client: FunctionClient) -> Callable[[Path], list[str]]:
    """The problems of one fixture after the upgrade, computed once per fixture (the render
    cases a fixture lists share one converged composite, so one answer)."""
    table = load_table()

    @functools.cache
    def of(path: Path) -> list[str]:
        fixture = load(path)
        return problems(fixture, run_after_upgrade(client, fixture), table)

    return of


@pytest.mark.parametrize(("path", "case_id"), list(every_case()))
def test_an_upgrade_keeps_what_the_release_composed(
    upgraded: Callable[[Path], list[str]], path: Path, case_id: str
) -> None:
    fixture = load(path)
    found = upgraded(path)
    where = f"{case_id} of v{fixture['release']} ({path.relative_to(UPGRADE_DIR)})"
    assert not found, f"{where}, after the upgrade:\n  " + "\n  ".join(found)


@pytest.mark.parametrize(
    "path", fixture_files(), ids=[str(p.relative_to(UPGRADE_DIR)) for p in fixture_files()]
)
def test_a_fixture_records_every_immutable_field_the_table_names(path: Path) -> None:
    """The fields a fixture records are today's table applied to what the release desired
    (its observed bodies at the fixpoint); a field the table gained needs the fixtures
    regenerated, or it would go unchecked."""
    fixture = load(path)
    table = load_table()
    recomputed = fixtures_tool.release_desired(fixture["observed"], fixture["observed"], table)
    stale = sorted(
        name
        for name, entry in fixture["desired"].items()
        if entry.get("fields") != recomputed[name].get("fields")
    )
    assert not stale, (
        f"{path.relative_to(UPGRADE_DIR)}: the recorded immutable fields of "
        f"{', '.join(stale)} differ from platform/fnplatform/upgrade/immutable-fields.yaml; "
        "regenerate: python tools/make_upgrade_fixtures.py --release "
        f"v{fixture['release']}=<commit> (docs/upgrading.md)"
    )


def test_every_release_case_has_both_forms() -> None:
    """A release's render cases each converge as written and as their namespaced twin."""
    ids = {(load(p)["release"], case) for p in fixture_files() for case in load(p)["cases"]}
    assert ids, "no upgrade fixtures under tests/upgrade/<version>/"
    missing = sorted(
        f"v{release}: {module}/namespaced/{rest}"
        for release, case in ids
        if "/namespaced/" not in case
        for module, rest in [case.split("/", 1)]
        if (release, f"{module}/namespaced/{rest}") not in ids
    )
    assert not missing, f"namespaced twins without a fixture: {missing}"


# -- settings builds before a release accepted --------------------------------------------------


def single_network_variants() -> Iterator[Any]:
    """Each environment fixture on a cloud with regional networks (AWS, Azure), for the
    single-network settings builds before 0.1.0 shipped on AWS (``aws.privateNetwork``: one
    network for every region)."""
    for path in fixture_files():
        fixture = load(path)
        spec = fixture["composite"].get("spec") or {}
        if fixture["input"].get("module") == "environment" and spec.get("cloud") in (
            "aws",
            "azure",
        ):
            yield pytest.param(path, id=f"v{fixture['release']}:{fixture['cases'][0]}")


def with_single_network(fixture: Mapping[str, Any]) -> tuple[Body, str]:
    """``fixture`` as a platform on a pre-release build held it: its EnvironmentConfig naming
    the composite's network as ``<cloud>.privateNetwork`` instead of
    ``<cloud>.privateNetworks.<region>``; the same network, so the same composed resources.
    Returns the changed fixture and the regional field to move to."""
    changed = copy.deepcopy(dict(fixture))
    cloud, region = changed["composite"]["spec"]["cloud"], changed["composite"]["spec"]["region"]
    for item in changed["required"]:
        section = (item.get("data") or {}).get(cloud) or {}
        networks = section.pop("privateNetworks", None)
        if networks:
            section["privateNetwork"] = networks[region]
    return changed, f"environment.{cloud}.privateNetworks.{region}"


@pytest.mark.parametrize("path", list(single_network_variants()))
def test_an_environment_on_one_network_for_every_region_keeps_composing(
    client: FunctionClient, path: Path
) -> None:
    """The single-network form is deprecated, not fatal, for an environment whose database
    exists (a Warning names the regional field); a new environment is still refused."""
    fixture, regional = with_single_network(load(path))
    rendered = run_after_upgrade(client, fixture)
    table = load_table()
    found = problems(fixture, rendered, table)
    assert not found, f"{path.relative_to(UPGRADE_DIR)} on privateNetwork:\n  " + "\n  ".join(found)
    assert any(regional in w and "deprecated" in w for w in rendered.warnings), (
        f"no Warning naming {regional}: {rendered.messages}"
    )
    fresh = run_after_upgrade(
        client,
        {
            **fixture,
            "observed": {},
            "connection": {},
            "composite": {**fixture["composite"], "status": {}},
        },
    )
    assert any("privateNetwork" in m and regional.rsplit(".", 1)[0] in m for m in fresh.fatal), (
        f"a new environment is not refused: {fresh.messages}"
    )
