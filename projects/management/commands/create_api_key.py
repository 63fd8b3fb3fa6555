"""manage.py create_api_key SLUG --user USERNAME [--scopes ...] [--expires-days N] (pinned).

The secret is printed once, alone on the last line, so scripts can take it with `tail -n 1`.
"""

from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError, CommandParser

from core.access import Scope, scopes_for_role
from core.errors import HeyAiraError
from projects.api_keys import api_key_create
from projects.callers import operator_caller
from projects.models import Project
from projects.roles import member_role

DEFAULT_SCOPES = (Scope.CONTINUITY_READ, Scope.CONTINUITY_WRITE)


class Command(BaseCommand):
    help = "Create a project API key acting for a member; prints the secret once, on the last line."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("slug", help="the project's slug")
        parser.add_argument("--user", required=True, help="the member the key acts for")
        parser.add_argument(
            "--scopes",
            help="comma-separated scopes (default: continuity:read and continuity:write, as far "
            "as the member's role allows)",
        )
        parser.add_argument("--expires-days", type=int, help="days until the key expires")
        parser.add_argument("--label", default="manage.py", help="a name to recognise the key by")

    def handle(self, *args: Any, **options: Any) -> None:
        project = Project.objects.filter(slug=options["slug"]).first()
        if project is None:
            raise CommandError(f"No project with slug {options['slug']!r}.")
        user = get_user_model().objects.filter(username=options["user"]).first()
        role = member_role(project_id=project.pk, user_id=user.pk) if user else None
        if user is None or role is None:
            raise CommandError(f"{options['user']!r} is not an active member of {project.slug}.")
        if options["scopes"]:
            scopes = [part.strip() for part in options["scopes"].split(",") if part.strip()]
        else:
            allowed = {str(scope) for scope in scopes_for_role(role)}
            scopes = [str(scope) for scope in DEFAULT_SCOPES if str(scope) in allowed]
        try:
            issued = api_key_create(
                operator_caller(project, label="manage.py create_api_key"),
                user_id=user.pk,
                label=options["label"],
                scopes=scopes,
                expires_days=options["expires_days"],
            )
        except HeyAiraError as error:
            raise CommandError(_explain(error)) from None
        key = issued.api_key
        expiry = key.expires_at.isoformat() if key.expires_at else "never"
        self.stdout.write(
            f"API key {key.pk} for {user.get_username()} in {project.slug} "
            f"(scopes: {' '.join(key.scopes)}; expires: {expiry}). "
            "Copy the secret below now: it is not stored and cannot be shown again."
        )
        self.stdout.write(issued.secret)


def _explain(error: HeyAiraError) -> str:
    fields = getattr(error, "fields", None)
    if fields:
        return "; ".join(f"{name}: {problem}" for name, problem in fields.items())
    return error.message
