"""The person at a real browser for the MCP SDK's OAuthClientProvider, and the client's loopback
redirect target.

`LoopbackCallback` is what a desktop MCP client runs: an HTTP listener on 127.0.0.1 that the
authorization server redirects the browser to. `ChromiumPerson` is the provider's
redirect_handler (Chromium opens the authorization URL, signs in, picks the project by its
label, clicks Allow or Deny) and callback_handler (hands back what reached the listener).
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

from mcp.shared.auth import AuthorizationCodeResult
from playwright.async_api import Page, Request, Response


@dataclass
class Arrival:
    """One request that reached the loopback listener."""

    path: str
    headers: dict[str, str]

    @property
    def query(self) -> dict[str, str]:
        return {name: values[0] for name, values in parse_qs(urlsplit(self.path).query).items()}


@dataclass
class LoopbackCallback:
    port: int
    arrivals: list[Arrival] = field(default_factory=list)

    @property
    def redirect_uri(self) -> str:
        return f"http://127.0.0.1:{self.port}/callback"

    @property
    def redirects(self) -> list[Arrival]:
        """The redirects back from the server (Chromium also asks for /favicon.ico)."""
        return [a for a in self.arrivals if urlsplit(a.path).path == "/callback"]


@contextmanager
def loopback_callback() -> Iterator[LoopbackCallback]:
    """A real listener on a free 127.0.0.1 port, answering every GET with a short page."""
    arrivals: list[Arrival] = []

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            arrivals.append(Arrival(self.path, {k.lower(): v for k, v in self.headers.items()}))
            body = b"<!doctype html><title>Done</title><p>You can close this window.</p>"
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: object) -> None:
            pass  # the test reads `arrivals`; nothing for stderr

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield LoopbackCallback(port=server.server_address[1], arrivals=arrivals)
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


class AuthorizationRefused(Exception):
    """The redirect back to the client carried an OAuth error instead of a code."""

    def __init__(self, error: str, arrival: Arrival) -> None:
        super().__init__(error)
        self.error = error
        self.arrival = arrival


@dataclass
class ChromiumPerson:
    page: Page
    callback: LoopbackCallback
    username: str
    password: str
    project_label: str = ""  # the consent page's label of the project to pick
    allow: bool = True
    sign_in_urls: list[str] = field(default_factory=list)  # where the server sent us to sign in
    consent_html: list[str] = field(default_factory=list)  # every consent page seen
    posts: list[Request] = field(default_factory=list)  # every form POST the browser made
    answers: list[tuple[str, int]] = field(default_factory=list)  # (path, status) of each POST

    def __post_init__(self) -> None:
        self.page.on("request", self._note_post)
        self.page.on("response", self._note_answer)

    def _note_post(self, request: Request) -> None:
        if request.method == "POST":
            self.posts.append(request)

    def _note_answer(self, response: Response) -> None:
        if response.request.method == "POST":
            self.answers.append((urlsplit(response.url).path, response.status))

    async def redirect_handler(self, authorization_url: str) -> None:
        page = self.page
        await page.goto(authorization_url)
        if urlsplit(page.url).path == "/accounts/login/":
            self.sign_in_urls.append(page.url)
            await page.get_by_label("Username").fill(self.username)
            await page.get_by_label("Password").fill(self.password)
            await page.get_by_role("button", name="Sign in").click()
            await page.wait_for_url("**/oauth/authorize/?**")
        await page.get_by_role("heading", level=1).wait_for()
        self.consent_html.append(await page.content())
        if self.allow:
            await page.get_by_label(self.project_label, exact=True).check()
            await page.get_by_role("button", name="Allow").click()
        else:
            await page.get_by_role("button", name="Deny").click()
        await page.wait_for_url(f"{self.callback.redirect_uri}?**")
        await page.get_by_text("You can close this window.").wait_for()

    async def callback_handler(self) -> AuthorizationCodeResult:
        arrival = self.callback.redirects[-1]
        query = arrival.query
        if "code" not in query:
            raise AuthorizationRefused(query.get("error", "no code"), arrival)
        return AuthorizationCodeResult(
            code=query["code"], state=query.get("state"), iss=query.get("iss")
        )
