"""What every Azure builder shares: the kinds it emits, the resource group and naming rules."""

from __future__ import annotations

import hashlib
import re
from typing import Any

from fnplatform.clouds.azure.kinds import ROLE_ASSIGNMENT
from fnplatform.composition import Composition
from fnplatform.errors import InputError


def grant_role(
    comp: Composition,
    name: str,
    *,
    role: str,
    principal_of: tuple[str, str] | str,
    scope_of: str,
    uses: tuple[str, ...] = (),
) -> None:
    """A RoleAssignment ``name``: ``role`` for the principal at ``principal_of`` (composed
    resource, observed path; or a principal id as such) on the observed Azure id of
    ``scope_of``.

    Both are known only once observed (the kinds have no references for them), so the
    assignment waits for them; an assignment that exists keeps the values it was composed
    with while they are briefly unobserved (dropping it would revoke the role).
    ``skipServicePrincipalAadCheck``: a just-created managed identity may not have replicated
    in Entra ID yet, and Azure would refuse it.
    """
    principal = (
        principal_of
        if isinstance(principal_of, str)
        else _observed_or_kept(comp, name, "principalId", *principal_of)
    )
    scope = _observed_or_kept(comp, name, "scope", scope_of, "status.atProvider.id")
    if principal is None or scope is None:
        return
    needed = {scope_of, *uses} | ({principal_of[0]} if isinstance(principal_of, tuple) else set())
    comp.emit(
        name,
        ROLE_ASSIGNMENT.new(
            {
                "principalId": str(principal),
                "principalType": "ServicePrincipal",
                "scope": str(scope),
                "roleDefinitionName": role,
                "skipServicePrincipalAadCheck": True,
            }
        ),
        uses=sorted(needed),
    )


def _observed_or_kept(comp: Composition, name: str, field: str, source: str, path: str) -> Any:
    """``path`` of ``source`` once observed, else the ``field`` the existing ``name`` was
    composed with; None (``name`` held, waiting for ``source``) when neither is known."""
    value = comp.observed_value(source, path)
    if value in (None, "") and comp.is_observed(name):
        value = comp.observed_value(name, f"spec.forProvider.{field}")
    return value if value not in (None, "") else comp.needs(source, path, by=name)


# Azure resource group names: 1-90 of letters, digits, ``_ - . ( )``, not ending in a period.
_RESOURCE_GROUP = re.compile(r"^[-\w.()]{0,89}[-\w()]$")
_AGENT_POOL = re.compile(r"^[a-z][a-z0-9]{0,11}$")
AGENT_POOL_MAX = 12  # AKS Linux agent pool names: lowercase alphanumerics, at most 12


def resource_group(comp: Composition) -> str:
    """The resource group every resource goes into: the scope the composer placed it in.

    It is referenced by name (``resourceGroupName``); whoever owns it (the plane, or a
    composer that composes its own) decides its lifecycle.
    """
    group = comp.scope
    if not _RESOURCE_GROUP.match(group):
        raise InputError(
            comp.placement.scope.field,
            "must be an Azure resource group name: 1-90 letters, digits, '_-.()', "
            "not ending in '.'",
        )
    return group


def location(comp: Composition) -> str:
    """The placed Azure location, for kinds whose spec carries no region of its own."""
    return comp.region


def subnet_name(network: str) -> str:
    """Composition name of the node subnet of the network composed as ``network``."""
    return f"{network}-nodes"


def nat_gateway_name(network: str) -> str:
    """Composition name of the NAT gateway the node subnet of ``network`` egresses through."""
    return f"{network}-nat"


def nat_ip_name(network: str) -> str:
    """Composition name of the NAT gateway's public IP (the network's egress address)."""
    return f"{network}-nat-ip"


def nat_ip_association_name(network: str) -> str:
    """Composition name of the association of the NAT gateway with its public IP."""
    return f"{network}-nat-ip-association"


def subnet_nat_association_name(network: str) -> str:
    """Composition name of the association of the node subnet with the NAT gateway."""
    return f"{subnet_name(network)}-nat"


def agent_pool_name(pool: str, *, reserved: tuple[str, ...] = ()) -> str:
    """The AKS agent pool name for the user's pool ``pool``.

    AKS allows only lowercase alphanumerics (at most 12, starting with a letter) while pool
    names here are DNS labels of up to 40. A name that already fits is kept so it reads the
    same in the portal; any other (or a ``reserved`` one) is shortened and suffixed with a
    hash of the full name, so two different pools never share an agent pool name.
    """
    if _AGENT_POOL.match(pool) and pool not in reserved:
        return pool
    digest = hashlib.sha256(pool.encode()).hexdigest()[:4]
    letters = re.sub(r"[^a-z0-9]", "", pool.lower())
    if not letters or not letters[0].isalpha():
        letters = f"p{letters}"
    return f"{letters[: AGENT_POOL_MAX - len(digest)]}{digest}"


def rotation_pool_name(pool: str) -> str:
    """The temporary agent pool name the provider cycles the user's pool ``pool`` through.

    Changing a pool's VM size, zones, OS SKU and similar properties makes the provider create
    this pool, move the workload, and recreate the original; without a name the change fails.
    The name is a hash of ``pool``, so it is a valid agent pool name that neither matches a
    user's pool nor is shared by two pools rotating at once (a prefix like ``<pool>tmp`` could
    be both).
    """
    return agent_pool_name(f"{pool}.rotation")


def compact_name(
    comp: Composition,
    name: str,
    max_length: int,
    *,
    alphanumeric: bool = False,
    prefix: str = "",
) -> str:
    """A globally unique Azure name for composed resource ``name`` (storage accounts, vaults).

    The existing resource's name when ``name`` is observed (never renamed), else derived from
    the composite's :attr:`~Composition.global_name_base`, so a re-created namespaced
    composite of the same name doesn't meet a kept account or a soft-deleted vault.
    Lowercase, starting with a letter; only letters and digits with ``alphanumeric`` (storage
    accounts), else also ``-``. A name that doesn't fit keeps a hash of the full one, so two
    composites never share it.
    """
    return comp.global_name(
        name,
        lambda base: _compact(
            f"{prefix}-{base}-{name}" if prefix else f"{base}-{name}",
            max_length,
            alphanumeric=alphanumeric,
        ),
        in_metadata=False,
    )


def _compact(full: str, max_length: int, *, alphanumeric: bool) -> str:
    """``full`` as an Azure global name: see :func:`compact_name`."""
    allowed = r"[^a-z0-9]" if alphanumeric else r"[^a-z0-9-]"
    text = re.sub(r"-{2,}", "-", re.sub(allowed, "", full.lower())).strip("-")
    if not text or not text[0].isalpha():
        text = f"x{text}"
    if len(text) <= max_length:
        return text
    digest = hashlib.sha256(full.encode()).hexdigest()[:6]
    return f"{text[: max_length - len(digest) - (0 if alphanumeric else 1)].rstrip('-')}" + (
        digest if alphanumeric else f"-{digest}"
    )
