"""GCP labels: what a platform tag becomes on a GCP resource.

Label keys and values are lowercase letters, digits, ``_`` and ``-``, at most 63 characters, a
key starting with a letter (https://cloud.google.com/resource-manager/docs/labels-overview#requirements);
a tag whose key cannot become one is left off.
"""

from __future__ import annotations

import re

from fnplatform.tagging import TagStyle

_INVALID = re.compile(r"[^a-z0-9_-]")


def _label(text: str) -> str:
    return _INVALID.sub("_", text.lower())[:63]


def _gcp(key: str, value: str) -> tuple[str, str] | None:
    label = _label(key.replace("/", "_").replace(".", "_"))
    if not label or not label[0].isalpha():
        return None
    return label, _label(value)


#: GCP labels.
GCP_LABELS = TagStyle("gcp", _gcp)
