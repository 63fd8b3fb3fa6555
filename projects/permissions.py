"""django-guardian object permissions, derived from Membership.role in this one place.

Membership.role is the source of truth; the guardian rows only let the admin and the web UI ask
"may this user manage this project?" the usual Django way. view_project_audit is not derived: an
owner may grant it to an auditor who is not a member (docs/architecture.md, "The tenancy rule").
"""

from __future__ import annotations

from django.contrib.auth import get_user_model
from django.contrib.auth.models import AbstractBaseUser, Permission
from django.contrib.contenttypes.models import ContentType

from core.access import ROLE_CAPABILITIES, Capability, Role, privileged
from projects.models import Membership, Project, ProjectUserPermission
from projects.roles import member_role

# Which object permissions each capability brings.
CAPABILITY_PERMISSIONS: dict[Capability, tuple[str, ...]] = {
    Capability.MANAGE: ("manage_members", "manage_repositories", "manage_api_keys"),
    Capability.OWN: ("manage_privileged_members",),
}
DERIVED_PERMISSIONS = tuple(p for perms in CAPABILITY_PERMISSIONS.values() for p in perms)


def permissions_for_role(role: Role | None) -> set[str]:
    if role is None:
        return set()
    return {
        perm
        for capability, perms in CAPABILITY_PERMISSIONS.items()
        if capability in ROLE_CAPABILITIES[role]
        for perm in perms
    }


def sync_object_permissions(project: Project, user: AbstractBaseUser) -> None:
    """Make the user's guardian rows and staff flag match their membership (call in the
    membership change's transaction)."""
    # A deactivated account keeps its membership's permissions until the membership changes.
    wanted = permissions_for_role(
        member_role(project_id=project.pk, user_id=user.pk, active_only=False)
    )
    # The difference between the rows held and the rows wanted, in one read and at most two
    # writes: guardian's assign_perm and remove_perm cost a few queries per permission.
    held = ProjectUserPermission.objects.filter(
        user_id=user.pk, content_object=project, permission__codename__in=DERIVED_PERMISSIONS
    )
    have = set(held.values_list("permission__codename", flat=True))
    if have - wanted:
        held.filter(permission__codename__in=have - wanted).delete()
    if wanted - have:
        permissions = Permission.objects.filter(
            content_type=ContentType.objects.get_for_model(Project), codename__in=wanted - have
        )
        ProjectUserPermission.objects.bulk_create(
            [
                ProjectUserPermission(user_id=user.pk, permission=p, content_object=project)
                for p in permissions
            ],
            ignore_conflicts=True,  # a concurrent sync of the same membership wrote it first
        )
    _sync_staff_flag(user)


def _sync_staff_flag(user: AbstractBaseUser) -> None:
    """Owners and admins sign in at /admin/, so they need is_staff; others lose it again."""
    if getattr(user, "is_superuser", False):
        return
    needs_staff = any(
        privileged(role)
        for role in Membership.objects.filter(user_id=user.pk).values_list("role", flat=True)
    )
    if getattr(user, "is_staff", False) != needs_staff:
        get_user_model().objects.filter(pk=user.pk).update(is_staff=needs_staff)
        user.is_staff = needs_staff  # type: ignore[attr-defined]
