"""``lookup``: several labelled EnvironmentConfigs fetched in one round.

Every requirement is declared before anything is read, so Crossplane fetches them together;
until all are fetched the pass stops (``Pending``), and a fetched one that matches nothing,
several, or holds no map is an error on the user's list entry.
"""

from __future__ import annotations

from typing import Any

import pytest
from fnplatform.errors import InputError, Pending
from fnplatform.library.lookup import labelled_requirement, require_labelled_configs

from tests.library.support import composition
from tests.support.table import case

LABEL, PREFIX, FIELD = "fn.crossplane.io/flavor", "flavor", "spec.flavors"


def config(name: str, data: Any) -> dict[str, Any]:
    return {
        "apiVersion": "apiextensions.crossplane.io/v1beta1",
        "kind": "EnvironmentConfig",
        "metadata": {"name": name},
        "data": data,
    }


def test_the_requirement_selects_by_label() -> None:
    requirement = labelled_requirement(PREFIX, LABEL, "gpu")
    assert requirement.key == "flavor-gpu"
    assert requirement.match_labels == ((LABEL, "gpu"),)
    assert (requirement.api_version, requirement.kind) == (
        "apiextensions.crossplane.io/v1beta1",
        "EnvironmentConfig",
    )


@pytest.mark.parametrize(
    ("required", "expected"),
    [
        case(
            "every value fetched with one match: the data of each, by value",
            {"flavor-small": [config("s", {"cpu": 1})], "flavor-gpu": [config("g", {"gpu": 1})]},
            {"small": {"cpu": 1}, "gpu": {"gpu": 1}},
        ),
        case(
            "a config without data contributes an empty map, not an error",
            {"flavor-small": [config("s", None)], "flavor-gpu": [config("g", {})]},
            {"small": {}, "gpu": {}},
        ),
        case(
            "one not fetched yet: the pass waits for all, naming it",
            {"flavor-small": [config("s", {})]},
            Pending("waiting for gpu"),
        ),
        case(
            ("fetched, nothing matched: an error on that entry of the user's list"),
            {"flavor-small": [config("s", {})], "flavor-gpu": []},
            InputError("spec.flavors[1]", f"no EnvironmentConfig labelled {LABEL}=gpu exists"),
        ),
        case(
            ("several matched: the choice would be arbitrary, so an error naming them"),
            {"flavor-small": [config("a", {}), config("b", {})], "flavor-gpu": [config("g", {})]},
            InputError(
                "spec.flavors[0]", f"2 EnvironmentConfigs are labelled {LABEL}=small (a, b)"
            ),
        ),
        case(
            "data that is not a map",
            {"flavor-small": [config("s", ["cpu"])], "flavor-gpu": [config("g", {})]},
            InputError(
                "spec.flavors[0]", f"EnvironmentConfig labelled {LABEL}=small: data is no map"
            ),
        ),
    ],
    ids=["fetched", "empty-data", "pending", "no-match", "several", "not-a-map"],
)
def test_require_labelled_configs(
    required: dict[str, list[dict[str, Any]]], expected: dict[str, Any] | Exception
) -> None:
    comp = composition(required=required)
    if isinstance(expected, Exception):
        with pytest.raises(type(expected)) as err:
            require_labelled_configs(
                comp, ["small", "gpu"], label=LABEL, key_prefix=PREFIX, field=FIELD
            )
        assert str(err.value) == str(expected)
    else:
        assert (
            require_labelled_configs(
                comp, ["small", "gpu"], label=LABEL, key_prefix=PREFIX, field=FIELD
            )
            == expected
        )
    # declared every time, in order, whatever was fetched: each pass asks the same
    assert [r.key for r in comp.requirements] == ["flavor-small", "flavor-gpu"]
