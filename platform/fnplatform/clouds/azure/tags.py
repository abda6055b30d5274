"""Azure tags: what a platform tag becomes on an Azure resource.

Keys of at most 512 characters without ``<>%&\\?/``, values of at most 256
(https://learn.microsoft.com/azure/azure-resource-manager/management/tag-resources#limitations).
"""

from __future__ import annotations

import re

from fnplatform.tagging import TagStyle

_KEY_INVALID = re.compile(r"[<>%&\\?/]")


def _azure(key: str, value: str) -> tuple[str, str]:
    return _KEY_INVALID.sub("_", key)[:512], value[:256]


#: Azure tags.
AZURE_TAGS = TagStyle("azure", _azure)
