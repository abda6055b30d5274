"""The per-domain composers, registered explicitly by module name.

One package per module (its API model, its XRD metadata, ``compose``). Imported by the engine
and the server (through :func:`composers`); a composer never imports another composer, a cloud
or the engine: it reaches clouds through the library's capabilities.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import TYPE_CHECKING

from fnplatform.composition import Composition

if TYPE_CHECKING:
    from fnplatform.api.xrd import ApiDefinition

#: What a module is to the engine: a function that reads the composite through the composition
#: view and says what to compose. The engine imports this type; composers never import the engine.
Composer = Callable[[Composition], None]


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
