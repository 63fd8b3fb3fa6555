"""Refresh-token reuse: presenting a rotated token after the repeat window revokes its whole
family (within the window it is answered again: test_refresh_window.py)."""

from __future__ import annotations

import pytest
from django.test import Client

from identity.models import RefreshToken
from tests.factories import World
from tests.identity.conftest import signed_in
from tests.identity.flows import (
    API,
    SHORT_WINDOW_SECONDS,
    after_the_window,
    bearer,
    events,
    issued_tokens,
    last_event,
    refresh,
    register,
    tokens_for,
)

pytestmark = pytest.mark.usefixtures("short_window")


@pytest.fixture
def short_window(settings):
    settings.HEYAIRA_REFRESH_REPEAT_WINDOW_SECONDS = SHORT_WINDOW_SECONDS


def test_it_revokes_the_family_when_a_rotated_token_comes_back(world: World, api: Client):
    oauth = register(api)
    first = tokens_for(signed_in(world.owner), oauth, world.alpha, resource=API)
    second = refresh(api, oauth, first["refresh_token"]).json()
    family = RefreshToken.objects.get(revoked__isnull=True).token_family
    after_the_window()

    replay = refresh(api, oauth, first["refresh_token"])

    assert replay.status_code == 400
    assert replay.json()["error"] == "invalid_grant"
    # The rotated token and the access token it carried die with the family.
    assert api.get("/api/v1/identity", headers=bearer(second["access_token"])).status_code == 401
    assert refresh(api, oauth, second["refresh_token"]).json()["error"] == "invalid_grant"
    assert not RefreshToken.objects.filter(token_family=family, revoked__isnull=True).exists()
    assert not issued_tokens().exists()
    security = events("oauth_refresh_reuse")[0]
    assert (security.outcome, security.error_code, security.target_id) == (
        "rejected",
        "family_revoked",
        str(family),
    )
    assert (security.project_id, security.user_id, security.client_id) == (
        world.alpha.pk,
        world.owner.pk,
        oauth.client_id,
    )
    assert events("oauth_token_refresh", outcome="rejected")[0].error_code == "refresh_reused"


def test_it_leaves_other_families_alone(world: World, api: Client):
    oauth = register(api)
    browser = signed_in(world.owner)
    stolen = tokens_for(browser, oauth, world.alpha)
    other = tokens_for(browser, oauth, world.alpha, resource=API)
    refresh(api, oauth, stolen["refresh_token"])
    after_the_window()
    refresh(api, oauth, stolen["refresh_token"])  # reuse: that family dies

    assert api.get("/api/v1/identity", headers=bearer(other["access_token"])).status_code == 200
    assert refresh(api, oauth, other["refresh_token"]).status_code == 200
    assert last_event("oauth_refresh_reuse").outcome == "rejected"
