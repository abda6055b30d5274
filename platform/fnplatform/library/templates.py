"""Jinja2 for Helm values: one shared environment, strict about undefined variables.

Templates are compiled once and cached. A template error names the release and the missing
variable, so a typo in an EnvironmentConfig surfaces as a clear result, not a broken chart.
Rendered values are remembered by the exact template and variables: every poll renders the same
releases with the same variables, and rendering plus YAML parsing was a third of a small
cluster's composition (bench/results.md).
"""

from __future__ import annotations

import functools
import hashlib
import marshal
import threading
from collections import OrderedDict
from collections.abc import Mapping
from typing import Any

import jinja2
import yaml

from fnplatform.errors import InputError

# libyaml's C loader when PyYAML was built with it: the pure-Python one was 30% of a small
# cluster's composition. Both construct the same values from the same safe tag set.
_LOADER: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)

ENVIRONMENT = jinja2.Environment(
    undefined=jinja2.StrictUndefined,
    autoescape=False,
    keep_trailing_newline=True,
)


@functools.lru_cache(maxsize=256)
def _compile(source: str) -> jinja2.Template:
    return ENVIRONMENT.from_string(source)


_RENDERED_MAX = 512
_rendered: OrderedDict[bytes, bytes] = OrderedDict()  # key -> marshal of the values
_rendered_lock = threading.Lock()


def render_values(release: str, source: str, variables: Mapping[str, Any]) -> dict[str, Any]:
    """Render a YAML values template for ``release`` and parse it into a dict.

    The result is a new dict each time (callers may change it): a remembered one is rebuilt
    by ``marshal.loads``. Variables ``marshal`` cannot encode exactly, and values it cannot
    hold (YAML timestamps), are simply not remembered.
    """
    try:
        key = hashlib.blake2b(
            marshal.dumps((release, source, dict(variables)), 4), digest_size=20
        ).digest()
    except ValueError:
        return _render_values(release, source, variables)
    with _rendered_lock:
        found = _rendered.get(key)
        if found is not None:
            _rendered.move_to_end(key)
    if found is not None:
        values: dict[str, Any] = marshal.loads(found)  # bytes we wrote
        return values
    values = _render_values(release, source, variables)
    try:
        encoded = marshal.dumps(values, 4)
    except ValueError:
        return values
    with _rendered_lock:
        _rendered[key] = encoded
        while len(_rendered) > _RENDERED_MAX:
            _rendered.popitem(last=False)
    return values


def _render_values(release: str, source: str, variables: Mapping[str, Any]) -> dict[str, Any]:
    try:
        text = _compile(source).render(**variables)
    except jinja2.UndefinedError as err:
        raise InputError(
            f"helm release {release} values", f"undefined variable: {err.message}"
        ) from None
    except jinja2.TemplateError as err:
        raise InputError(f"helm release {release} values", f"template error: {err}") from None
    try:
        values = yaml.load(text, Loader=_LOADER) or {}
    except yaml.YAMLError as err:
        raise InputError(f"helm release {release} values", f"not valid YAML: {err}") from None
    if not isinstance(values, dict):
        raise InputError(f"helm release {release} values", "must render to a YAML mapping")
    return values
