"""Tags and labels in each API's own form: one place for how metadata reaches a resource.

A :class:`TagStyle` is a name and a rule turning one platform tag into what the API accepts.
Each cloud declares its own style with its kinds (``clouds/<cloud>/tags.py``: AWS and Azure
take free-form tags, Azure forbidding a few characters in keys; GCP labels must be lowercase, at
most 63 characters, of letters, digits, ``_`` and ``-``) and names it in its profile
(:attr:`fnplatform.cloud.CloudProfile.tag_style`); :data:`KUBERNETES` is the one style no cloud
owns. Nothing here lists the clouds.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

#: One tag ``(key, value)`` in an API's form, or None when the API cannot carry it.
TagRule = Callable[[str, str], tuple[str, str] | None]


@dataclass(frozen=True)
class TagStyle:
    """How a kind carries tags: ``name`` (equal styles are equal by it) and ``rule``."""

    name: str
    rule: TagRule = field(compare=False, repr=False)


def free_form(key_limit: int, value_limit: int) -> TagRule:
    """A rule for APIs taking any key and value, cut to their lengths."""

    def rule(key: str, value: str) -> tuple[str, str]:
        return key[:key_limit], value[:value_limit]

    return rule


_K8S_VALUE_INVALID = re.compile(r"[^A-Za-z0-9._-]")


def _kubernetes(key: str, value: str) -> tuple[str, str]:
    return key, _K8S_VALUE_INVALID.sub("_", value)[:63].strip("._-")


#: Kubernetes labels: values of at most 63 characters of letters, digits, ``.``, ``_``, ``-``.
KUBERNETES = TagStyle("kubernetes", _kubernetes)


def render_tags(style: TagStyle, tags: Mapping[str, str]) -> dict[str, str]:
    """Translate platform tags into the form ``style`` accepts, sorted by key."""
    return dict(_rendered(style, tuple(sorted(tags.items()))))


@functools.lru_cache(maxsize=1024)  # every resource of a composite carries the same tags
def _rendered(style: TagStyle, tags: tuple[tuple[str, str], ...]) -> tuple[tuple[str, str], ...]:
    out: dict[str, str] = {}
    for key, value in tags:
        rendered = style.rule(key, value)
        if rendered is not None:
            out[rendered[0]] = rendered[1]
    return tuple(out.items())
