"""The real ASGI app in a subprocess, and a headless browser that signs in and consents.

`asgi_server` starts `uvicorn heyaira.asgi:application` on 127.0.0.1 with a free port, its own
database (a SQLite file, or a fresh PostgreSQL database when the test run uses PostgreSQL),
DEBUG off and test secrets. Tests and server share data only through that database: set it up
with `server.run_python(...)` / `server.add_person(...)` (manage.py against the same database,
run by one helper process per server, tests/live_shell.py), and talk to the server over HTTP.

`ConsentBrowser` plays the person for the MCP SDK's OAuthClientProvider: its redirect_handler
follows the authorization URL through sign-in and the consent form, and its callback_handler
returns the code from the final redirect. It posts the forms over HTTP, which is fast; the real
path, a person in headless Chromium, is tests/identity/test_browser_consent_sdk.py (with
tests/identity/chromium_consent.py). Usage (see tests/identity/test_end_to_end_sdk.py):

    browser = ConsentBrowser(username="olivia", password="...", project_slug="alpha")
    provider = OAuthClientProvider(server_url=server.url + "/mcp", client_metadata=...,
        storage=MemoryTokenStorage(), redirect_handler=browser.redirect_handler,
        callback_handler=browser.callback_handler)
"""

from __future__ import annotations

import atexit
import json
import os
import select
import shutil
import socket
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urljoin, urlsplit

import httpx2
import psycopg
import pytest
from django.conf import settings
from mcp.shared.auth import AuthorizationCodeResult

from scripts.continuity_protocol_smoke import MemoryStorage, forms_of

REPO = Path(__file__).resolve().parent.parent
LIVE_SECRET_KEY = "live-test-secret-key-not-for-production-0123456789abcdef"
LIVE_PEPPER = "live-test-api-key-pepper-not-for-production-0123456789"


@dataclass
class LiveServer:
    url: str  # http://127.0.0.1:<port>, also HEYAIRA_PUBLIC_URL unless given another
    env: dict[str, str]
    log_path: Path
    process: subprocess.Popen[bytes] | None = None
    # tests/live_shell.py: manage.py's commands, one process for all of them (started lazily).
    shell: subprocess.Popen[str] | None = None
    _shell_lock: threading.Lock = field(default_factory=threading.Lock, repr=False)

    @property
    def mcp_url(self) -> str:
        return f"{self.url}/mcp"

    @property
    def api_url(self) -> str:
        return f"{self.url}/api"

    def manage(self, *args: str) -> str:
        """Run a manage.py command against the server's database; returns its stdout."""
        with self._shell_lock:
            answer = self._shell_call(list(args))
        if answer["returncode"] != 0:
            raise RuntimeError(
                f"manage.py {args[0]} failed:\n{answer['stdout']}\n{answer['stderr']}"
            )
        return str(answer["stdout"])

    def _shell_call(self, args: list[str], timeout: float = 300) -> dict[str, Any]:
        if self.shell is None or self.shell.poll() is not None:
            self.shell = _start_shell(self.env, self.log_path.with_name("manage.log"))
        assert self.shell.stdin is not None
        assert self.shell.stdout is not None
        self.shell.stdin.write(json.dumps(args) + "\n")
        self.shell.stdin.flush()
        ready, _, _ = select.select([self.shell.stdout], [], [], timeout)
        line = self.shell.stdout.readline() if ready else ""
        if not line:
            self.close_shell()
            log = self.log_path.with_name("manage.log").read_text(errors="replace")
            raise RuntimeError(f"manage.py {args[0]} gave no answer within {timeout}s:\n{log}")
        return dict(json.loads(line))

    def close_shell(self) -> None:
        if self.shell is not None:
            _stop(self.shell)
            self.shell = None

    def run_python(self, code: str) -> Any:
        """Run Python with Django set up, against the server's database. The code assigns its
        answer to `result` (JSON-serialisable), which is returned."""
        script = f"import json\nresult = None\n{code}\nprint('@@RESULT@@' + json.dumps(result))"
        output = self.manage("shell", "-c", script)
        marker = output.rindex("@@RESULT@@")
        return json.loads(output[marker + len("@@RESULT@@") :])

    def add_person(self, username: str, password: str, project_slug: str, role: str) -> None:
        """A user (created if new) with a role in a project (created, owned by them, if new)."""
        self.run_python(
            f"""
from django.contrib.auth import get_user_model
from projects.callers import operator_caller
from projects.models import Membership, Project
from projects.services import membership_add, project_create
User = get_user_model()
user = User.objects.filter(username={username!r}).first()
if user is None:
    user = User.objects.create_user(username={username!r}, password={password!r})
project = Project.objects.filter(slug={project_slug!r}).first()
if project is None:
    project = project_create(slug={project_slug!r}, name={project_slug.title()!r},
                             owner_username={username!r}, operator="tests.live")
if {role!r} != "owner" or not Membership.objects.filter(project=project, user=user).exists():
    membership_add(operator_caller(project), user_id=user.pk, role={role!r})
"""
        )

    def log_text(self) -> str:
        """Everything the server wrote to stdout and stderr so far."""
        return self.log_path.read_text(errors="replace")


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _manage(env: dict[str, str], *args: str) -> str:
    done = subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(f"manage.py {args[0]} failed:\n{done.stdout}\n{done.stderr}")
    return done.stdout


