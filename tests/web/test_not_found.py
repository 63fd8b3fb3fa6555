"""An unknown path answers a plain 404 page of ours, never Django's debug page (which lists every
URL pattern) when DEBUG is off."""

from __future__ import annotations

from django.conf import settings
from django.test import Client


def test_it_answers_an_unknown_path_with_our_own_404_page(db, client: Client):
    assert settings.DEBUG is False
    response = client.get("/no/such/page/")
    html = response.content.decode()
    assert response.status_code == 404
    assert "<h1>Page not found</h1>" in html
    assert 'href="/"' in html
    # Django's debug page names the URLconf and lists every pattern it tried.
    assert "URLconf" not in html
    assert "oauth/authorize/" not in html
    assert "api/v1/" not in html
