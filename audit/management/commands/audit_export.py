"""audit_export SLUG|--security [--format jsonl|csv] [--output FILE]: a whole chain, streamed in
constant memory, in the format `verify_audit --file` checks offline (audit.export)."""

from __future__ import annotations

import sys
from typing import Any, TextIO

from django.core.management.base import BaseCommand, CommandError, CommandParser

from audit.export import export_csv, export_jsonl
from audit.management.commands._chains import add_chain_arguments, chains_from
from audit.models import AuditEvent

FORMATS = {"jsonl": export_jsonl, "csv": export_csv}


class Command(BaseCommand):
    help = "Export a project's audit chain (or the security chain) as JSON Lines or CSV."

    def add_arguments(self, parser: CommandParser) -> None:
        add_chain_arguments(parser, required=False)
        parser.add_argument("--format", choices=sorted(FORMATS), default="jsonl")
        parser.add_argument("--output", help="a file to write (default: standard output)")

    def handle(self, *args: Any, **options: Any) -> None:
        names = chains_from(options["slug"], options["security"])
        if names is None:
            raise CommandError("name a project's slug, or --security")
        events = AuditEvent.objects.filter(chain__in=names)
        lines = FORMATS[options["format"]](events, filtered=False)
        if options["output"]:
            with open(options["output"], "w", encoding="utf-8", newline="") as out:
                _write(out, lines)
        else:
            _write(sys.stdout, lines)


def _write(out: TextIO, lines: Any) -> None:
    for line in lines:
        out.write(line)
