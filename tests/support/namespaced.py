"""The namespaced twin of a request: the same composite as a Crossplane v2 namespaced XR.

A v1 composite is cluster-scoped and bound to a claim (labels ``crossplane.io/claim-name`` and
``crossplane.io/claim-namespace``). Its v2 twin is what the claim's user creates instead: named
like the claim, in the claim's namespace, without claim labels, with Crossplane's own fields
(``compositionRef``...) under ``spec.crossplane``. Everything else, the user's spec and labels,
stays, so one case proves both forms. Used by ``tests/support/cases.py``
(every ModuleCase) and ``tools/render_examples.py`` (every render case).
"""

from __future__ import annotations

import copy
from collections.abc import Mapping
from typing import Any

CLAIM_NAME = "crossplane.io/claim-name"
CLAIM_NAMESPACE = "crossplane.io/claim-namespace"
DEFAULT_NAMESPACE = "default"
#: What Crossplane v2 writes under ``spec.crossplane`` of a namespaced XR.
CROSSPLANE_FIELDS: dict[str, Any] = {"compositionUpdatePolicy": "Automatic"}
#: v1 top-level spec fields that v2 keeps under ``spec.crossplane``.
MOVED_UNDER_CROSSPLANE = (
    "compositionRef",
    "compositionRevisionRef",
    "compositionRevisionSelector",
    "compositionSelector",
    "compositionUpdatePolicy",
    "resourceRefs",
)
#: What only the namespaced form composes: a namespaced managed resource writes its connection
#: Secret into its own namespace only, so environment copies the database's into the app's
#: namespace with an Object (as it does for an app on another cluster)
NAMESPACED_ONLY = frozenset({"db-connection"})
#: v1 spec fields a namespaced XR doesn't have (no claim, no connection Secret of its own).
DROPPED = ("claimRef", "writeConnectionSecretToRef", "publishConnectionDetailsTo")


def namespaced_composite(
    composite: Mapping[str, Any], namespace: str | None = None
) -> dict[str, Any]:
    """``composite`` as a namespaced XR in ``namespace`` (default: its claim's namespace)."""
    twin = copy.deepcopy(dict(composite))
    metadata = twin.setdefault("metadata", {})
    labels = dict(metadata.get("labels") or {})
    claim_namespace = labels.pop(CLAIM_NAMESPACE, None)
    claim_name = labels.pop(CLAIM_NAME, None)
    metadata["labels"] = labels
    if not labels:
        del metadata["labels"]
    if claim_name:
        metadata["name"] = claim_name
    metadata["namespace"] = namespace or claim_namespace or DEFAULT_NAMESPACE
    spec = twin.setdefault("spec", {})
    crossplane = copy.deepcopy(CROSSPLANE_FIELDS)
    for key in MOVED_UNDER_CROSSPLANE:
        if key in spec:
            crossplane[key] = spec.pop(key)
    for key in DROPPED:
        spec.pop(key, None)
    spec["crossplane"] = crossplane
    return twin


def namespaced_observed(body: Mapping[str, Any], namespace: str) -> dict[str, Any]:
    """An observed composed resource as a namespaced composite would have it: its twin kind."""
    from fnplatform.namespaced_kinds import TWINS

    twin = copy.deepcopy(dict(body))
    key = (str(twin.get("apiVersion")), str(twin.get("kind")))
    if key in TWINS:
        twin["apiVersion"], twin["kind"] = TWINS[key]
    twin.setdefault("metadata", {})["namespace"] = namespace
    return twin
