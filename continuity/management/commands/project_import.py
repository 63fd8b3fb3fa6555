from __future__ import annotations

from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from continuity.bundle.format import BundleError
from continuity.bundle.load import import_bundle
from continuity.bundle.sources import READERS
from continuity.bundle.sources.mapping import ImportRefused, apply

OPERATOR = "manage.py project_import"


class Command(BaseCommand):
    help = (
        "Import a project: project_import FILE [--slug NEW_SLUG] [--owner USERNAME] [--dry-run]"
        " (a bundle, docs/bundle.md), or project_import --from beads|claude-code-tasks|markdown"
        " PATH --slug SLUG [--owner USERNAME] [--apply] (another tool's files; a dry run unless"
        " --apply)"
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("path", help="the bundle file, or the other tool's file or folder")
        parser.add_argument("--from", dest="tool", choices=sorted(READERS), help="another tool")
        parser.add_argument("--slug", help="the project's slug here (default: the bundle's)")
        parser.add_argument("--owner", help="username made an owner of the imported project")
        parser.add_argument(
            "--dry-run", action="store_true", help="a bundle: check and report; import nothing"
        )
        parser.add_argument(
            "--apply", action="store_true", help="--from: import (the default is a dry run)"
        )

    def handle(self, *args: Any, **options: Any) -> None:
        if options["tool"]:
            self._from_tool(options)
        else:
            self._bundle(options)

    def _bundle(self, options: dict[str, Any]) -> None:
        if options["apply"]:
            raise CommandError("--apply goes with --from; a bundle imports unless --dry-run.")
        try:
            with open(options["path"], "rb") as bundle:
                report = import_bundle(
                    bundle,
                    slug=options["slug"],
                    owner=options["owner"],
                    dry_run=options["dry_run"],
                    operator=OPERATOR,
                )
        except OSError as error:
            raise CommandError(f"Cannot read {options['path']}: {error.strerror}") from None
        except BundleError as error:
            raise CommandError(f"Refused: {error}. Nothing was imported.") from None
        for line in report.lines():
            self.stdout.write(line)

    def _from_tool(self, options: dict[str, Any]) -> None:
        if not options["slug"]:
            raise CommandError("--from needs --slug SLUG: the new project's slug.")
        path = Path(options["path"])
        if not path.exists():
            raise CommandError(f"Cannot read {path}: no such file or folder")
        mapping = READERS[options["tool"]](path)
        for line in mapping.lines():
            self.stdout.write(line)
        if not options["apply"]:
            self.stdout.write("Dry run: nothing was imported; run again with --apply to import.")
            return
        if not options["owner"]:
            raise CommandError("--apply needs --owner USERNAME: the new project's owner.")
        try:
            project = apply(
                mapping, slug=options["slug"], owner=options["owner"], operator=OPERATOR
            )
        except ImportRefused as error:
            raise CommandError(f"Refused: {error}. Nothing was imported.") from None
        self.stdout.write(f"Imported into project {project.slug} ({project.pk}).")
