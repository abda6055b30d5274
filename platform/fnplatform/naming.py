"""Deterministic Kubernetes names: DNS-1123 labels of at most 63 characters.

Composed resources get names we choose (not generated ones) so that references (``clusterRef``),
Usages and imports can point at them before they exist, and so that the same composite always
gives the same names.
"""

from __future__ import annotations

import functools
import hashlib
import re

DNS_LABEL_MAX = 63
_INVALID = re.compile(r"[^a-z0-9-]+")
_DASHES = re.compile(r"-{2,}")


@functools.lru_cache(maxsize=8192)  # every pass names every resource again
def dns_label(*parts: str, max_length: int = DNS_LABEL_MAX) -> str:
    """Join ``parts`` into a DNS-1123 label; over-long names keep a hash of the full name.

    ``dns_label("my-cluster", "pool", "gpu")`` -> ``my-cluster-pool-gpu``. When the result
    would exceed ``max_length`` it is cut and suffixed with 8 hex digits of the SHA-256 of
    the untruncated name, so distinct long names stay distinct.
    """
    raw = "-".join(p for p in parts if p)
    name = _DASHES.sub("-", _INVALID.sub("-", raw.lower())).strip("-") or "x"
    if len(name) <= max_length:
        return name
    digest = hashlib.sha256(raw.encode()).hexdigest()[:8]
    return f"{name[: max_length - 9].rstrip('-')}-{digest}"
