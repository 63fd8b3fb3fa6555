"""Request bodies are capped before anyone is authenticated, on the production server (gunicorn
with the balanced uvicorn worker): a 1 GB chunked body from nobody is refused 413 after the
cap, unread, with nothing spooled under the server's TMPDIR; a declared Content-Length over the
cap is refused without reading a byte; and a small chunked body is read whole."""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator
from pathlib import Path

import httpx2
import pytest

from tests.heyaira.body_flood import ONE_GB, TempWatch, flood
from tests.live import LiveServer, start_live_server, stop_live_server

# The default caps (heyaira/settings.py).
CAPS = {"/api/v1/memories": 1 << 20, "/oauth/register/": 16 << 10, "/accounts/login/": 64 << 10}
# What the kernel's socket buffers may take on loopback before the sender blocks: the bytes a
# client gets rid of once the server has stopped reading are this, not the body.
SOCKET_BUFFERS = 64 << 20
PASSWORD = "a-long-test-password-1"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LiveServer]:
    workdir = tmp_path_factory.mktemp("bodies")
    temp = workdir / "tmp"
    temp.mkdir()
    live, pg_name = start_live_server(workdir, gunicorn=True, extra_env={"TMPDIR": str(temp)})
    try:
        yield live
    finally:
        stop_live_server(live, pg_name)


def _port(server: LiveServer) -> int:
    return int(server.url.rsplit(":", 1)[1])


def _temp_dir(server: LiveServer) -> Path:
    return Path(server.env["TMPDIR"])


@pytest.mark.parametrize("path", list(CAPS))
def test_a_gigabyte_chunked_anonymous_body_is_refused_unread(server: LiveServer, path: str):
    assert server.process is not None
    with TempWatch(server.process.pid, _temp_dir(server)) as watch:
        sent = flood(_port(server), path, total=ONE_GB)
    print(
        f"\n{path}: {sent.status} after {sent.seconds * 1000:.0f} ms; the socket took "
        f"{sent.accepted / (1 << 20):.1f} MiB of 1024; TMPDIR held at most {watch.most} bytes"
    )
    assert sent.status == 413, sent.answer[:300]
    assert sent.accepted < SOCKET_BUFFERS  # the server stopped reading
    assert watch.most <= CAPS[path]


def test_a_declared_length_over_the_cap_is_refused_without_reading(server: LiveServer):
    with socket.create_connection(("127.0.0.1", _port(server)), timeout=10) as sock:
        sock.sendall(
            b"POST /oauth/register/ HTTP/1.1\r\nHost: 127.0.0.1\r\n"
            b"Content-Type: application/json\r\nContent-Length: 1073741824\r\n\r\n"
        )
        answer = sock.recv(4096)  # not one byte of the body was sent
    assert answer.startswith(b"HTTP/1.1 413 "), answer


def test_each_path_answers_413_in_its_own_shape(server: LiveServer):
    big = b"{" + b" " * (2 << 20) + b"}"
    with httpx2.Client(base_url=server.url, timeout=30) as http:
        mcp = http.post("/mcp", content=big, headers={"content-type": "application/json"})
        rest = http.post("/api/v1/memories", content=big, headers={"X-Request-ID": "big-1"})
        page = http.post("/accounts/login/", content=big)
    assert mcp.status_code == rest.status_code == page.status_code == 413
    assert mcp.json()["error"]["code"] == "validation_error"
    error = rest.json()["error"]
    assert (error["code"], set(error["fields"])) == ("validation_error", {"body"})
    assert rest.headers["x-request-id"] == "big-1"
    assert page.headers["content-type"].startswith("text/html")
    assert "too large" in page.text


def test_a_small_chunked_json_body_is_read_whole(server: LiveServer):
    server.add_person("olivia", PASSWORD, "alpha", "owner")
    secret = server.manage("create_api_key", "alpha", "--user", "olivia").strip().splitlines()[-1]
    auth = {"Authorization": f"Bearer {secret}", "Content-Type": "application/json"}
    with httpx2.Client(base_url=server.url, timeout=30, headers=auth) as http:
        write_context = http.get("/api/v1/identity").json()["write_context"]
        body = json.dumps(
            {"write_context": write_context, "kind": "note", "content": "sent in chunks"}
        ).encode()
        # An iterator body goes out chunked, without Content-Length.
        chunks = iter([body[:10], body[10:40], body[40:]])
        answer = http.post("/api/v1/memories", content=chunks)
        assert answer.request.headers.get("transfer-encoding") == "chunked"
        assert "content-length" not in answer.request.headers
        assert answer.status_code == 201, answer.text
        stored = http.get(f"/api/v1/memories/{answer.json()['id']}").json()
    assert stored["memory"]["content"] == "sent in chunks"


def test_refusals_are_counted_as_anonymous_noise(server: LiveServer):
    with httpx2.Client(base_url=server.url, timeout=30) as http:
        for _ in range(3):
            assert http.post("/oauth/token/", content=b"x" * (32 << 10)).status_code == 413
    counted = server.run_python(
        "from django.db.models import Sum\n"
        "from audit.models import AnonymousRejection, AuditEvent\n"
        "rows = AnonymousRejection.objects.filter(operation='request_body')\n"
        "result = [rows.aggregate(n=Sum('count'))['n'],"
        " AuditEvent.objects.filter(operation='request_body').count()]"
    )
    total, audited = counted
    assert total >= 3  # the floods of the other tests count too
    assert 1 <= audited <= 2  # the first of a window (two if one ended meanwhile)


def _largest_task_update(write_context: dict[str, str]) -> bytes:
    """A task update with a work receipt, every text at its cap and every character one that
    JSON writes as a 12-byte escape (a surrogate pair): the REST API's largest valid write."""
    wide = "\U0001f600"

    def text(length: int) -> str:
        return wide * length

    receipt = {
        "session_ref": "s" * 200,
        "summary": text(4000),
        "tests": [{"name": text(300), "result": "passed"} for _ in range(100)],
        "commits": [f"{n:064x}" for n in range(100)],
        "next_step": text(2000),
        "blockers": [text(500) for _ in range(20)],
    }
    body = {
        "write_context": write_context,
        "next_step": text(2000),
        "blockers": [text(500) for _ in range(20)],
        "handoff_note": text(4000),
        "work_receipt": receipt,
    }
    return json.dumps(body).encode()  # ensure_ascii: the escapes


def test_the_largest_valid_rest_write_fits_under_its_cap(server: LiveServer):
    server.add_person("olivia", PASSWORD, "alpha", "owner")
    secret = server.manage("create_api_key", "alpha", "--user", "olivia").strip().splitlines()[-1]
    auth = {"Authorization": f"Bearer {secret}", "Content-Type": "application/json"}
    with httpx2.Client(base_url=server.url, timeout=60, headers=auth) as http:
        write_context = http.get("/api/v1/identity").json()["write_context"]
        task = http.post(
            "/api/v1/tasks",
            json={"write_context": write_context, "title": "Big", "description": "A big update"},
        ).json()
        body = _largest_task_update(write_context)
        answer = http.patch(
            f"/api/v1/tasks/{task['id']}", content=body, headers={"If-Match": '"1"'}
        )
    print(f"\nthe largest valid REST write: {len(body)} bytes of a {CAPS['/api/v1/memories']} cap")
    assert answer.status_code == 200, answer.text[:500]
    assert len(body) <= CAPS["/api/v1/memories"]