# Migrating a fresh database takes seconds (many on PostgreSQL): each test process migrates one
# template and every live server starts from a copy of it.
_templates: dict[str, str] = {}


# Django's backend, or ours behind PgBouncer (runtime.pgbouncer).
POSTGRES_ENGINES = ("django.db.backends.postgresql", "runtime.pgbouncer")


def _postgres() -> bool:
    return settings.DATABASES["default"]["ENGINE"] in POSTGRES_ENGINES


def once_in_ci(why: str) -> pytest.MarkDecorator:
    """.ci/run runs `make test` on SQLite, then on PostgreSQL. A test whose subject never touches
    the suite's database (`why` says what it uses instead) runs in the SQLite pass only."""
    return pytest.mark.skipif(_postgres(), reason=f"runs once, in the SQLite pass: {why}")


def _database(workdir: Path, port: int) -> tuple[str, str | None]:
    """(DATABASE_URL, PostgreSQL database to drop afterwards or None)."""
    if not _postgres():
        return sqlite_database(workdir), None
    name = f"{_postgres_prefix()}_{port}"
    template = _postgres_template()
    with maintenance_connection() as connection:
        connection.execute(f'DROP DATABASE IF EXISTS "{name}"')
        # A pooler (PgBouncer) may still hold idle server connections to the template, and a
        # database is copied only when nobody is connected to it.
        connection.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
            "WHERE datname = %s AND pid <> pg_backend_pid()",
            [template],
        )
        connection.execute(f'CREATE DATABASE "{name}" TEMPLATE "{template}"')
    return _postgres_url(name), name


def sqlite_database(workdir: Path) -> str:
    """A migrated SQLite database of its own in `workdir` (a copy of the template): for a
    server that cannot reach PostgreSQL (one in a network namespace of its own)."""
    target = workdir / "live.sqlite3"
    shutil.copyfile(_sqlite_template(), target)
    return f"sqlite:///{target}"


def live_environment(public_url: str, database_url: str) -> dict[str, str]:
    """The environment a live server runs with (DEBUG off, test secrets)."""
    return _environment(public_url, database_url)


def _sqlite_template() -> Path:
    if "sqlite" not in _templates:
        directory = Path(tempfile.mkdtemp(prefix="heyaira-live-"))
        atexit.register(shutil.rmtree, directory, True)
        path = directory / "template.sqlite3"
        _manage(_environment("http://127.0.0.1", f"sqlite:///{path}"), "migrate", "--noinput")
        with sqlite3.connect(path) as connection:
            # Fold the write-ahead log into the file, so that copying the file copies it all.
            connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        _templates["sqlite"] = str(path)
    return Path(_templates["sqlite"])


def _postgres_template() -> str:
    if "postgresql" not in _templates:
        name = f"{_postgres_prefix()}_template"
        with maintenance_connection() as connection:
            connection.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
            connection.execute(f'CREATE DATABASE "{name}"')
        atexit.register(_drop_postgres, name)
        _manage(_environment("http://127.0.0.1", _postgres_url(name)), "migrate", "--noinput")
        _templates["postgresql"] = name
    return _templates["postgresql"]


def _postgres_prefix() -> str:
    """test_<the run's database name>_live_<xdist worker>: never another engineer's database."""
    configured = urlsplit(os.environ.get("DATABASE_URL", "")).path.strip("/")
    base = configured or str(settings.DATABASES["default"]["NAME"]).removeprefix("test_")
    return f"test_{base}_live_{os.environ.get('PYTEST_XDIST_WORKER', 'main')}"


def _postgres_url(name: str) -> str:
    default = settings.DATABASES["default"]
    user = default.get("USER") or ""
    password = f":{default['PASSWORD']}" if default.get("PASSWORD") else ""
    host = default.get("HOST") or "127.0.0.1"
    db_port = f":{default['PORT']}" if default.get("PORT") else ""
    return f"postgres://{user}{password}@{host}{db_port}/{name}"


