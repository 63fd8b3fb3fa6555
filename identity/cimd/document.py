"""What a client ID metadata document must say before HeyAira accepts it as a client.

Checked here, in full, before DOT builds the Application from it, so that every refusal has
its own reason (DOT would only say "unknown client"):
- its `client_id` is exactly the URL it was fetched from (so no document can speak for
  another URL);
- a public client: `token_endpoint_auth_method` is "none" (absent means the same here, as in
  DOT), and no `client_secret` of any kind;
- the authorization code grant only, `response_types` ["code"];
- redirect URIs under the same rules as dynamic registration (https, or http to loopback);
  an authorization request must then name one of them exactly (RFC 8252's any-port rule for
  loopback aside), or it is refused before any page is shown;
- a `client_name` of at most 255 characters.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import SplitResult, urlsplit

from identity.cimd.refusals import Refused
from identity.policy import redirect_uri_problems

MAX_URL_LENGTH = 255  # Application.client_id's column
MAX_CLIENT_NAME = 255
GRANT_TYPES = frozenset({"authorization_code", "refresh_token"})


def is_url_client_id(client_id: str) -> bool:
    """A client_id that is a URL, whatever its scheme: only https ones can be documents."""
    return client_id[:8].lower().startswith(("https://", "http://"))


def parse_client_id(client_id: str) -> SplitResult:
    """The client_id as a URL it is safe to fetch (draft section 3), or Refused."""
    if client_id[:7].lower() == "http://":
        raise Refused("cimd_not_https")
    if not client_id.isascii() or len(client_id) > MAX_URL_LENGTH:
        raise Refused("cimd_invalid_url", "not ASCII, or too long")
    try:
        url = urlsplit(client_id)
        url.port  # noqa: B018 (raises ValueError on a malformed port)
    except ValueError:
        raise Refused("cimd_invalid_url", "malformed") from None
    if url.scheme != "https":
        raise Refused("cimd_not_https")
    segments = url.path.split("/")
    if (
        not url.hostname
        or url.username is not None
        or "@" in url.netloc
        or url.fragment
        or "#" in client_id
        or url.path in ("", "/")
        or "." in segments
        or ".." in segments
        or any(ord(ch) <= 0x20 or ord(ch) == 0x7F for ch in client_id)
    ):
        raise Refused("cimd_invalid_url")
    return url


def check_document(document: dict[str, Any], client_id: str) -> None:
    """Refused unless the document describes a client HeyAira accepts (see the module)."""
    if document.get("client_id") != client_id:
        raise Refused("cimd_client_id_mismatch")
    if document.get("token_endpoint_auth_method", "none") != "none":
        raise Refused("cimd_invalid_metadata", "not a public client")
    if any(name.startswith("client_secret") for name in document):
        raise Refused("cimd_invalid_metadata", "carries a client secret")
    grants = document.get("grant_types", ["authorization_code"])
    if (
        not isinstance(grants, list)
        or "authorization_code" not in grants
        or not set(grants) <= GRANT_TYPES
    ):
        raise Refused("cimd_invalid_metadata", "grant_types")
    if document.get("response_types", ["code"]) != ["code"]:
        raise Refused("cimd_invalid_metadata", "response_types")
    name = document.get("client_name", "")
    if not isinstance(name, str) or len(name) > MAX_CLIENT_NAME:
        raise Refused("cimd_invalid_metadata", "client_name")
    uris = document.get("redirect_uris")
    if not isinstance(uris, list) or not uris or not all(isinstance(u, str) for u in uris):
        raise Refused("cimd_invalid_redirect_uri", "redirect_uris is not a list of strings")
    if redirect_uri_problems(uris):
        raise Refused("cimd_invalid_redirect_uri")


def published_at(client_id: str) -> str:
    """The host (and port, if any) a metadata document client is published at: what the
    consent page shows, since the name inside the document proves nothing."""
    url = urlsplit(client_id)
    return url.netloc.rpartition("@")[2].lower()
