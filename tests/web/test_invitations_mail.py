"""How an invitation travels when mail does not: the page says so and shows the link, with no
mail server (production's default), with a mail server that refuses the connection, and which
backend the settings pick (SMTP with EMAIL_HOST, the console with DEBUG, else none)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from django.test import Client

from projects.models import Invitation
from tests.factories import World

ROOT = Path(__file__).resolve().parents[2]
PAGE = "/projects/alpha/invitations/"


def _invite_and_open(world: World) -> str:
    client = Client()
    client.force_login(world.owner)
    response = client.post(PAGE, {"email": "nina@example.com", "role": "viewer"})
    assert response.status_code == 302
    return client.get(response["Location"]).content.decode()


@pytest.mark.django_db
def test_without_a_mail_server_the_page_says_so_and_shows_the_link(world: World, settings):
    settings.EMAIL_BACKEND = "django.core.mail.backends.dummy.EmailBackend"

    page = _invite_and_open(world)

    assert "This server sends no mail (EMAIL_HOST is not set)" in page
    assert 'id="invitation-link"' in page
    assert Invitation.objects.count() == 1


@pytest.mark.django_db
def test_a_mail_server_that_refuses_leaves_the_invitation_and_shows_the_link(
    world: World, settings, caplog: pytest.LogCaptureFixture
):
    with socket.socket() as probe:  # a port nothing listens on once closed
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    settings.EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
    settings.EMAIL_HOST, settings.EMAIL_PORT, settings.EMAIL_TIMEOUT = "127.0.0.1", port, 5

    page = _invite_and_open(world)

    assert "The mail could not be sent (ConnectionRefusedError)" in page
    assert 'id="invitation-link"' in page
    link = page.split('id="invitation-link">', 1)[1].split("<", 1)[0]
    assert link not in caplog.text  # the failure is logged, the link never


@pytest.mark.live
@pytest.mark.parametrize(
    ("env", "backend"),
    [
        ({"DEBUG": "false"}, "dummy"),
        ({"DEBUG": "true"}, "console"),
        ({"DEBUG": "false", "EMAIL_HOST": "smtp.example.com"}, "smtp"),
        (
            {"DEBUG": "false", "EMAIL_BACKEND": "django.core.mail.backends.filebased.EmailBackend"},
            "filebased",
        ),
    ],
)
def test_the_settings_pick_the_mail_backend(env: dict[str, str], backend: str, tmp_path: Path):
    drop = ("DEBUG", "EMAIL_", "DJANGO_", "HEYAIRA_", "PYTEST", "SECRET_KEY")
    base = {k: v for k, v in os.environ.items() if not k.startswith(drop)}
    base.update(
        SECRET_KEY="x" * 50,
        HEYAIRA_API_KEY_PEPPER="y" * 50,
        HEYAIRA_QUICKSTART_ENV=str(tmp_path / "absent.env"),
        DJANGO_SETTINGS_MODULE="heyaira.settings",
    )
    done = subprocess.run(
        [sys.executable, "-c", "from django.conf import settings; print(settings.EMAIL_BACKEND)"],
        cwd=ROOT,
        env={**base, **env},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"django.core.mail.backends.{backend}.EmailBackend"
