from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from core.errors import HeyAiraError
from projects.services import project_create


class Command(BaseCommand):
    help = "Create a project with its first owner: create_project SLUG --name NAME --owner USERNAME"

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("slug")
        parser.add_argument("--name", required=True)
        parser.add_argument("--owner", required=True, help="username of the first owner")

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            project = project_create(
                slug=options["slug"],
                name=options["name"],
                owner_username=options["owner"],
                operator="manage.py create_project",
            )
        except HeyAiraError as error:
            raise CommandError(error.message) from None
        self.stdout.write(
            f"Created project {project.slug} ({project.pk}), owner {options['owner']}"
        )
