from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from continuity.bundle.format import BundleError
from continuity.bundle.load import import_bundle


class Command(BaseCommand):
    help = (
        "Import a project: project_import FILE [--slug NEW_SLUG] [--owner USERNAME] [--dry-run]"
        " (a bundle, docs/bundle.md)"
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("path", help="the bundle file")
        parser.add_argument("--slug", help="the project's slug here (default: the bundle's)")
        parser.add_argument("--owner", help="username made an owner of the imported project")
        parser.add_argument(
            "--dry-run", action="store_true", help="check and report; import nothing"
        )

    def handle(self, *args: Any, **options: Any) -> None:
        try:
            with open(options["path"], "rb") as bundle:
                report = import_bundle(
                    bundle,
                    slug=options["slug"],
                    owner=options["owner"],
                    dry_run=options["dry_run"],
                )
        except OSError as error:
            raise CommandError(f"Cannot read {options['path']}: {error.strerror}") from None
        except BundleError as error:
            raise CommandError(f"Refused: {error}. Nothing was imported.") from None
        for line in report.lines():
            self.stdout.write(line)
