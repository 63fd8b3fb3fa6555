"""A request body read ahead of the application, handed to it again as ASGI messages."""

from __future__ import annotations

from starlette.types import Message, Receive


def replayed(body: bytes, then: Receive | None = None) -> Receive:
    """A receive callable: `body` as the whole request, then the connection's own messages
    (`then`), or a disconnect when no connection stands behind the body."""
    sent = False

    async def receive() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        if then is None:
            return {"type": "http.disconnect"}
        return await then()

    return receive
