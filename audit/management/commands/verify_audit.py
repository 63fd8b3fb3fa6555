"""verify_audit [SLUG | --security] [--checkpoint FILE] [--file EXPORT]

Walks each chain (or one) and names the first edited, inserted or missing event; with
--checkpoint (lines printed by audit_checkpoint) it also detects a chain cut short of a stored
head. With --file it checks an export (audit_export) without touching the database. Exits 1
when anything is wrong. Each database run is stored (audit.state.chain_state shows it)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from audit.management.commands._chains import add_chain_arguments, chains_from
from audit.proof import ChainReport, Checkpoint
from audit.verify import chain_names, read_checkpoints, verify_chain, verify_file


class Command(BaseCommand):
    help = "Verify the audit hash chains (or an export file) and name the first problem."

    def add_arguments(self, parser: CommandParser) -> None:
        add_chain_arguments(parser, required=False)
        parser.add_argument("--file", help="an export from audit_export, checked offline")
        parser.add_argument("--checkpoint", help="a file of lines printed by audit_checkpoint")

    def handle(self, *args: Any, **options: Any) -> None:
        points = _checkpoints(options["checkpoint"])
        if options["file"]:
            reports = self._file(Path(options["file"]), points)
        else:
            names = chains_from(options["slug"], options["security"]) or chain_names()
            reports = [verify_chain(chain, checkpoints=points) for chain in names]
        for report in reports:
            self._print(report)
        if not all(report.ok for report in reports):
            self.stdout.flush()
            sys.exit(1)

    def _file(self, path: Path, points: list[Checkpoint]) -> list[ChainReport]:
        try:
            with path.open(encoding="utf-8", newline="") as lines:
                filtered, reports = verify_file(lines, checkpoints=points)
        except (OSError, ValueError, KeyError) as error:
            raise CommandError(f"{path}: {error}") from None
        self.stdout.write(f"{path}: {'a filtered' if filtered else 'a complete'} export")
        return reports

    def _print(self, report: ChainReport) -> None:
        state = "ok" if report.ok else "FAILED"
        line = f"{report.chain}: {state}, {report.events} events, verified to {report.verified_seq}"
        if report.filtered_gaps:
            line += f", {len(report.filtered_gaps)} gaps from filtering"
        self.stdout.write(line)
        for problem in report.problems:
            self.stdout.write(f"  {problem}")


def _checkpoints(path: str | None) -> list[Checkpoint]:
    if not path:
        return []
    try:
        with open(path, encoding="utf-8") as lines:
            return list(read_checkpoints(lines))
    except (OSError, ValueError, KeyError) as error:
        raise CommandError(f"{path}: {error}") from None
