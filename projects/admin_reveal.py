"""Show a new API key's secret (or an invitation's link) once, on a page reached by a redirect,
without keeping it.

The POST that creates a key answers with a redirect (POST/redirect/GET), so reloading the page
never posts again; before, reloading the response page minted a second key. The page the
redirect leads to must still show the secret, once. HeyAira stores the secret nowhere (not in
the database, a cookie, the session, the cache or a log), so it is split in two halves that
reveal nothing apart:

- the browser holds the secret encrypted (Fernet: AES-CBC with an HMAC and a time stamp) in a
  cookie that only the one-time page receives (its path), HttpOnly, SameSite=Strict, 60 s;
- the server holds the random one-time key for that ciphertext in the person's session (a
  database row every worker reads, unlike the default per-process cache), under the key's id.

Opening the page pops the one-time key from the session and deletes the cookie. A reload, a
second tab, or a cookie replayed from a proxy log or a cookie jar finds no key: the ciphertext
left behind can never be decrypted. A database dump holds only the random key, never the secret.
(Two requests racing with the same session could both read the key before either saves the
session; both come from the same signed-in browser, which already holds the secret.)
"""

from __future__ import annotations

import json
import uuid

from cryptography.fernet import Fernet, InvalidToken
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.http import HttpRequest, HttpResponse

COOKIE = "heyaira_new_api_key"
LIFETIME_SECONDS = 60
_SESSION_PREFIX = "heyaira.api_key_reveal."
# What else is shown once this way, by kind: (its cookie, its session prefix).
_KINDS = {
    "api_key": (COOKIE, _SESSION_PREFIX),
    "invitation": ("heyaira_new_invitation", "heyaira.invitation_reveal."),
}


def seal(
    request: HttpRequest,
    response: HttpResponse,
    *,
    key_id: uuid.UUID,
    secret: str,
    kind: str = "api_key",
) -> None:
    """Give the browser the encrypted secret for the one-time page at `response`'s redirect."""
    cookie, prefix = _KINDS[kind]
    if settings.SESSION_ENGINE.endswith("signed_cookies"):
        # Such a session travels in a cookie too: the two halves would sit side by side.
        raise ImproperlyConfigured("The one-time pages need a server-side session engine.")
    one_time_key = Fernet.generate_key()
    sealed = Fernet(one_time_key).encrypt(json.dumps([str(key_id), secret]).encode())
    # A page never opened leaves its entry behind (its cookie is long gone): drop it.
    names = list(request.session.keys())  # a session has keys() but is not iterable
    for name in names:
        if name.startswith(prefix):
            del request.session[name]
    request.session[prefix + str(key_id)] = one_time_key.decode()
    response.set_cookie(
        cookie,
        sealed.decode(),
        max_age=LIFETIME_SECONDS,
        path=response["Location"],
        secure=request.is_secure(),
        httponly=True,
        samesite="Strict",
    )


def open_once(
    request: HttpRequest, response: HttpResponse, *, key_id: uuid.UUID, kind: str = "api_key"
) -> str | None:
    """The secret, the first time the one-time page is opened within its lifetime; else None.
    Either way, nothing is left to open it again."""
    cookie, prefix = _KINDS[kind]
    one_time_key = request.session.pop(prefix + str(key_id), None)
    sealed = request.COOKIES.get(cookie)
    response.delete_cookie(cookie, path=request.path, samesite="Strict")
    if not one_time_key or not sealed:
        return None
    try:
        opened = Fernet(one_time_key.encode()).decrypt(sealed.encode(), ttl=LIFETIME_SECONDS)
    except (InvalidToken, ValueError):
        return None
    sealed_id, secret = json.loads(opened)
    return str(secret) if sealed_id == str(key_id) else None
