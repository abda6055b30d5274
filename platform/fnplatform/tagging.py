"""Tags and labels in each cloud's own form: one place for how metadata reaches the cloud.

AWS and Azure take free-form tags (Azure forbids a few characters in keys); GCP labels must be
lowercase, at most 63 characters, of letters, digits, ``_`` and ``-``.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping
from enum import Enum


class TagStyle(Enum):
    """How a kind carries tags."""

    AWS = "aws"
    GCP = "gcp"
    AZURE = "azure"
    KUBERNETES = "kubernetes"


_GCP_INVALID = re.compile(r"[^a-z0-9_-]")
_AZURE_KEY_INVALID = re.compile(r"[<>%&\\?/]")
_K8S_VALUE_INVALID = re.compile(r"[^A-Za-z0-9._-]")


def _gcp(value: str) -> str:
    return _GCP_INVALID.sub("_", value.lower())[:63]


def render_tags(style: TagStyle, tags: Mapping[str, str]) -> dict[str, str]:
    """Translate platform tags into the form ``style`` accepts, sorted by key."""
    return dict(_rendered(style, tuple(sorted(tags.items()))))


@functools.lru_cache(maxsize=1024)  # every resource of a composite carries the same tags
def _rendered(style: TagStyle, tags: tuple[tuple[str, str], ...]) -> tuple[tuple[str, str], ...]:
    out: dict[str, str] = {}
    for key, value in tags:
        if style is TagStyle.GCP:
            gkey = _gcp(key.replace("/", "_").replace(".", "_"))
            if gkey and gkey[0].isalpha():
                out[gkey] = _gcp(value)
        elif style is TagStyle.AZURE:
            out[_AZURE_KEY_INVALID.sub("_", key)[:512]] = value[:256]
        elif style is TagStyle.KUBERNETES:
            out[key] = _K8S_VALUE_INVALID.sub("_", value)[:63].strip("._-")
        else:
            out[key[:128]] = value[:256]
    return tuple(out.items())
