"""The per-domain composers, registered explicitly by module name."""

from __future__ import annotations

from fnplatform.runner import Composer


def composers() -> dict[str, Composer]:
    """Every composer this release ships, by ``module`` name (imported on first use)."""
    from fnplatform.composers import async_actor, cluster, openstack

    return {
        "async-actor": async_actor.compose,
        "cluster": cluster.compose,
        "openstack": openstack.compose,
    }
