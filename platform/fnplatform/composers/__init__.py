"""The per-domain composers, registered explicitly by module name."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from fnplatform.runner import Composer

if TYPE_CHECKING:
    from fnplatform.xrd import ApiDefinition


def composers() -> dict[str, Composer]:
    """Every composer this release ships, by ``module`` name (imported on first use)."""
    from fnplatform.composers import async_actor, cluster, contact_center

    return {
        "async-actor": async_actor.compose,
        "cluster": cluster.compose,
        "contact-center": contact_center.compose,
    }


def composite_apis() -> dict[str, ApiDefinition]:
    """The composite API (``composers/<module>/api.py``'s ``API``) of each shipped module.

    The function checks the composite it is sent against it: the kind, and the spec fields an
    API server serving the generated XRD would have kept. A module without an ``api.py`` gets
    no such check.
    """
    apis: dict[str, ApiDefinition] = {}
    for module in composers():
        package = f"fnplatform.composers.{module.replace('-', '_')}"
        try:
            apis[module] = importlib.import_module(f"{package}.api").API
        except ModuleNotFoundError as err:
            if err.name != f"{package}.api":
                raise
    return apis
