from __future__ import annotations

from datetime import timedelta
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError, CommandParser
from django.utils import timezone

from continuity.models import IdempotencyRecord


class Command(BaseCommand):
    help = "Delete idempotency records older than the retention (at least 24 hours)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--older-than-hours",
            type=int,
            default=settings.HEYAIRA_IDEMPOTENCY_RETENTION_HOURS,
            help="age in hours (default: HEYAIRA_IDEMPOTENCY_RETENTION_HOURS, minimum: that too)",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        hours: int = options["older_than_hours"]
        minimum = settings.HEYAIRA_IDEMPOTENCY_RETENTION_HOURS
        if hours < minimum:
            # A younger key may still be retried by a client; purging it would turn a safe
            # retry into a duplicate.
            raise CommandError(f"--older-than-hours must be at least {minimum} (the retention)")
        cutoff = timezone.now() - timedelta(hours=hours)
        deleted, _ = IdempotencyRecord.objects.filter(created_at__lt=cutoff).delete()
        self.stdout.write(f"Deleted {deleted} idempotency records older than {hours} hours.")
