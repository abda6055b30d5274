"""``placement``: where a composite's resources go, and the user field each value came from.

A composer places the composite (``Composition.place``); a builder reads the region or scope
through the placement, and a missing one is an error on the field the user (or platform)
writes, never a default. Each cloud's profile names its scope key (``CloudProfile.scope_key``).
"""

from __future__ import annotations

from typing import Any

import pytest
from fnplatform.errors import InputError
from fnplatform.placement import (
    UNPLACED,
    Placement,
    Sourced,
    cloud_settings,
    required_scope,
    scope_from_environment,
)

from tests.library.support import composition
from tests.support.table import case

PLACED = Placement(
    Sourced("aws", "spec.cloud"),
    Sourced("eu-west-1", "spec.region"),
    Sourced(None, "environment.aws.accountId"),
)


@pytest.mark.parametrize(
    ("placement", "which", "expected"),
    [
        case("a placed region is returned as is", PLACED, "region", "eu-west-1"),
        case(
            "an unset scope is an error on the field it would come from",
            PLACED,
            "scope",
            InputError("environment.aws.accountId", "required: the scope"),
        ),
        case(
            ("before the composer places anything, the region is an error on spec.region"),
            UNPLACED,
            "region",
            InputError("spec.region", "required: the scope"),
        ),
    ],
    ids=["placed", "unset-scope", "unplaced"],
)
def test_required(placement: Placement, which: str, expected: str | InputError) -> None:
    if isinstance(expected, InputError):
        with pytest.raises(InputError) as err:
            placement.required(which, "the scope")
        assert (err.value.field, err.value.reason) == (expected.field, expected.reason)
    else:
        assert placement.required(which, "the scope") == expected


@pytest.mark.parametrize(
    ("env", "cloud", "expected"),
    [
        case("the cloud's block as written", {"gcp": {"project": "p"}}, "gcp", {"project": "p"}),
        case("no block: empty, so a key read from it is simply unset", {}, "gcp", {}),
        case("an explicit null block reads as empty too", {"gcp": None}, "gcp", {}),
        case(
            "a block that is not an object is an error on it",
            {"gcp": "p"},
            "gcp",
            InputError("environment.gcp", "must be an object"),
        ),
    ],
    ids=["block", "absent", "null", "not-an-object"],
)
def test_cloud_settings(
    env: dict[str, Any], cloud: Any, expected: dict[str, Any] | InputError
) -> None:
    if isinstance(expected, InputError):
        with pytest.raises(InputError) as err:
            cloud_settings(env, cloud)
        assert (err.value.field, err.value.reason) == (expected.field, expected.reason)
    else:
        assert dict(cloud_settings(env, cloud)) == expected


@pytest.mark.parametrize(
    ("env", "cloud", "expected"),
    [
        case(
            "each cloud's scope key, read from its own block (its profile's scope_key)",
            {"aws": {"accountId": "123456789012"}},
            "aws",
            Sourced("123456789012", "environment.aws.accountId"),
        ),
        case(
            "GCP's scope is its project, read from its own block",
            {"gcp": {"project": "acme"}},
            "gcp",
            Sourced("acme", "environment.gcp.project"),
        ),
        case(
            "Azure's scope is its resource group, read from its own block",
            {"azure": {"resourceGroup": "rg"}},
            "azure",
            Sourced("rg", "environment.azure.resourceGroup"),
        ),
        case(
            ("unset is not an error yet: None, with the field a later error names"),
            {},
            "gcp",
            Sourced(None, "environment.gcp.project"),
        ),
        case(
            "an empty value counts as unset",
            {"gcp": {"project": ""}},
            "gcp",
            Sourced(None, "environment.gcp.project"),
        ),
        case(
            ("a number (YAML reads an all-digit account id so) is the same id as text"),
            {"aws": {"accountId": 123456789012}},
            "aws",
            Sourced("123456789012", "environment.aws.accountId"),
        ),
    ],
    ids=["aws", "gcp", "azure", "unset", "empty", "number"],
)
def test_scope_from_environment(env: dict[str, Any], cloud: Any, expected: Sourced) -> None:
    assert scope_from_environment(env, cloud) == expected


def test_every_cloud_has_a_scope_key() -> None:
    # a new cloud without its profile would fail only when a composite is placed on it
    from fnplatform.cloud import CLOUDS, cloud_profiles

    profiles = cloud_profiles()
    assert [p.name for p in profiles] == list(CLOUDS)
    assert all(p.scope_key and p.scope_what for p in profiles), profiles


@pytest.mark.parametrize(
    ("env", "cloud", "expected"),
    [
        case("set: returned with its field", {"gcp": {"project": "acme"}}, "gcp", "acme"),
        case(
            "unset: an error on the key, in the words of the profile's scope_what",
            {},
            "azure",
            InputError("environment.azure.resourceGroup", "required: the Azure resource group"),
        ),
    ],
    ids=["set", "unset"],
)
def test_required_scope(env: dict[str, Any], cloud: Any, expected: str | InputError) -> None:
    if isinstance(expected, InputError):
        with pytest.raises(InputError) as err:
            required_scope(env, cloud)
        assert (err.value.field, err.value.reason) == (expected.field, expected.reason)
    else:
        assert required_scope(env, cloud).value == expected


@pytest.mark.parametrize(
    ("place", "read", "expected"),
    [
        case(
            "what the composer placed, read through the composition",
            {"region": "westeurope", "scope": "rg"},
            "region",
            "westeurope",
        ),
        case(
            "the scope the composer placed, read through the composition",
            {"region": "westeurope", "scope": "rg"},
            "scope",
            "rg",
        ),
        case(
            "a missing region names the composer's region field",
            {"region_field": "spec.forProvider.location"},
            "region",
            InputError("spec.forProvider.location", "required: the region to create resources in"),
        ),
        case(
            "a missing scope names the cloud in its message",
            {"scope_field": "environment.azure.resourceGroup"},
            "scope",
            InputError("environment.azure.resourceGroup", "required: the azure scope to use"),
        ),
    ],
    ids=["region", "scope", "no-region", "no-scope"],
)
def test_composition_placement(
    place: dict[str, str], read: str, expected: str | InputError
) -> None:
    comp = composition()
    comp.place("azure", cloud_field="spec.cloud", **place)
    if isinstance(expected, InputError):
        with pytest.raises(InputError) as err:
            getattr(comp, read)
        assert (err.value.field, err.value.reason) == (expected.field, expected.reason)
    else:
        assert getattr(comp, read) == expected
