"""`heyaira login` as a person does it: the CLI (a real process) prints the authorization URL,
the person opens it in Chromium, signs in, picks the project and allows; the server redirects
the browser to the CLI's own loopback listener, and the CLI exchanges the code (PKCE, through
the SDK's OAuthClientProvider) and stores the tokens owner-only. Later commands use them, and
refresh them when they expire, without a browser."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import anyio
import pytest

from tests.browser import async_browser_context
from tests.client.conftest import PASSWORD, Home, Seat
from tests.identity.chromium_consent import ChromiumPerson, LoopbackCallback

pytestmark = pytest.mark.live_server


async def log_in_through_chromium(home: Home, seat: Seat) -> tuple[subprocess.Popen[str], str]:
    process = subprocess.Popen(
        [sys.executable, "-m", "heyaira_client", "login", "--no-browser", "--timeout", "120"],
        env=home.env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stderr is not None
    url = ""
    while not url.startswith("http"):
        line = await anyio.to_thread.run_sync(process.stderr.readline)
        assert line, f"login printed no URL: {process.communicate()}"
        url = line.strip()
    redirect = parse_qs(urlsplit(url).query)["redirect_uri"][0]
    async with async_browser_context() as context:
        person = ChromiumPerson(
            page=await context.new_page(),
            callback=LoopbackCallback(port=int(urlsplit(redirect).port or 0)),
            username=seat.username,
            password=PASSWORD,
            project_label=f"{seat.slug.title()} ({seat.slug}, you are owner)",
        )
        await person.redirect_handler(url)
    await anyio.to_thread.run_sync(lambda: process.wait(60))
    return process, url


def test_login_runs_pkce_through_the_browser_and_keeps_the_tokens_owner_only(
    home: Home, seat: Seat
):
    seat.saved(home, credential="oauth")

    process, url = anyio.run(log_in_through_chromium, home, seat)

    assert process.stdout is not None
    out = process.stdout.read()
    assert process.returncode == 0, (out, process.stderr.read() if process.stderr else "")
    assert f"logged in: {seat.username} as owner of" in out
    query = parse_qs(urlsplit(url).query)
    assert query["code_challenge_method"] == ["S256"]
    assert query["resource"] == [seat.profile().url]
    assert urlsplit(query["redirect_uri"][0]).hostname == "127.0.0.1"

    tokens = home.state / "tokens" / "work.json"
    assert tokens.stat().st_mode & 0o777 == 0o600
    assert tokens.parent.stat().st_mode & 0o777 == 0o700
    assert home.state.stat().st_mode & 0o777 == 0o700
    stored = json.loads(tokens.read_text())
    assert stored["resource"] == seat.profile().url
    first_refresh = stored["tokens"]["refresh_token"]

    whoami = home.cli("whoami", "--json")
    assert whoami.returncode == 0, whoami.stderr
    assert json.loads(whoami.stdout)["identity"]["principal"]["credential"] == "oauth_token"
    assert home.cli("note", "Written with an OAuth login.").returncode == 0

    # The access token has expired: the next command refreshes it (rotation), no browser.
    stored["expires_at"] = 0
    tokens.write_text(json.dumps(stored))
    again = home.cli("whoami")
    assert again.returncode == 0, again.stderr
    refreshed = json.loads(tokens.read_text())
    assert refreshed["tokens"]["refresh_token"] != first_refresh
    assert refreshed["expires_at"] > 0
    assert seat.counts()["memories"] == 1


def test_commands_without_a_login_say_so(home: Home, seat: Seat):
    seat.saved(home, credential="oauth")

    done = home.cli("whoami")

    assert done.returncode == 4
    assert "run `heyaira login`" in done.stderr
    assert not Path(home.state / "tokens" / "work.json").exists()
