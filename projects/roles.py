"""The one query for a member's role in a project."""

from __future__ import annotations

from typing import Any

from django.db.models import OuterRef, Subquery

from core.access import Role
from projects.models import Membership


def member_role(*, project_id: Any, user_id: Any, active_only: bool = True) -> Role | None:
    """The user's current role in the project; None when they are not a member, when either id
    is missing, or (with active_only, the default) when the account is deactivated."""
    if project_id is None or user_id is None:
        return None
    memberships = Membership.objects.filter(project_id=project_id, user_id=user_id)
    if active_only:
        memberships = memberships.filter(user__is_active=True)
    role = memberships.values_list("role", flat=True).first()
    return Role(role) if role else None


def role_subquery(*, project_field: str = "project_id", user_field: str = "user_id") -> Subquery:
    """The same role as an expression to annotate a credential's row with, so that the row and
    its user's role come back in one query (authentication). It does not look at the account's
    is_active: the row's own user join does (`active_role`)."""
    memberships = Membership.objects.filter(
        project_id=OuterRef(project_field), user_id=OuterRef(user_field)
    )
    return Subquery(memberships.values("role")[:1])


def active_role(role: str | None, *, user_is_active: bool) -> Role | None:
    """member_role's answer from an annotated role (role_subquery) and the user's is_active."""
    return Role(role) if role and user_is_active else None
