"""People in the admin, without the parts of Django's auth that HeyAira does not use.

What a person may do comes from their roles in projects (Membership, with the object
permissions derived from it) and, for operators, the superuser flag. Django's groups and global
model permissions play no part in that: every HeyAira page asks the project role or a
per-project grant, never a global permission. So Groups is not listed, and a person's page
offers no Groups or User permissions boxes, which would look like a way to grant access and
grant nothing HeyAira honours.
"""

from __future__ import annotations

from django.contrib import admin
from django.contrib.auth import get_user_model
from django.contrib.auth.admin import UserAdmin
from django.contrib.auth.models import Group

admin.site.unregister(Group)
admin.site.unregister(get_user_model())

_PERMISSIONS_HELP = (
    "Roles in projects decide what someone may do (Memberships). Superusers may do everything; "
    "staff status follows from being an owner or admin of a project."
)


@admin.register(get_user_model())
class PersonAdmin(UserAdmin):
    list_filter = ("is_staff", "is_superuser", "is_active")
    filter_horizontal = ()
    fieldsets = (
        (None, {"fields": ("username", "password")}),
        ("Personal info", {"fields": ("first_name", "last_name", "email")}),
        (
            "Permissions",
            {"fields": ("is_active", "is_staff", "is_superuser"), "description": _PERMISSIONS_HELP},
        ),
        ("Important dates", {"fields": ("last_login", "date_joined")}),
    )
