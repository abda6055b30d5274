"""Layer 2: the cloud modules, discovered. Importing this package registers every cloud, once.

Each cloud module registers on the capability objects of :mod:`fnplatform.library`:
``@add_bucket.on("aws")`` a builder ``(comp, name, spec) -> None`` that emits its main
resource as ``name`` (plus helpers named ``f"{name}-<part>"``) through ``comp.emit``;
``@bucket_address.on("aws")`` an answer to a value; ``bucket_replication.on("aws")``
a flag; ``@add_cluster.extra("aws")`` an extra run after the builder.

Nothing lists the clouds or their files by hand: :func:`load` imports every package here
(``clouds/<cloud>/``, a name of :data:`fnplatform.cloud.CLOUDS`) and every module in it, so a
new capability is its spec plus one file per cloud. The library never imports this package:
:func:`fnplatform.composers.composers` does, and the server calls it as it starts (before the
first request, in thread mode too).
"""

from __future__ import annotations

import importlib
import pkgutil
from types import ModuleType

from fnplatform.cloud import CLOUDS


def discover() -> list[str]:
    """The cloud packages here, sorted; one that is not a known cloud is an error."""
    found = sorted(m.name for m in pkgutil.iter_modules(__path__) if m.ispkg)
    unknown = [name for name in found if name not in CLOUDS]
    if unknown:
        msg = f"fnplatform.clouds.{unknown[0]} is no cloud of fnplatform.cloud.Cloud"
        raise ValueError(msg)
    return found


def load() -> list[ModuleType]:
    """Import every module of every cloud (each registers what it provides); the modules.

    Importing is idempotent, so calling it again costs a dictionary lookup per module.
    """
    modules: list[ModuleType] = []
    for cloud in discover():
        package = importlib.import_module(f"{__name__}.{cloud}")
        modules.extend(
            importlib.import_module(f"{package.__name__}.{module.name}")
            for module in sorted(pkgutil.iter_modules(package.__path__), key=lambda m: m.name)
        )
    return modules


load()
