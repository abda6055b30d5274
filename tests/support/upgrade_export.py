"""An upgrade fixture (``tests/upgrade/<version>/``) as the export of a cluster running that
release: what ``python -m fnplatform.upgrade preview --save-export`` writes from a live cluster.

A fixture holds what a cluster running the release holds once a composite converged: the
composite with its status, its observed composed resources, the required resources and the
connection details its providers published. The export adds what Crossplane puts on a cluster
around them: the Composition the composite names (one pipeline step with the fixture's step
input), the controller reference and ``crossplane.io/composite`` label on each composed
resource, and the connection Secrets the render engine reads connection details from.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

import providersim
from fnplatform.upgrade.inputs import COMPOSITE_LABEL

Body = dict[str, Any]
FUNCTION = "function-platform"


def composition_name(composite: Mapping[str, Any]) -> str:
    return f"preview-{str(composite['kind']).lower()}"


def export_of(
    fixture: Mapping[str, Any], *, input_override: Mapping[str, Any] | None = None
) -> list[Body]:
    """The objects a cluster running ``fixture``'s release holds for its composite."""
    composite = copy.deepcopy(dict(fixture["composite"]))
    namespaced = bool(composite["metadata"].get("namespace"))
    spec = composite.setdefault("spec", {})
    fields = spec.setdefault("crossplane", {}) if namespaced else spec
    fields["compositionRef"] = {"name": composition_name(composite)}
    composition: Body = {
        "apiVersion": "apiextensions.crossplane.io/v1",
        "kind": "Composition",
        # the labels the composite's compositionSelector asks for: the engine checks them
        "metadata": {
            "name": composition_name(composite),
            "labels": dict((fields.get("compositionSelector") or {}).get("matchLabels") or {}),
        },
        "spec": {
            "compositeTypeRef": {"apiVersion": composite["apiVersion"], "kind": composite["kind"]},
            "mode": "Pipeline",
            "pipeline": [
                {
                    "step": FUNCTION,
                    "functionRef": {"name": FUNCTION},
                    "input": dict(input_override or fixture["input"]),
                }
            ],
        },
    }
    if not namespaced:
        composition["spec"]["writeConnectionSecretsToNamespace"] = "crossplane-system"
    owner = {
        "apiVersion": composite["apiVersion"],
        "kind": composite["kind"],
        "name": composite["metadata"]["name"],
        "uid": composite["metadata"]["uid"],
        "controller": True,
        "blockOwnerDeletion": True,
    }
    observed = []
    refs = []
    for _, as_observed in sorted(fixture["observed"].items()):
        body = copy.deepcopy(as_observed)
        metadata = body.setdefault("metadata", {})
        metadata["ownerReferences"] = [owner]
        metadata.setdefault("labels", {})[COMPOSITE_LABEL] = composite["metadata"]["name"]
        observed.append(body)
        refs.append(
            {"apiVersion": body["apiVersion"], "kind": body["kind"], "name": metadata["name"]}
        )
    fields["resourceRefs"] = refs
    secrets = [
        secret
        for name, details in sorted((fixture.get("connection") or {}).items())
        if (
            secret := providersim.connection_secret(
                fixture["observed"][name], {k: v.encode() for k, v in details.items()}
            )
        )
        is not None
    ]
    return [composition, composite, *observed, *copy.deepcopy(fixture["required"]), *secrets]
