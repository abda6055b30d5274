"""The per-domain composers, registered explicitly by module name."""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

from fnplatform.engine.runner import Composer

if TYPE_CHECKING:
    from fnplatform.api.xrd import ApiDefinition


def composers() -> dict[str, Composer]:
    """Every composer this release ships, by ``module`` name (imported on first use).

    The clouds are loaded here (:func:`fnplatform.clouds.load`), with the composers: importing
    them registers their builders on the capabilities the composers call (nothing in the
    library imports a cloud). The server calls this as it starts.
    """
    from fnplatform import clouds
    from fnplatform.composers import async_actor, cluster, contact_center, environment, openstack

    clouds.load()
    return {
        "async-actor": async_actor.compose,
        "cluster": cluster.compose,
        "contact-center": contact_center.compose,
        "environment": environment.compose,
        "openstack": openstack.compose,
    }


def composite_apis() -> dict[str, tuple[ApiDefinition, ...]]:
    """The composite APIs (``composers/<module>/api.py``'s ``API``, or ``APIS`` for a module
    serving several) of each shipped module.

    The function checks the composite it is sent against them: the kind, and the spec fields an
    API server serving the generated XRD would have kept. A module without an ``api.py`` gets
    no such check.
    """
    apis: dict[str, tuple[ApiDefinition, ...]] = {}
    for module in composers():
        package = f"fnplatform.composers.{module.replace('-', '_')}"
        try:
            api_module = importlib.import_module(f"{package}.api")
        except ModuleNotFoundError as err:
            if err.name != f"{package}.api":
                raise
            continue
        several = getattr(api_module, "APIS", None)
        apis[module] = tuple(several) if several is not None else (api_module.API,)
    return apis
