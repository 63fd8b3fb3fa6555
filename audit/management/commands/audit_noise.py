"""audit_noise [--hours N] [--purge-older-than-days N]: the rejections without a valid
credential, counted per window, source, operation and reason (audit.noise), newest first."""

from __future__ import annotations

import datetime as dt
from typing import Any

from django.core.management.base import BaseCommand, CommandParser
from django.utils import timezone

from audit.chain import encode_time
from audit.models import AnonymousRejection
from audit.noise import purge

LIMIT = 500


class Command(BaseCommand):
    help = "Show (or purge) the counts of anonymous rejections."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--hours", type=int, default=24, help="windows of the last N hours")
        parser.add_argument("--purge-older-than-days", type=int, default=None)

    def handle(self, *args: Any, **options: Any) -> None:
        days = options["purge_older_than_days"]
        if days is not None:
            removed = purge(dt.timedelta(days=max(days, 1)))
            self.stdout.write(f"removed {removed} counts older than {max(days, 1)} days")
            return
        since = timezone.now() - dt.timedelta(hours=options["hours"])
        rows = AnonymousRejection.objects.filter(window_start__gte=since).order_by(
            "-window_start", "-count", "source"
        )[:LIMIT]
        self.stdout.write("window_start\tsource\toperation\treason\tcount\tlast_at")
        for row in rows:
            self.stdout.write(
                f"{encode_time(row.window_start)}\t{row.source}\t{row.operation}\t"
                f"{row.reason}\t{row.count}\t{encode_time(row.last_at)}"
            )
