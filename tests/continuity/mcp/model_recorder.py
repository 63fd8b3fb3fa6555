"""A model API played by a recorder on 127.0.0.1, for real MCP clients that need one to start a
turn: the Gemini CLI (`GOOGLE_GEMINI_BASE_URL`) and the Codex CLI (a `model_providers` entry).

No model can be reached from these machines. The clients themselves are real: each connects to
/mcp, lists the tools and converts them for its model API, and the request it then sends is
exactly what a model would be given. The recorder keeps every request body and answers the
shortest turn each API allows (one text part, "done"), so the client ends cleanly.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

GEMINI_ANSWER = {
    "candidates": [
        {"content": {"role": "model", "parts": [{"text": "done"}]}, "finishReason": "STOP"}
    ],
    "usageMetadata": {"promptTokenCount": 1, "candidatesTokenCount": 1, "totalTokenCount": 2},
}
USAGE = {"input_tokens": 1, "output_tokens": 1, "total_tokens": 2}
RESPONSES_EVENTS = (
    {"type": "response.created", "response": {"id": "r1"}},
    {
        "type": "response.output_item.done",
        "item": {
            "type": "message",
            "role": "assistant",
            "id": "m1",
            "content": [{"type": "output_text", "text": "done"}],
        },
    },
    {"type": "response.completed", "response": {"id": "r1", "usage": USAGE}},
)


@dataclass
class Recorder:
    url: str
    requests: list[tuple[str, Any]] = field(default_factory=list)

    def bodies(self, path_part: str) -> list[dict[str, Any]]:
        return [
            body for path, body in self.requests if path_part in path and isinstance(body, dict)
        ]


def _handler(recorder: Recorder) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            pass

        def do_GET(self) -> None:
            recorder.requests.append((self.path, None))
            self._send("application/json", b'{"models": [], "data": []}')

        def do_POST(self) -> None:
            length = int(self.headers.get("content-length") or 0)
            raw = self.rfile.read(length)
            try:
                body: Any = json.loads(raw)
            except ValueError:
                body = None
            recorder.requests.append((self.path, body))
            if "/responses" in self.path:  # OpenAI's Responses API, streamed
                events = b"".join(
                    f"event: {event['type']}\ndata: {json.dumps(event)}\n\n".encode()
                    for event in RESPONSES_EVENTS
                )
                self._send("text/event-stream", events)
            elif "alt=sse" in self.path:  # Gemini's streamGenerateContent
                self._send("text/event-stream", f"data: {json.dumps(GEMINI_ANSWER)}\n\n".encode())
            else:
                self._send("application/json", json.dumps(GEMINI_ANSWER).encode())

        def _send(self, content_type: str, body: bytes) -> None:
            self.send_response(200)
            self.send_header("content-type", content_type)
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

    return Handler


@contextmanager
def model_recorder() -> Iterator[Recorder]:
    recorder = Recorder(url="")
    server = ThreadingHTTPServer(("127.0.0.1", 0), _handler(recorder))
    recorder.url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield recorder
    finally:
        server.shutdown()
        server.server_close()
        thread.join()
