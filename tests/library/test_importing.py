"""``importing``: the one rule for the name the cloud knows a composed resource by.

:meth:`~fnplatform.composition.Composition.cloud_name` is what every builder asks before it
names a resource in another resource (an EKS cluster in IAM policies, an Azure storage
account, a GCP service account's email); :meth:`~fnplatform.importing.ImportSpec.imported`
is the rule behind it and behind :func:`~fnplatform.importing.apply_import`, so the name
they give and the annotation the import writes can't disagree.
"""

from __future__ import annotations

from typing import Any

import pytest
from fnplatform.importing import apply_import

from tests.library.support import composition
from tests.support.table import case

IMPORT = "spec.parameters.import"


@pytest.mark.parametrize(
    ("settings", "name", "expected"),
    [
        case("nothing imported: the builder's own name", {}, "cluster", "derived"),
        case(
            (
                "an imported resource: the name of the one adopted, whatever the "
                "builder would give it"
            ),
            {"enabled": True, "resources": {"cluster": {"externalName": "legacy-eks"}}},
            "cluster",
            "legacy-eks",
        ),
        case(
            "manage mode adopts the same resource: still its name",
            {
                "enabled": True,
                "mode": "manage",
                "resources": {"cluster": {"externalName": "legacy-eks", "manage": ["version"]}},
            },
            "cluster",
            "legacy-eks",
        ),
        case(
            "another resource imported: this one keeps the builder's name",
            {"enabled": True, "resources": {"network": {"externalName": "legacy-vpc"}}},
            "cluster",
            "derived",
        ),
        case(
            ("listed but the import is off: nothing is adopted, so nothing is renamed"),
            {"enabled": False, "resources": {"cluster": {"externalName": "legacy-eks"}}},
            "cluster",
            "derived",
        ),
    ],
    ids=["none", "imported", "managed", "other-imported", "disabled"],
)
def test_cloud_name_is_the_imported_name_else_the_builders(
    settings: dict[str, Any], name: str, expected: str
) -> None:
    comp = composition()
    comp.import_from(settings, field=IMPORT)
    assert comp.cloud_name(name, "derived") == expected
    # the annotation the import writes names the same resource
    body: dict[str, Any] = {"metadata": {}, "spec": {"forProvider": {"version": "1.33"}}}
    apply_import(comp.import_spec, name, body, managed=True, field=IMPORT)
    annotated = body["metadata"].get("annotations", {}).get("crossplane.io/external-name")
    assert (annotated or "derived") == expected
