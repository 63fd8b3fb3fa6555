"""The one ASGI application: the MCP endpoint at exactly /mcp, the REST API under /api/v1/ on
the database threads (runtime.api_handler), static files under /static/, Django for everything
else. Before any of them, every HTTP request's body is capped (heyaira.bodies): nothing reads
more than its path's cap, authenticated or not.

The SDK's session manager must be running for /mcp to answer, so this application handles the
ASGI lifespan itself (Django's handler does not) and enters the manager there; each worker
process runs its own, which is fine because /mcp is stateless.
"""

from __future__ import annotations

import os

from django.conf import settings
from django.core.asgi import get_asgi_application
from starlette.exceptions import HTTPException
from starlette.responses import PlainTextResponse
from starlette.staticfiles import StaticFiles
from starlette.types import Receive, Scope, Send

from heyaira.envconfig import or_exit_on_config_error

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "heyaira.settings")
django_application = or_exit_on_config_error(get_asgi_application)

# Imported after Django is set up: the MCP transport uses models.
from audit.recorder import log_pending  # noqa: E402
from continuity.mcp.asgi import McpEndpoint  # noqa: E402
from continuity.mcp.server import build_session_manager  # noqa: E402
from heyaira.bodies import BodyLimits, capped  # noqa: E402
from heyaira.proxies import client_address, forwarded_values  # noqa: E402
from runtime import pool_checks  # noqa: E402
from runtime.api_handler import ApiHandler  # noqa: E402

MCP_PATH = "/mcp"
API_PREFIX = "/api/v1/"
STATIC_PREFIX = settings.STATIC_URL.rstrip("/")


class HeyAiraApplication:
    def __init__(self) -> None:
        self.manager = build_session_manager()
        self.mcp = McpEndpoint(self.manager)
        self.api = ApiHandler()
        # collectstatic's output (the admin's CSS and scripts), served asynchronously.
        self.static = StaticFiles(directory=settings.STATIC_ROOT, check_dir=False)
        self.body_limits = BodyLimits.from_settings()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] in ("http", "websocket") and settings.HEYAIRA_TRUSTED_PROXIES:
            scope = _with_client_address(scope)
        if scope["type"] == "http":
            chunked = any(name.lower() == b"transfer-encoding" for name, _ in scope["headers"])
            limit = self.body_limits.for_path(scope["path"], chunked=chunked)
            await capped(self._serve, limit, scope, receive, send)
        elif scope["type"] == "lifespan":
            await self._lifespan(receive, send)
        else:
            await django_application(scope, receive, send)  # type: ignore[arg-type]

    async def _serve(self, scope: Scope, receive: Receive, send: Send) -> None:
        """An HTTP request whose body fits its cap, to the part that serves its path."""
        if scope["path"] == MCP_PATH:
            await self.mcp(scope, receive, send)
        elif scope["path"].startswith(API_PREFIX):
            await self.api(scope, receive, send)
        elif scope["path"].startswith(f"{STATIC_PREFIX}/"):
            await self._static(scope, receive, send)
        else:
            await django_application(scope, receive, send)  # type: ignore[arg-type]

    async def _static(self, scope: Scope, receive: Receive, send: Send) -> None:
        root_path = scope.get("root_path", "") + STATIC_PREFIX
        try:
            await self.static({**scope, "root_path": root_path}, receive, send)
        except HTTPException as error:
            # Outside a Starlette app nothing turns this into a response: a missing file is a
            # 404 (or a 405 for a POST), never a 500.
            answer = PlainTextResponse(str(error.detail), status_code=error.status_code)
            await answer(scope, receive, send)

    async def _lifespan(self, receive: Receive, send: Send) -> None:
        await receive()  # lifespan.startup
        async with self.manager.run():
            await send({"type": "lifespan.startup.complete"})
            await receive()  # lifespan.shutdown
        # Servers may end the process by a signal after this, skipping atexit.
        log_pending()
        await send({"type": "lifespan.shutdown.complete"})


def _with_client_address(scope: Scope) -> Scope:
    """The client behind a trusted proxy becomes the scope's client (heyaira.proxies)."""
    peer = scope.get("client") or ("", 0)
    forwarded = forwarded_values(scope.get("headers", []))
    address = client_address(str(peer[0]), forwarded, settings.HEYAIRA_TRUSTED_PROXIES)
    if address == peer[0]:
        return scope
    return {**scope, "client": (address, 0)}


pool_checks.connect()
application = HeyAiraApplication()
