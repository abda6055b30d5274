"""ClusterUsages of fetched pools: a pool can't be deleted while a tenant runs on it."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from fnplatform.composition import Composition
from fnplatform.kinds import Readiness, register
from fnplatform.naming import dns_label

CLUSTER_USAGE = register(
    "protection.crossplane.io/v1beta1", "ClusterUsage", managed=False,
    readiness=Readiness.EXISTS,
)


def protect(comp: Composition, fetched: Mapping[str, Any], *, by: str, reason: str) -> None:
    """A ClusterUsage whose ``of`` is ``fetched`` and whose ``by`` is composed ``by``.

    Emitted once ``by`` exists (a Usage of a missing user would protect nothing).
    """
    if by not in comp.observed:
        return
    user = comp.desired[by].body
    of_name = str(fetched["metadata"]["name"])
    comp.emit(dns_label("usage", of_name), CLUSTER_USAGE.new(
        None,
        of={"apiVersion": fetched["apiVersion"], "kind": fetched["kind"],
            "resourceRef": {"name": of_name}},
        by={"apiVersion": user["apiVersion"], "kind": user["kind"],
            "resourceRef": {"name": user["metadata"]["name"]}},
        reason=reason,
        replayDeletion=True,
    ), ready=True)
