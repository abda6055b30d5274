"""Google service accounts and their project roles, shared by the cluster and identity builders.

The member of a project grant is the account's email: known before the account exists (the
account id is deterministic), observed once it does. Each grant uses the account, so it waits
for it and is deleted before it.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from fnplatform.clouds.gcp import kinds
from fnplatform.clouds.gcp.common import project, service_account_email, service_account_id
from fnplatform.composition import Composition


def add_service_account(
    comp: Composition,
    name: str,
    *,
    display_name: str,
    description: str,
    uses: Iterable[str] = (),
) -> dict[str, Any]:
    """A Google service account composed as ``name``, with a GCP-valid account id."""
    return comp.emit(
        name,
        kinds.SERVICE_ACCOUNT.new(
            {
                "project": project(comp),
                "displayName": display_name[:100],
                "description": description[:256],
            }
        ),
        uses=uses,
        external_name=service_account_id(comp, name),
    )


def grant_project_roles(comp: Composition, account_name: str, roles: Iterable[str]) -> None:
    """Grant ``roles`` in the project to the account, as ``<account_name>-<role>``."""
    member = f"serviceAccount:{service_account_email(comp, account_name)}"
    for role in sorted(set(roles)):
        comp.emit(
            f"{account_name}-{role_suffix(role)}",
            kinds.PROJECT_IAM_MEMBER.new(
                {"project": project(comp), "role": role, "member": member}
            ),
            uses=[account_name],
        )


def role_suffix(role: str) -> str:
    """``roles/dns.admin`` -> ``dns-admin``: a composed-name part for a grant of ``role``."""
    return role.removeprefix("roles/").replace(".", "-").lower()
