"""manage.py create_api_key SLUG --user USERNAME [--scopes ...] [--expires-days N] (pinned)."""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import CommandError, call_command

from identity import authn
from projects.models import ApiKey
from tests.factories import World


def run(*args: str) -> list[str]:
    out = StringIO()
    call_command("create_api_key", *args, stdout=out)
    return out.getvalue().strip().splitlines()


def test_it_prints_the_secret_alone_on_the_last_line(world: World):
    lines = run("alpha", "--user", "carla")
    secret = lines[-1]
    assert secret.startswith("hak_")
    assert " " not in secret
    assert all(secret not in line for line in lines[:-1])
    key = ApiKey.objects.get()
    assert key.scopes == ["continuity:read", "continuity:write"]
    assert key.expires_at is None
    caller = authn.authenticate(f"Bearer {secret}", resource="mcp", request_id="r")
    assert caller.user_id == world.contributor.pk


def test_it_defaults_to_what_the_role_allows(world: World):
    run("alpha", "--user", "victor")
    assert ApiKey.objects.get().scopes == ["continuity:read"]


def test_it_takes_scopes_and_an_expiry(world: World):
    run(
        "alpha", "--user", "olivia", "--scopes", "continuity:read,audit:read", "--expires-days", "7"
    )
    key = ApiKey.objects.get()
    assert key.scopes == ["audit:read", "continuity:read"]
    assert key.expires_at is not None


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["nope", "--user", "carla"], "No project"),
        (["alpha", "--user", "oscar"], "not an active member"),
        (["alpha", "--user", "victor", "--scopes", "continuity:write"], "does not allow"),
        (["alpha", "--user", "carla", "--scopes", "admin"], "scopes"),
        (["alpha", "--user", "carla", "--expires-days", "0"], "expires_days"),
    ],
)
def test_it_refuses_bad_requests_with_a_message(world: World, args: list[str], message: str):
    with pytest.raises(CommandError, match=message):
        run(*args)
    assert not ApiKey.objects.exists()
