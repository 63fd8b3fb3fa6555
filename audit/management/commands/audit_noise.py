"""audit_noise [--hours N] [--purge-older-than-days N]: the events counted instead of stored one
by one (audit.noise), newest window first: the rejections without a valid credential, per
source network, then a known actor's repeats (a revoked key used again, wrong passwords for an
account, page views), per chain and subject. Each total is exact."""

from __future__ import annotations

import datetime as dt
from typing import Any

from django.core.management.base import BaseCommand, CommandParser
from django.utils import timezone

from audit.chain import encode_time
from audit.models import AnonymousRejection, CountedEvent
from audit.noise import purge

LIMIT = 500


class Command(BaseCommand):
    help = "Show (or purge) the counts of anonymous rejections and of known actors' repeats."

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
        counted = CountedEvent.objects.filter(window_start__gte=since).order_by(
            "-window_start", "-count", "chain", "subject"
        )[:LIMIT]
        self.stdout.write("")
        self.stdout.write("window_start\tchain\tsubject\toperation\treason\tcount\tlast_at")
        for event in counted:
            self.stdout.write(
                f"{encode_time(event.window_start)}\t{event.chain}\t{event.subject}\t"
                f"{event.operation}\t{event.reason}\t{event.count}\t{encode_time(event.last_at)}"
            )
