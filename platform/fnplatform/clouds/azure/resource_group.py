"""Azure resource group: the container a composer creates for its own resources.

Only Azure has one, so only Azure provides the ``resource_group`` capability; a composer asks
``add_resource_group.provided_on(comp.cloud)``. Deleting a group deletes
everything in it: the kind is stateful, never dropped on a transient problem.
"""

from __future__ import annotations

from fnplatform.clouds.azure.kinds import (
    RESOURCE_GROUP,
)
from fnplatform.composition import Composition
from fnplatform.library.resource_group import ResourceGroupSpec, add_resource_group


@add_resource_group.on("azure")
def resource_group(comp: Composition, name: str, spec: ResourceGroupSpec) -> None:
    """Resource group ``name``, named as the placement scope says."""
    comp.emit(name, RESOURCE_GROUP.new({"location": comp.region}), external_name=spec.group_name)
