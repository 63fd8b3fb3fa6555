"""The one query for a member's role in a project."""

from __future__ import annotations

from typing import Any

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
