from __future__ import annotations

from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand

from identity import refresh_window, registration


class Command(BaseCommand):
    help = (
        "Remove registered OAuth clients (dynamic registration or client ID metadata "
        "documents) that never obtained a token within HEYAIRA_UNUSED_CLIENT_HOURS, and wipe "
        "the sealed answers of refresh tokens whose repeat window has passed. Run it as often "
        "as `cleartokens` (hourly is fine)."
    )

    def handle(self, *args: Any, **options: Any) -> None:
        clients = registration.purge_unused()
        answers = refresh_window.wipe_expired()
        hours = settings.HEYAIRA_UNUSED_CLIENT_HOURS
        self.stdout.write(
            f"Removed {clients} clients unused for {hours} hours after registration; "
            f"wiped {answers} expired refresh answers."
        )
