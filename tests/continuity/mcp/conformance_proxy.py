"""A header-adding reverse proxy for the MCP conformance suite, which cannot send credentials.

It forwards every request to the real, protected server unchanged (method, path, query, body
and headers, Host and Origin included, so the server's DNS-rebinding checks see what the suite
sent) and adds one header: `Authorization: Bearer <API key>`. Responses come back unchanged.
It is test harness only: the product has no way to switch authentication off.

One thing it cannot pass on as sent: whitespace around a header value (the 0.2 suite sends
`Mcp-Name:  server_identity  `). Its HTTP client (h11) refuses to send such a value, so the
proxy strips it, as RFC 9110 section 5.5 says a recipient does; what the server itself does with
it is tested directly (tests/continuity/mcp/test_envelope.py and test_transport.py).

Run: HEYAIRA_CONFORMANCE_API_KEY=hak_... python -m tests.continuity.mcp.conformance_proxy \
         --port 8765 --upstream http://127.0.0.1:8000
The key comes from the environment so that it never shows in a process list.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

import httpx2
import uvicorn

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]

API_KEY_VARIABLE = "HEYAIRA_CONFORMANCE_API_KEY"
# Per-connection headers (RFC 9110 section 7.6.1) are not forwarded; everything else is.
HOP_BY_HOP = frozenset(
    [
        "connection",
        "keep-alive",
        "proxy-connection",
        "te",
        "trailer",
        "transfer-encoding",
        "upgrade",
    ]
)


class HeaderAddingProxy:
    def __init__(self, upstream: str, api_key: str) -> None:
        self.upstream = upstream.rstrip("/")
        self.authorization = f"Bearer {api_key}".encode()
        # No timeout on reads: a server-sent event stream may stay open as long as the suite
        # wants it (our server answers JSON, but the proxy should not decide that).
        self.client = httpx2.AsyncClient(timeout=httpx2.Timeout(30.0, read=None))

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self._lifespan(receive, send)
            return
        if scope["type"] != "http":
            return
        body = await _read_body(receive)
        request = self.client.build_request(
            scope["method"],
            self._target(scope),
            headers=self._forwarded_headers(scope),
            content=body,
        )
        response = await self.client.send(request, stream=True)
        try:
            headers = [
                (name.encode("latin-1"), value.encode("latin-1"))
                for name, value in response.headers.multi_items()
                if name.lower() not in HOP_BY_HOP
            ]
            await send(
                {"type": "http.response.start", "status": response.status_code, "headers": headers}
            )
            # Raw bytes: whatever Content-Encoding and Content-Length say stays true.
            async for chunk in response.aiter_raw():
                await send({"type": "http.response.body", "body": chunk, "more_body": True})
            await send({"type": "http.response.body", "body": b"", "more_body": False})
        finally:
            await response.aclose()

    def _target(self, scope: Scope) -> str:
        query = scope.get("query_string", b"").decode("latin-1")
        return self.upstream + scope["raw_path"].decode("latin-1") + (f"?{query}" if query else "")

    def _forwarded_headers(self, scope: Scope) -> list[tuple[bytes, bytes]]:
        headers = [
            (name, value.strip(b" \t"))
            for name, value in scope["headers"]
            if name.decode("latin-1").lower() not in HOP_BY_HOP | {"authorization"}
        ]
        # An explicit Host header is sent as given (httpx2 only fills it in when absent).
        headers.append((b"authorization", self.authorization))
        return headers

    async def _lifespan(self, receive: Receive, send: Send) -> None:
        await receive()  # lifespan.startup
        await send({"type": "lifespan.startup.complete"})
        await receive()  # lifespan.shutdown
        await self.client.aclose()
        await send({"type": "lifespan.shutdown.complete"})


async def _read_body(receive: Receive) -> bytes:
    chunks: list[bytes] = []
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            break
        chunks.append(message.get("body", b""))
        if not message.get("more_body", False):
            break
    return b"".join(chunks)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--upstream", required=True, help="the real server, http://host:port")
    args = parser.parse_args()
    api_key = os.environ.get(API_KEY_VARIABLE)
    if not api_key:
        parser.error(f"{API_KEY_VARIABLE} is not set")
    proxy = HeaderAddingProxy(args.upstream, api_key)
    # No Server or Date header of its own: the upstream's pass through alone.
    uvicorn.run(
        proxy,
        host="127.0.0.1",
        port=args.port,
        log_level="warning",
        server_header=False,
        date_header=False,
    )


if __name__ == "__main__":
    main()
