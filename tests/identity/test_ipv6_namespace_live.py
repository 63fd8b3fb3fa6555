"""Real IPv6 clients: in a private network namespace, two /64 prefixes are bound on loopback
(any address in them usable as a source), the server listens on [::], and every request comes
from a connection with a source address of its own. Sixty registrations from sixty addresses of
one /64 are held to the limit of 20 an hour, the next /64 is another client, and the sign-in
lockout closes the whole /64 while the next one signs in.

The server here uses a SQLite database of its own: PostgreSQL's 127.0.0.1 is outside the
namespace. tests/identity/test_limits_per_network_live.py drives the production set-up (gunicorn
behind a trusted proxy) with the same clients named by X-Forwarded-For."""

from __future__ import annotations

import ipaddress
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.live import LiveServer, live_environment, sqlite_database
from tests.readme_runner import REPO, Sandbox, sandbox_available

pytestmark = pytest.mark.skipif(
    not sandbox_available(), reason="needs unshare --net (a private network namespace)"
)

SERVER = "2001:db8:77:1::1"
NETWORK = "2001:db8:77:1"  # the /64 the clients share
OTHER = "2001:db8:77:2"  # another /64: another client
PORT = 8000
PASSWORD = "a-long-namespace-password-4"
SETUP = [
    ["ip", "-6", "addr", "add", f"{SERVER}/64", "dev", "lo"],
    # Every address of both prefixes is local, and may be bound before it is configured.
    ["ip", "-6", "route", "add", "local", f"{NETWORK}::/64", "dev", "lo"],
    ["ip", "-6", "route", "add", "local", f"{OTHER}::/64", "dev", "lo"],
    ["sysctl", "-q", "-w", "net.ipv6.ip_nonlocal_bind=1"],
]

# Runs inside the namespace: each request on a connection from its own source address.
CLIENT = r"""
import http.client, json, re, time

def request(source, method, path, body=None, headers=None):
    connection = http.client.HTTPConnection(SERVER, PORT, timeout=30, source_address=(source, 0))
    try:
        connection.request(method, path, body=body, headers=headers or {})
        answer = connection.getresponse()
        return answer.status, answer.getheader("Set-Cookie") or "", answer.read().decode()
    finally:
        connection.close()

def wait_until_up(source):
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            if request(source, "GET", "/healthz")[0] == 200:
                return True
        except OSError:
            time.sleep(0.2)
    return False

def register(sources, metadata):
    body = json.dumps(metadata)
    headers = {"Content-Type": "application/json"}
    return [request(s, "POST", "/oauth/register/", body, headers)[0] for s in sources]

def sign_in(source, password):
    _, cookie, page = request(source, "GET", "/accounts/login/")
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page).group(1)
    form = f"username=olivia&password={password}&csrfmiddlewaretoken={token}"
    headers = {"Content-Type": "application/x-www-form-urlencoded",
               "Cookie": cookie.split(";", 1)[0]}
    return request(source, "POST", "/accounts/login/", form, headers)[0]

def main(action, sources, **arguments):
    if action == "up":
        return wait_until_up(sources[0])
    if action == "register":
        return register(sources, arguments["metadata"])
    return [sign_in(s, p) for s, p in zip(sources, arguments["passwords"])]
"""


def hosts(prefix: str, count: int) -> list[str]:
    return [f"{prefix}:{n + 1:x}:{n * 13 % 65536:x}:{n * 7:x}:{n + 3:x}" for n in range(count)]


@pytest.fixture
def namespace_server(tmp_path: Path) -> Iterator[tuple[Sandbox, LiveServer]]:
    url = f"http://[{SERVER}]:{PORT}"
    env = live_environment(url, sqlite_database(tmp_path))
    env.update(ALLOWED_HOSTS=f"[{SERVER}]", HEYAIRA_DCR_RATE_LIMIT_PER_HOUR="20")
    box = Sandbox(REPO, env)
    live = LiveServer(url=url, env=env, log_path=tmp_path / "server.log")
    try:
        for step in SETUP:
            subprocess.run(box.enter(step), check=True, timeout=30)
        command = (
            f"exec {sys.executable} -m uvicorn heyaira.asgi:application --host :: "
            f"--port {PORT} --no-proxy-headers"
        )
        server = box.start(command, live.log_path)
        assert _client(box, "up", [f"{NETWORK}::99"]), server.text()
        yield box, live
    finally:
        live.close_shell()
        box.close()  # stops the server with the namespace


def _client(box: Sandbox, action: str, sources: list[str], **arguments: object) -> object:
    code = f"SERVER, PORT = {SERVER!r}, {PORT}\n{CLIENT}"
    return box.python(code, action=action, sources=sources, **arguments)


def _sources_seen(log: str) -> set[str]:
    """The client addresses uvicorn's access log names, written the one canonical way."""
    found = re.findall(r"\[?([0-9a-f:]+:[0-9a-f:]+)\]?:\d+ - \"", log)
    return {str(ipaddress.ip_address(address)) for address in found}


def test_sixty_registrations_from_sixty_addresses_of_one_64_are_held_to_the_limit(
    namespace_server: tuple[Sandbox, LiveServer],
):
    box, live = namespace_server
    metadata = {"redirect_uris": ["https://c.example/cb"], "token_endpoint_auth_method": "none"}
    sources = hosts(NETWORK, 60)
    started = time.monotonic()
    answers = _client(box, "register", sources, metadata=metadata)
    other = _client(box, "register", [f"{OTHER}::5"], metadata=metadata)
    assert isinstance(answers, list)
    print(
        f"\n60 addresses of one /64: {answers.count(201)} registered, {answers.count(429)} "
        f"refused ({time.monotonic() - started:.1f} s)"
    )
    canonical = {str(ipaddress.ip_address(source)) for source in sources}
    assert canonical <= _sources_seen(live.log_text())  # each really came from its own
    assert (answers.count(201), answers.count(429)) == (20, 40)
    assert other == [201]


def test_the_sign_in_lockout_closes_the_whole_64(namespace_server: tuple[Sandbox, LiveServer]):
    box, live = namespace_server
    live.add_person("olivia", PASSWORD, "alpha", "owner")
    sources = hosts(NETWORK, 12)
    passwords = ["wrong-Guess-123"] * 11 + [PASSWORD]
    answers = _client(box, "sign_in", sources, passwords=passwords)
    outside = _client(box, "sign_in", [f"{OTHER}::8"], passwords=[PASSWORD])
    assert answers == [200] * 10 + [429, 429]  # the right password too, from a new address
    assert outside == [302]
