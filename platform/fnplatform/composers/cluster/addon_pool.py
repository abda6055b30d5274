"""Which node pool the cluster's add-ons wait for and are protected by.

cert-manager, ingress-nginx, kube-prometheus-stack and the cluster autoscaler run hook Jobs
and pods that need a schedulable node: their releases wait for that pool to be Ready, and a
Usage keeps the pool until they are uninstalled (their uninstall hooks need a node too). A
pool that is tainted (their pods tolerate no taint), spot (reclaimed under them) or may scale
to zero (``minNodeCount: 0``: no node to run on) would leave them pending forever, so the
pool is chosen by a rule a user can predict, in this order:

1. the pool ``spec.parameters.addonPool`` names (the model checks it is one of the claim's);
2. for a composite whose add-ons already use a pool (an observed Usage of that pool by one of
   their releases): that pool. Moving them renames those Usages (``usage-<pool>-by-<release>``),
   which deletes the old ones and creates new ones; only the claim's ``addonPool`` moves them;
3. the first by name of the pools that can run them (:attr:`Pool.runs_addons`).

With none of these, the releases not yet installed are held back, and the Composed condition
says why in words (:data:`NO_ADDON_POOL`); a release that exists is kept as it is.
"""

from __future__ import annotations

from collections.abc import Iterable

from fnplatform.composers.cluster.model import DEFAULT_POOL, ClusterSpec, Pool
from fnplatform.composition import Composition
from fnplatform.holds import Wait
from fnplatform.rules.dependencies import usage_name

#: What a held-back add-on waits for when no pool can run it.
NO_ADDON_POOL = Wait(
    None,
    "a pool that can run add-ons: every pool is tainted, spot or may scale to zero "
    "(minNodeCount 0); set spec.parameters.addonPool",
)


def pool_name(pool: str) -> str:
    """The composition name of the user's pool ``pool``."""
    return f"pool-{pool}"


def addon_pool(comp: Composition, spec: ClusterSpec, releases: Iterable[str]) -> str | None:
    """The composition name of the pool the add-on ``releases`` (composition names) wait for
    and use; None when no pool may take them (see the module's docstring for the order)."""
    pools = spec.pools or {DEFAULT_POOL: Pool()}
    named = spec.parameters.addonPool
    if named is not None:
        return pool_name(named)
    releases = tuple(releases)
    for name in sorted(pools):
        if any(usage_name(pool_name(name), release) in comp.observed for release in releases):
            return pool_name(name)
    runnable = [name for name, pool in sorted(pools.items()) if pool.runs_addons]
    return pool_name(runnable[0]) if runnable else None


def nodes_ready(comp: Composition, nodes: str | None, *, by: str) -> bool:
    """Whether add-on release ``by`` may be composed: its pool ``nodes`` is Ready, or ``by``
    exists already (never dropped). Without a pool it is held back, saying why."""
    if nodes is not None:
        return comp.needs_ready(nodes, by=by)
    if by in comp.observed:
        return True
    comp.hold(by, NO_ADDON_POOL)
    return False