def _drop_postgres(name: str) -> None:
    with maintenance_connection() as connection:
        connection.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def maintenance_connection() -> psycopg.Connection[Any]:
    default = settings.DATABASES["default"]
    return psycopg.connect(
        dbname="postgres",
        user=default.get("USER") or None,
        password=default.get("PASSWORD") or None,
        host=default.get("HOST") or None,
        port=direct_port(),
        autocommit=True,
    )


def direct_port() -> str | None:
    """PostgreSQL's own port: behind PgBouncer (scripts/with_pgbouncer.sh sets
    POSTGRES_DIRECT_PORT) the maintenance work (databases made and dropped, backends counted or
    ended, session-wide advisory locks) must reach the server itself, not a pooled
    connection that another client's transaction uses next."""
    return os.environ.get("POSTGRES_DIRECT_PORT") or settings.DATABASES["default"].get("PORT")


def behind_pgbouncer() -> bool:
    return bool(settings.DATABASES["default"]["ENGINE"] == "runtime.pgbouncer")


def start_live_server(
    workdir: Path,
    *,
    access_log: bool = True,
    public_url: str | None = None,
    extra_env: dict[str, str] | None = None,
    gunicorn: bool = False,
) -> tuple[LiveServer, str | None]:
    """public_url: the URL clients use (HEYAIRA_PUBLIC_URL) when it is not the server's own,
    as behind the conformance suite's proxy. extra_env: settings for this server only.
    gunicorn: serve with gunicorn and its uvicorn worker (the production command) instead."""
    port = free_port()
    database_url, pg_name = _database(workdir, port)
    url = f"http://127.0.0.1:{port}"
    env = {**_environment(public_url or url, database_url), **(extra_env or {})}
    server = LiveServer(url=url, env=env, log_path=workdir / "server.log")
    if gunicorn:
        # From the repository, so that gunicorn reads gunicorn.conf.py as in production.
        command = [str(Path(sys.executable).parent / "gunicorn"), "heyaira.asgi:application"]
        command += ["-k", "runtime.workers.BalancedUvicornWorker", "--bind", f"127.0.0.1:{port}"]
    else:
        # uvicorn's own X-Forwarded-For trust stays off: HEYAIRA_TRUSTED_PROXIES decides.
        command = [sys.executable, "-m", "uvicorn", "heyaira.asgi:application"]
        command += ["--host", "127.0.0.1", "--port", str(port), "--no-proxy-headers"]
    if not access_log and not gunicorn:
        command.append("--no-access-log")
    log = server.log_path.open("wb")
    server.process = subprocess.Popen(command, cwd=REPO, env=env, stdout=log, stderr=log)
    _wait_until_up(server)
    return server, pg_name


def _environment(public_url: str, database_url: str) -> dict[str, str]:
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("PYTEST", "DJANGO_"))},
        "DJANGO_SETTINGS_MODULE": "heyaira.settings",
        "DEBUG": "false",
        "SECRET_KEY": LIVE_SECRET_KEY,
        "HEYAIRA_API_KEY_PEPPER": LIVE_PEPPER,
        "HEYAIRA_PUBLIC_URL": public_url,
        "HEYAIRA_INSTANCE": "live-test",
        "DATABASE_URL": database_url,
        "LOG_LEVEL": "DEBUG",  # the canary test wants every log line there is
        # Tests register many clients from 127.0.0.1; the limit itself is tested in-process.
        "HEYAIRA_DCR_RATE_LIMIT_PER_HOUR": "10000",
        "PYTHONUNBUFFERED": "1",
    }
    # Live servers run with the production defaults for these (the pool included).
    for name in ("ALLOWED_HOSTS", "HEYAIRA_MCP_ALLOWED_ORIGINS", "DATABASE_POOL_SIZE"):
        env.pop(name, None)
    return env


