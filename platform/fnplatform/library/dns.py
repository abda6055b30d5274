"""A DNS zone: its spec and the call composing it.

A cloud registers its builder with ``@add_<capability>.on("<cloud>")`` and its answers with
``@<value>.on("<cloud>")`` in ``clouds/<cloud>/dns.py``, the home each object declares.
"""

from __future__ import annotations

from dataclasses import dataclass

from fnplatform.library.capability import Capability


@dataclass(frozen=True)
class DnsZoneSpec:
    """A DNS zone for ``domain``; private zones are visible only inside ``network``."""

    domain: str
    private: bool
    network: str | None = None


add_dns_zone = Capability[DnsZoneSpec]("dns_zone", "A public or private DNS zone.", home="dns")
