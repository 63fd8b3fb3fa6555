"""Why a client ID metadata document was refused: one code for the audit log, one sentence for
the person at the browser.

DOT turns every failed resolution into "unknown client" and, for a while, does not try that
URL again (CIMD_FAILURE_BACKOFF_SECONDS). The reason is therefore noted for this request
(identity.audit's notes) and remembered in the cache for as long as DOT's backoff lasts, so
that a repeated request is refused with the same clear reason.
"""

from __future__ import annotations

import hashlib

from django.core.cache import cache
from oauth2_provider.settings import oauth2_settings

# code (the audit log's error_code) -> what went wrong, as the error page says it
REASONS = {
    "cimd_not_https": "a client ID that is a URL must use https",
    "cimd_invalid_url": (
        "the URL is not a usable client ID (it needs a host and a path, and no user info, "
        "fragment, dot segments or characters outside ASCII)"
    ),
    "cimd_private_address": "the server does not fetch from that address",
    "cimd_unreachable": "the document could not be fetched",
    "cimd_tls_failed": "its https certificate could not be verified",
    "cimd_redirect": "the URL answered with a redirect, and documents are not fetched through one",
    "cimd_http_status": "the URL did not answer 200 OK",
    "cimd_not_json": "the answer is not a JSON object (application/json)",
    "cimd_too_large": "the document is larger than this server accepts",
    "cimd_client_id_mismatch": "the document's client_id is not the URL it was fetched from",
    "cimd_invalid_metadata": "the document does not describe a client this server can accept",
    "cimd_invalid_redirect_uri": "the document lists a redirect URI this server does not accept",
    "rate_limited": "too many new clients from this network; try again later",
    "registration_cap": "this server accepts no more new clients for now; try again later",
}
LIMIT_CODES = frozenset({"rate_limited", "registration_cap"})
_REMEMBER_PREFIX = "heyaira:cimd:refused:"


class Refused(Exception):
    """A document that cannot be used, and why (`code` from REASONS; `detail` for the log)."""

    def __init__(self, code: str, detail: str = "") -> None:
        super().__init__(f"{code}: {detail}" if detail else code)
        self.code = code
        self.detail = detail


def description(code: str, client_id: str) -> str:
    """The error page's sentence for a refused client ID."""
    return (
        f"HeyAira cannot use the description this application publishes at {client_id[:200]}: "
        f"{REASONS.get(code, 'it could not be used')}."
    )


def remember(client_id: str, code: str) -> None:
    cache.set(_key(client_id), code, oauth2_settings.CIMD_FAILURE_BACKOFF_SECONDS)


def remembered(client_id: str) -> str:
    return str(cache.get(_key(client_id)) or "")


def _key(client_id: str) -> str:
    # Hashed: a URL may be longer than a cache key may be.
    return _REMEMBER_PREFIX + hashlib.sha256(client_id.encode()).hexdigest()
