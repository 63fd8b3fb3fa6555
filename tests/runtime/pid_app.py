"""An ASGI application that answers every request with the pid of the worker serving it: which
worker holds a connection is what the balanced worker's tests look at. At /heap: the worker's
garbage-collector settings (runtime.heap), as "<frozen objects> <youngest threshold>"."""

from __future__ import annotations

import gc
import os
from typing import Any


async def app(scope: dict[str, Any], receive: Any, send: Any) -> None:
    if scope["type"] == "lifespan":
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                await send({"type": "lifespan.shutdown.complete"})
                return
    if scope["path"] == "/heap":
        body = f"{gc.get_freeze_count()} {gc.get_threshold()[0]}".encode()
    else:
        body = str(os.getpid()).encode()
    await send(
        {
            "type": "http.response.start",
            "status": 200,
            "headers": [(b"content-type", b"text/plain"), (b"content-length", b"%d" % len(body))],
        }
    )
    await send({"type": "http.response.body", "body": body})
