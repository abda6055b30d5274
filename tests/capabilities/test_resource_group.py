"""add_resource_group where clouds have them (Azure): the group the composite owns."""

from __future__ import annotations

import pytest
from fnplatform.composition import Composition
from fnplatform.library.resource_group import ResourceGroupSpec, add_resource_group

from tests.capabilities.harness import SCOPE, Case, check_converges, compose_once, table


def group(comp: Composition) -> None:
    add_resource_group(comp, "group", ResourceGroupSpec(group_name=str(comp.scope)))


CASES = [Case("placed-scope", group, kinds={"azure": frozenset({"ResourceGroup"})})]


@pytest.mark.parametrize(("case", "cloud"), table(add_resource_group, CASES))
def test_composes_schema_valid_bodies_that_converge(case: Case, cloud: str) -> None:
    done = check_converges(case, cloud)
    assert (
        done.body("group")["metadata"]["annotations"]["crossplane.io/external-name"]
        == (SCOPE[cloud])
    )


@pytest.mark.parametrize("cloud", sorted(set(SCOPE) - set(add_resource_group.clouds())))
def test_a_cloud_without_groups_refuses_on_the_cloud_field(cloud: str) -> None:
    failed = compose_once(cloud, group)
    assert failed.fatal and failed.fatal[0].startswith("spec.cloud:"), failed.fatal
    assert "cannot provide resource_group" in failed.fatal[0]
