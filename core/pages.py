"""Headers for the HTML pages people use (front door, sign-in, consent).

They are never framed (clickjacking a consent click is the classic attack), load nothing from
anywhere, and are not cached. Their Referrer-Policy is `same-origin`: links and redirects to
other sites (the OAuth client's redirect, which carries the code) get no Referer, while a form
posted to this site keeps its Origin, which Django's CSRF check compares with the trusted
origins. `no-referrer` would make Chromium send `Origin: null`, and every sign-in would fail.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import wraps
from typing import Any

from django.http import HttpRequest, HttpResponse

# No form-action: browsers apply it to the redirect that follows the consent POST, which goes to
# the client.
PAGE_POLICY = (
    "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'; base-uri 'none'"
)
REFERRER_POLICY = "same-origin"


def with_page_headers(response: HttpResponse) -> HttpResponse:
    response["Content-Security-Policy"] = PAGE_POLICY
    response["X-Frame-Options"] = "DENY"
    response["Referrer-Policy"] = REFERRER_POLICY
    response["Cache-Control"] = "no-store"
    return response


def people_page(view: Callable[..., HttpResponse]) -> Callable[..., HttpResponse]:
    @wraps(view)
    def wrapped(request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        return with_page_headers(view(request, *args, **kwargs))

    return wrapped
