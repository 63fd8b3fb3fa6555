from __future__ import annotations

from typing import Any

from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand, CommandError, CommandParser

from core.access import Role
from core.errors import HeyAiraError
from projects.callers import operator_caller
from projects.models import Membership, Project
from projects.services import membership_add, membership_change


class Command(BaseCommand):
    help = "Add a user to a project, or change their role: add_member SLUG USERNAME ROLE"

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("slug")
        parser.add_argument("username")
        parser.add_argument("role", choices=Role.values)

    def handle(self, *args: Any, **options: Any) -> None:
        project = Project.objects.filter(slug=options["slug"]).first()
        if project is None:
            raise CommandError(f"No project with slug {options['slug']!r}.")
        user = get_user_model().objects.filter(username=options["username"]).first()
        if user is None:
            raise CommandError(f"No user named {options['username']!r}.")
        caller = operator_caller(project, label="manage.py add_member")
        existing = Membership.objects.filter(project=project, user=user).first()
        try:
            if existing is None:
                membership_add(caller, user_id=user.pk, role=options["role"])
                verb = "Added"
            else:
                membership_change(caller, membership_id=existing.pk, role=options["role"])
                verb = "Changed"
        except HeyAiraError as error:
            raise CommandError(error.message) from None
        self.stdout.write(f"{verb}: {user.get_username()} is {options['role']} of {project.slug}")
