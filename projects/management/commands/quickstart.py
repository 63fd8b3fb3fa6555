"""First-run setup for `make run`: on an empty database, an owner account and a demo project."""

from __future__ import annotations

import secrets
import string
from typing import Any

from django.conf import settings
from django.contrib.auth import get_user_model
from django.core.management.base import BaseCommand

from projects.services import project_create

OWNER_USERNAME = "owner"
DEMO_SLUG = "demo"


class Command(BaseCommand):
    help = (
        "On an empty database, create an owner account (password printed once) and a demo project."
    )

    def handle(self, *args: Any, **options: Any) -> None:
        User = get_user_model()
        if User.objects.exists():
            self.stdout.write("HeyAira: accounts exist already; nothing to set up.")
            return
        password = _printable_password()
        User.objects.create_superuser(username=OWNER_USERNAME, email="", password=password)
        project_create(
            slug=DEMO_SLUG,
            name="Demo project",
            owner_username=OWNER_USERNAME,
            operator="quickstart",
        )
        origin = settings.HEYAIRA_PUBLIC_URL
        self.stdout.write(
            "\n".join(
                [
                    "",
                    "HeyAira is set up. This password is shown only once:",
                    f"  user:     {OWNER_USERNAME}",
                    f"  password: {password}",
                    f"  admin:    {origin}/admin/",
                    f"  project:  {DEMO_SLUG}",
                    "",
                ]
            )
        )


def _printable_password(length: int = 20) -> str:
    """Letters and digits only (about 119 bits): a token_urlsafe password can start with "-",
    which a command line then reads as an option when the owner pastes it."""
    alphabet = string.ascii_letters + string.digits
    return "".join(secrets.choice(alphabet) for _ in range(length))
