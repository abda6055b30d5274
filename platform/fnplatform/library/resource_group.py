"""A resource group the composite owns (clouds that have them).

A cloud registers its builder with ``@add_<capability>.on("<cloud>")`` and its answers with
``@<value>.on("<cloud>")`` in ``clouds/<cloud>/resource_group.py``, the home each object declares.
"""

from __future__ import annotations

from dataclasses import dataclass

from fnplatform.library.capability import Capability


@dataclass(frozen=True)
class ResourceGroupSpec:
    """A resource group the composite owns (clouds that have them: Azure)."""

    group_name: str


add_resource_group = Capability[ResourceGroupSpec](
    "resource_group",
    "A resource group the composite owns (clouds that have them).",
    home="resource_group",
)
