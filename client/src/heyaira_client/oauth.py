"""`heyaira login`: OAuth 2.1 with PKCE through the person's browser, on a loopback redirect.

The SDK's OAuthClientProvider does discovery, dynamic registration, PKCE S256, the `resource`
parameter and the token exchange; this module supplies what a desktop client must: a listener on
127.0.0.1 that the browser is redirected to (RFC 8252), opening the browser, and storage.
"""

from __future__ import annotations

import sys
import threading
import webbrowser
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

import anyio
from mcp.shared.auth import AuthorizationCodeResult, OAuthClientMetadata

from heyaira_client.errors import CredentialMissing, HeyAiraClientError
from heyaira_client.profile import Profile
from heyaira_client.tokens import FileTokenStorage, StoredExpiryProvider

CLIENT_NAME = "heyaira CLI"
_DONE_PAGE = (
    b"<!doctype html><meta charset=utf-8><title>HeyAira</title>"
    b"<p>Signed in to HeyAira. You can close this window.</p>"
)


class LoginFailed(HeyAiraClientError):
    exit_code = 4


@dataclass
class Callback:
    port: int
    query: dict[str, str] = field(default_factory=dict)
    arrived: threading.Event = field(default_factory=threading.Event)

    @property
    def redirect_uri(self) -> str:
        return f"http://127.0.0.1:{self.port}/callback"


@contextmanager
def loopback_listener(port: int = 0) -> Iterator[Callback]:
    """An HTTP listener on 127.0.0.1 for the authorization server's redirect."""
    holder: list[Callback] = []

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            parts = urlsplit(self.path)
            status = 404
            if parts.path == "/callback" and not holder[0].arrived.is_set():
                query = {k: v[0] for k, v in parse_qs(parts.query).items()}
                holder[0].query.update(query)
                holder[0].arrived.set()
                status = 200
            self.send_response(status)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(_DONE_PAGE)))
            self.end_headers()
            self.wfile.write(_DONE_PAGE)

        def log_message(self, format: str, *args: object) -> None:
            pass  # the query carries the code: never print it

    server = ThreadingHTTPServer(("127.0.0.1", port), Handler)
    holder.append(Callback(port=int(server.server_address[1])))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield holder[0]
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


def open_in_browser(url: str) -> None:
    print(f"Opening the browser to sign in. If it does not open, visit:\n  {url}", file=sys.stderr)
    webbrowser.open(url)


def print_only(url: str) -> None:
    print(f"Visit this URL to sign in:\n  {url}", file=sys.stderr, flush=True)


def _metadata(redirect_uri: str) -> OAuthClientMetadata:
    return OAuthClientMetadata(
        client_name=CLIENT_NAME,
        redirect_uris=[redirect_uri],
        grant_types=["authorization_code", "refresh_token"],
        token_endpoint_auth_method="none",  # noqa: S106 (a public client: PKCE, no secret)
    )


def login_provider(
    profile: Profile, callback: Callback, open_url: Callable[[str], None], timeout: float
) -> StoredExpiryProvider:
    """A provider that sends the person to the browser and waits for the loopback redirect."""

    async def redirect_handler(authorization_url: str) -> None:
        open_url(authorization_url)

    async def callback_handler() -> AuthorizationCodeResult:
        with anyio.fail_after(timeout):
            while not callback.arrived.is_set():
                await anyio.sleep(0.1)
        query = callback.query
        if "code" not in query:
            raise LoginFailed(f"the authorization server answered {query.get('error', 'no code')}")
        return AuthorizationCodeResult(
            code=query["code"], state=query.get("state"), iss=query.get("iss")
        )

    storage = FileTokenStorage(profile.name, profile.resource)
    storage.forget()  # a fresh login: no old tokens or client registration in the way
    return StoredExpiryProvider(
        server_url=profile.url,
        client_metadata=_metadata(callback.redirect_uri),
        storage=storage,
        redirect_handler=redirect_handler,
        callback_handler=callback_handler,
    )


def stored_provider(profile: Profile) -> StoredExpiryProvider:
    """For every command but login: stored tokens, refreshed when they expire; never a browser."""
    storage = FileTokenStorage(profile.name, profile.resource)
    if not storage.has_tokens():
        raise CredentialMissing(f"profile {profile.name} has no OAuth login: run `heyaira login`")

    async def no_browser(authorization_url: str) -> None:
        raise CredentialMissing(
            f"the OAuth login of profile {profile.name} has expired: run `heyaira login`"
        )

    async def no_callback() -> AuthorizationCodeResult:
        raise CredentialMissing("no OAuth login")

    return StoredExpiryProvider(
        server_url=profile.url,
        client_metadata=_metadata("http://127.0.0.1/callback"),
        storage=storage,
        redirect_handler=no_browser,
        callback_handler=no_callback,
    )