def _wait_until_up(server: LiveServer, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert server.process is not None
        if server.process.poll() is not None:
            raise RuntimeError(f"the server exited early:\n{server.log_text()}")
        try:
            with urllib.request.urlopen(f"{server.url}/healthz", timeout=2) as answer:  # noqa: S310
                if answer.status == 200:
                    return
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            time.sleep(0.2)
    raise RuntimeError(f"the server did not answer within {timeout}s:\n{server.log_text()}")


def _start_shell(env: dict[str, str], log_path: Path) -> subprocess.Popen[str]:
    # Plain connections, closed after each command: none stays open between calls.
    shell_env = {**env, "DATABASE_POOL_SIZE": "0"}
    with log_path.open("ab") as log:
        return subprocess.Popen(
            [sys.executable, "-m", "tests.live_shell"],
            cwd=REPO,
            env=shell_env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=log,
            text=True,
        )


def _stop(process: subprocess.Popen[Any]) -> None:
    if process.poll() is None:
        process.terminate()
        try:
            process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait(timeout=5)


def stop_live_server(server: LiveServer, pg_name: str | None) -> None:
    server.close_shell()
    if server.process is not None:
        _stop(server.process)
    if pg_name is not None:
        with maintenance_connection() as connection:
            connection.execute(f'DROP DATABASE IF EXISTS "{pg_name}" WITH (FORCE)')


def serving(workdir: Path, **options: Any) -> Iterator[LiveServer]:
    """start_live_server's server until the generator closes: the body of a fixture."""
    server, pg_name = start_live_server(workdir, **options)
    try:
        yield server
    finally:
        stop_live_server(server, pg_name)


@pytest.fixture
def asgi_server(tmp_path: Path, live_processes: None) -> Iterator[LiveServer]:
    """The real ASGI application on 127.0.0.1, for the duration of one test. A module whose
    tests do not disturb each other shares one instead: it defines `asgi_server` with
    scope="module" as `yield from serving(tmp_path_factory.mktemp(...))`."""
    yield from serving(tmp_path)


# --- the person at the browser ---------------------------------------------------------------


# The smoke script's page reader and token storage: one headless browser for tests and smoke.
read_form = forms_of


@dataclass
class ConsentBrowser:
    """Signs in, picks `project_slug` on the consent page, and allows (or denies).

    Cookies persist across authorizations, like a real browser's session.
    """

    username: str
    password: str
    project_slug: str | None = None
    allow: bool = True
    cookies: httpx2.Cookies = field(default_factory=httpx2.Cookies)
    pages: list[str] = field(default_factory=list)  # every HTML page seen, for assertions
    location: str = ""  # the last redirect back to the client

    async def authorize(self, authorization_url: str) -> str:
        """Follow an authorization URL to the redirect back to the client; return its URL."""
        async with httpx2.AsyncClient(
            follow_redirects=False, timeout=30, cookies=self.cookies
        ) as http:
            response = await http.get(authorization_url)
            if response.status_code == 302 and "/accounts/login/" in response.headers["location"]:
                login_url = urljoin(authorization_url, response.headers["location"])
                response = await self._sign_in(http, login_url)
                response = await http.get(urljoin(login_url, response.headers["location"]))
            if response.status_code != 200:
                self.location = response.headers.get("location", "")
                return self.location
            self.pages.append(response.text)
            response = await http.post(authorization_url, data=self._consent(response.text))
            self.cookies.update(http.cookies)
            self.location = response.headers.get("location", "")
            return self.location

    async def _sign_in(self, http: httpx2.AsyncClient, login_url: str) -> httpx2.Response:
        page = await http.get(login_url)
        self.pages.append(page.text)
        fields = {
            i["name"]: i.get("value", "") for i in read_form(page.text).inputs if i.get("name")
        }
        fields.update(username=self.username, password=self.password)
        response = await http.post(login_url, data=fields)
        if response.status_code != 302:
            raise AssertionError(f"sign-in failed ({response.status_code})")
        return response

    def _consent(self, html: str) -> dict[str, str]:
        form = read_form(html)
        fields = {
            i["name"]: i.get("value", "")
            for i in form.inputs
            if i.get("name") and i.get("type") == "hidden"
        }
        radios = [i for i in form.inputs if i.get("type") == "radio" and i.get("name") == "project"]
        for radio in radios:
            label = form.labels.get(radio.get("id", ""), "")
            if self.project_slug is None or f"({self.project_slug}," in label:
                fields["project"] = radio["value"]
                break
        if self.allow:
            fields["allow"] = "Authorize"
        return fields

    # The OAuthClientProvider's two handlers.

    async def redirect_handler(self, authorization_url: str) -> None:
        await self.authorize(authorization_url)

    async def callback_handler(self) -> AuthorizationCodeResult:
        query = parse_qs(urlsplit(self.location).query)
        first = {name: values[0] for name, values in query.items()}
        if "code" not in first:
            raise AssertionError(f"no code in the redirect: {self.location}")
        return AuthorizationCodeResult(
            code=first["code"], state=first.get("state"), iss=first.get("iss")
        )


MemoryTokenStorage = MemoryStorage
