"""A refresh token presented again within the repeat window gets the rotation's own answer;
after it, or when the answer no longer stands, it is reuse and the family dies."""

from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import call_command
from django.test import Client

from identity.models import AccessToken, RefreshToken
from tests.factories import World
from tests.identity.conftest import signed_in
from tests.identity.flows import (
    API,
    SHORT_WINDOW_SECONDS,
    OAuthClient,
    after_the_window,
    bearer,
    events,
    last_event,
    refresh,
    register,
    tokens_for,
)


@pytest.fixture
def granted(world: World, api: Client) -> tuple[OAuthClient, dict[str, str]]:
    oauth = register(api)
    return oauth, tokens_for(signed_in(world.owner), oauth, world.alpha, resource=API)


def identity_status(api: Client, access_token: str) -> int:
    return int(api.get("/api/v1/identity", headers=bearer(access_token)).status_code)


def test_a_repeat_within_the_window_gets_the_same_answer(
    world: World, api: Client, granted: tuple[OAuthClient, dict[str, str]]
):
    oauth, first = granted
    rotated = refresh(api, oauth, first["refresh_token"])
    rows = (AccessToken.objects.count(), RefreshToken.objects.count())

    repeat = refresh(api, oauth, first["refresh_token"])

    assert repeat.status_code == 200, repeat.content
    assert repeat["Cache-Control"] == "no-store"
    answer, original = repeat.json(), rotated.json()
    assert answer["access_token"] == original["access_token"]
    assert answer["refresh_token"] == original["refresh_token"]
    assert answer["scope"] == original["scope"]
    assert 0 < answer["expires_in"] <= original["expires_in"]
    assert (AccessToken.objects.count(), RefreshToken.objects.count()) == rows  # nothing minted
    assert identity_status(api, answer["access_token"]) == 200
    assert refresh(api, oauth, answer["refresh_token"]).status_code == 200  # the family lives
    replayed = last_event("oauth_token_refresh", outcome="replayed")
    issued = events("oauth_token_refresh", outcome="success")[0]
    assert (replayed.target_id, replayed.credential_fingerprint) == (
        issued.target_id,
        issued.credential_fingerprint,
    )
    assert (replayed.project_id, replayed.user_id) == (world.alpha.pk, world.owner.pk)
    assert not events("oauth_refresh_reuse")


def test_a_repeat_after_the_window_revokes_the_family(
    api: Client, granted: tuple[OAuthClient, dict[str, str]], settings
):
    settings.HEYAIRA_REFRESH_REPEAT_WINDOW_SECONDS = SHORT_WINDOW_SECONDS
    oauth, first = granted
    second = refresh(api, oauth, first["refresh_token"]).json()
    after_the_window()

    late = refresh(api, oauth, first["refresh_token"])

    assert late.status_code == 400
    assert late.json()["error"] == "invalid_grant"
    assert identity_status(api, second["access_token"]) == 401
    assert refresh(api, oauth, second["refresh_token"]).json()["error"] == "invalid_grant"
    assert last_event("oauth_refresh_reuse").error_code == "family_revoked"


def test_a_window_of_zero_makes_every_second_use_reuse(
    api: Client, granted: tuple[OAuthClient, dict[str, str]], settings
):
    settings.HEYAIRA_REFRESH_REPEAT_WINDOW_SECONDS = 0
    oauth, first = granted
    second = refresh(api, oauth, first["refresh_token"]).json()

    assert refresh(api, oauth, first["refresh_token"]).json()["error"] == "invalid_grant"
    assert identity_status(api, second["access_token"]) == 401
    assert not RefreshToken.objects.exclude(successor_sealed="").exists()  # nothing sealed


def test_a_repeat_is_reuse_once_the_new_token_was_revoked(
    api: Client, granted: tuple[OAuthClient, dict[str, str]]
):
    oauth, first = granted
    second = refresh(api, oauth, first["refresh_token"]).json()
    revoked = api.post(
        "/oauth/revoke/",
        {"token": second["refresh_token"], "client_id": oauth.client_id},
    )
    assert revoked.status_code == 200

    assert refresh(api, oauth, first["refresh_token"]).json()["error"] == "invalid_grant"
    assert last_event("oauth_refresh_reuse").outcome == "rejected"


def test_a_repeat_is_reuse_once_the_new_token_was_itself_rotated(
    api: Client, granted: tuple[OAuthClient, dict[str, str]]
):
    oauth, first = granted
    second = refresh(api, oauth, first["refresh_token"]).json()
    third = refresh(api, oauth, second["refresh_token"]).json()

    assert refresh(api, oauth, first["refresh_token"]).json()["error"] == "invalid_grant"
    assert identity_status(api, third["access_token"]) == 401


def test_another_client_presenting_the_token_is_never_answered(
    api: Client, granted: tuple[OAuthClient, dict[str, str]]
):
    oauth, first = granted
    second = refresh(api, oauth, first["refresh_token"]).json()
    thief = register(api, name="Someone else")

    stolen = refresh(api, thief, first["refresh_token"])

    assert stolen.status_code == 400
    assert "access_token" not in stolen.json()
    assert identity_status(api, second["access_token"]) == 401  # the family died


def test_the_sealed_answer_opens_only_with_the_token_that_was_presented(
    api: Client, granted: tuple[OAuthClient, dict[str, str]]
):
    oauth, first = granted
    second = refresh(api, oauth, first["refresh_token"]).json()
    sealed = RefreshToken.objects.exclude(successor_sealed="").get().successor_sealed
    for secret in (second["access_token"], second["refresh_token"], first["refresh_token"]):
        assert secret not in sealed

    from django.utils import timezone

    from identity import refresh_window

    row = RefreshToken.objects.exclude(successor_sealed="").get()
    now = timezone.now()
    assert refresh_window.repeat_of(row, "not-the-token", row.application_id, now) is None
    assert refresh_window.repeat_of(row, first["refresh_token"], row.application_id, now)


def test_sealed_answers_are_wiped_after_the_window(
    api: Client, granted: tuple[OAuthClient, dict[str, str]], settings
):
    settings.HEYAIRA_REFRESH_REPEAT_WINDOW_SECONDS = SHORT_WINDOW_SECONDS
    oauth, first = granted
    second = refresh(api, oauth, first["refresh_token"]).json()
    after_the_window()
    # The family's next rotation wipes the answers whose window has passed...
    third = refresh(api, oauth, second["refresh_token"]).json()
    sealed = RefreshToken.objects.exclude(successor_sealed="")
    assert sealed.count() == 1  # only the one just sealed
    after_the_window()
    # ...and the purge command wipes the rest.
    output = StringIO()
    call_command("purge_oauth", stdout=output)
    assert not sealed.exists()
    assert "wiped 1 expired refresh answers" in output.getvalue()
    assert identity_status(api, third["access_token"]) == 200


def test_a_repeat_is_reuse_once_the_new_access_token_is_gone(
    api: Client, granted: tuple[OAuthClient, dict[str, str]]
):
    oauth, first = granted
    second = refresh(api, oauth, first["refresh_token"]).json()
    AccessToken.objects.filter(project__isnull=False).delete()  # as an operator might

    repeat = refresh(api, oauth, first["refresh_token"])

    assert repeat.status_code == 400  # never a 500, never a dead token handed out again
    assert repeat.json()["error"] == "invalid_grant"
    assert refresh(api, oauth, second["refresh_token"]).json()["error"] == "invalid_grant"
