"""Jinja2 for Helm values: one shared environment, strict about undefined variables.

Templates are compiled once and cached. A template error names the release and the missing
variable, so a typo in an EnvironmentConfig surfaces as a clear result, not a broken chart.
"""

from __future__ import annotations

import functools
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


def render_values(release: str, source: str, variables: Mapping[str, Any]) -> dict[str, Any]:
    """Render a YAML values template for ``release`` and parse it into a dict."""
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
