from __future__ import annotations

import sys
from typing import Any, BinaryIO

from django.core.management.base import BaseCommand, CommandError, CommandParser

from continuity.bundle.export import bundle_lines
from projects.models import Project


class Command(BaseCommand):
    help = "Write a project's portable bundle (docs/bundle.md): project_export SLUG [--output FILE]"

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("slug")
        parser.add_argument("--output", help="the file to write (default: standard output)")

    def handle(self, *args: Any, **options: Any) -> None:
        project = Project.objects.filter(slug=options["slug"]).first()
        if project is None:
            raise CommandError(f"No project {options['slug']!r}.")
        if options["output"]:
            with open(options["output"], "wb") as out:
                out.writelines(bundle_lines(project))
            self.stderr.write(f"Wrote the bundle of {project.slug} to {options['output']}")
            return
        # Bytes as they are: the bundle's digest covers them (no newline translation).
        target = getattr(self.stdout, "_out", sys.stdout)
        stream: BinaryIO | None = getattr(target, "buffer", None)
        for line in bundle_lines(project):
            if stream is not None:
                stream.write(line)
            else:
                target.write(line.decode())
        target.flush()
