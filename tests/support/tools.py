"""The repository's tools/*.py scripts as modules, for tests that call their functions.

tools/ is no package (each script runs as ``python tools/<name>.py``), so tests load a script
by path. One loader, and one module per script: a second load would replace the first in
``sys.modules`` and give its dataclasses (``render_examples.Case``) a second identity.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

TOOLS = Path(__file__).resolve().parent.parent.parent / "tools"


def load_tool(name: str) -> ModuleType:
    """``tools/<name>.py`` as the module ``name``, loaded once per session."""
    path = TOOLS / f"{name}.py"
    loaded = sys.modules.get(name)
    if loaded is not None and Path(getattr(loaded, "__file__", "") or "") == path:
        return loaded
    spec = importlib.util.spec_from_file_location(name, path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses resolve their module by name
    spec.loader.exec_module(module)
    return module
