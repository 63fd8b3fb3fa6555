"""The one-time page after creating an API key: the secret shows once, and neither the cookie
nor the session alone can show it again."""

from __future__ import annotations

import re

from django.test import Client

from projects.admin_reveal import COOKIE
from projects.models import ApiKey
from tests.factories import World
from tests.identity.conftest import signed_in

ADD = "/admin/projects/apikey/add/"
SECRET = re.compile(r"hak_[0-9a-f]{12}_[A-Za-z0-9_-]{43}")


def create(browser: Client, world: World) -> tuple[str, str]:
    """(the one-time page's URL, the sealed cookie the browser got)."""
    response = browser.post(
        ADD,
        {
            "project": str(world.alpha.pk),
            "username": "carla",
            "label": "ci",
            "scopes": ["continuity:read"],
            "expires_days": "",
        },
    )
    assert response.status_code == 302, response.content
    return response["Location"], response.cookies[COOKIE].value


def test_it_keeps_the_secret_out_of_the_cookie_and_the_session(world: World):
    browser = signed_in(world.owner)
    url, sealed = create(browser, world)
    assert not SECRET.search(sealed)
    assert not SECRET.search(str(dict(browser.session)))
    assert SECRET.search(browser.get(url).content.decode())


def test_it_shows_nothing_to_a_replayed_cookie(world: World):
    browser = signed_in(world.owner)
    url, sealed = create(browser, world)
    assert SECRET.search(browser.get(url).content.decode())
    browser.cookies[COOKIE] = sealed  # as if copied from a proxy log or a cookie jar
    assert not SECRET.search(browser.get(url).content.decode())
    assert ApiKey.objects.count() == 1


def test_it_shows_nothing_to_the_cookie_in_another_session(world: World):
    browser = signed_in(world.owner)
    url, sealed = create(browser, world)
    elsewhere = signed_in(world.owner)  # the same person, another session
    elsewhere.cookies[COOKIE] = sealed
    assert not SECRET.search(elsewhere.get(url).content.decode())


def test_it_shows_the_page_only_to_those_who_manage_the_project(world: World):
    url, _ = create(signed_in(world.owner), world)
    assert signed_in(world.outsider).get(url).status_code == 404  # beta's owner


def test_it_keeps_no_entry_for_a_page_never_opened(world: World):
    browser = signed_in(world.owner)
    create(browser, world)  # its page never opened
    url, _ = create(browser, world)
    entries = [name for name in browser.session.keys() if "api_key_reveal" in name]  # noqa: SIM118
    assert len(entries) == 1
    assert SECRET.search(browser.get(url).content.decode())
    assert not [name for name in browser.session.keys() if "api_key_reveal" in name]  # noqa: SIM118
