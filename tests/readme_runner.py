"""Run shell commands the way a newcomer types them: in a fresh clone, in a private network.

- `readme_commands` / `inline_commands` read the commands out of a Markdown file.
- `fresh_clone` copies the files Git knows (tracked, and new ones not ignored: the working tree
  as it is, not only the last commit) into an empty directory. Its `.venv` is a shim onto the
  suite's own virtualenv (bin/ and lib/ linked, fresh `.runtime`/`.dev` markers), so `make run`
  finds its install done instead of spending minutes on pip: installing is pip's job, the rest
  (venv Python, migrate, quickstart, uvicorn) runs for real. HEYAIRA_README_REAL_INSTALL=1
  installs it for real instead, with make's own rule.
- `Sandbox` holds a network namespace (`unshare --net`): inside it 127.0.0.1:8000 and :5432 are
  free, so commands that name those ports run exactly as written, beside whatever else this
  machine runs, and reach nothing outside.
- `PostgresCluster` is a throwaway cluster inside the sandbox at 127.0.0.1:5432 whose only role
  is `postgres`: a fresh machine, where `createdb ... heyaira` names a database no one else has.
"""

from __future__ import annotations

import fcntl
import json
import os
import pty
import re
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import termios
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

REPO = Path(__file__).resolve().parent.parent
FENCE = re.compile(r"^```(\S*)\s*$")
# Inline code that is a command someone would type (as opposed to a name or a value).
COMMAND_START = re.compile(
    r"^(python3? |make( |$)|\.venv/bin/|\./|createdb |dropdb |psql |gunicorn |pg_dump |"
    r"pg_restore |sqlite3 |claude |codex |npx |git |curl |heyaira |pip )"
)
URL = "http://127.0.0.1:8000"  # the quick start's address, free inside the sandbox
# What runs inside the namespace to reach its 127.0.0.1: plain urllib, as any client would.
PROBE = r"""
import http.cookiejar, json, re, time, urllib.error, urllib.parse, urllib.request

def lower(headers):
    return {name.lower(): value for name, value in headers.items()}

def fetch(url, data=None, headers=None, opener=None):
    request = urllib.request.Request(url, data=data, headers=headers or {})
    try:
        with (opener or urllib.request.build_opener()).open(request, timeout=20) as answer:
            return answer.status, lower(answer.headers), answer.read().decode()
    except urllib.error.HTTPError as error:
        return error.code, lower(error.headers), error.read().decode()

def healthz(url, timeout):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            return fetch(url + "/healthz")[2]
        except OSError:
            time.sleep(0.3)
    return None

def tool(url, key, name, arguments):
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": name, "arguments": arguments}}
    headers = {"Content-Type": "application/json", "Accept": "application/json, text/event-stream",
               "MCP-Protocol-Version": "2025-11-25"}
    if key:
        headers["Authorization"] = "Bearer " + key
    status, head, text = fetch(url + "/mcp", json.dumps(body).encode(), headers)
    return {"status": status, "challenge": head.get("www-authenticate", ""),
            "body": json.loads(text) if text.startswith("{") else text}

class NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args):
        return None

def sign_in(url, username, password):
    jar = http.cookiejar.CookieJar()
    opener = urllib.request.build_opener(urllib.request.HTTPCookieProcessor(jar), NoRedirect)
    page = fetch(url + "/accounts/login/?next=/admin/", opener=opener)[2]
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page).group(1)
    form = urllib.parse.urlencode({"csrfmiddlewaretoken": token, "username": username,
                                   "password": password, "next": "/admin/"}).encode()
    status, head, _ = fetch(url + "/accounts/login/", form, {"Origin": url}, opener)
    return {"status": status, "location": head.get("location", ""),
            "cookie": "; ".join(f"{c.name}={c.value}" for c in jar)}

def admin(url, cookie):
    opener = urllib.request.build_opener(NoRedirect)
    status, head, _ = fetch(url + "/admin/", headers={"Cookie": cookie}, opener=opener)
    return {"status": status, "location": head.get("location", "")}

def main(action, **arguments):
    return globals()[action](**arguments)
"""

# Settings a fresh machine does not have; the sandbox's commands never inherit the suite's.
_FOREIGN: tuple[str, ...] = (
    "DEBUG",
    "SECRET_KEY",
    "ALLOWED_HOSTS",
    "CACHE_URL",
    "LOG_LEVEL",
    "STATIC_ROOT",
    # ... nor the outer `make test`'s own state (its jobserver, its level).
    "MAKEFLAGS",
    "MAKELEVEL",
    "MFLAGS",
    "MAKEOVERRIDES",
)
_FOREIGN_PREFIXES = ("HEYAIRA_", "DATABASE_", "DJANGO_", "PYTEST", "VIRTUAL_ENV", "PG")


SHELL_BLOCKS = ("sh", "bash", "shell")
# Blocks that hold no commands: output, configuration files, code.
OTHER_BLOCKS = ("text", "json", "toml", "nginx", "ini", "python")


def readme_commands(markdown: str, *, shell_infos: tuple[str, ...] = SHELL_BLOCKS) -> list[str]:
    """Every command line of every shell block, continuation lines joined; comments kept."""
    commands: list[str] = []
    info: str | None = None
    pending = ""
    for line in markdown.splitlines():
        fence = FENCE.match(line)
        if fence:
            info = fence.group(1) if info is None else None
            continue
        if info not in shell_infos:
            continue
        pending += line
        if pending.endswith("\\"):
            pending = pending[:-1]
            continue
        text, pending = pending.strip(), ""
        if text and not text.startswith("#"):
            commands.append(text)
    return commands


def fence_infos(markdown: str) -> list[str]:
    """The info string of every opening fence ("" for a bare ```)."""
    infos: list[str] = []
    inside = False
    for line in markdown.splitlines():
        fence = FENCE.match(line)
        if fence:
            if not inside:
                infos.append(fence.group(1))
            inside = not inside
    return infos


def inline_commands(markdown: str) -> list[str]:
    """Inline code spans outside fenced blocks that read as commands."""
    outside: list[str] = []
    inside = False
    for line in markdown.splitlines():
        if FENCE.match(line):
            inside = not inside
        elif not inside:
            outside.append(line)
    # A span may wrap onto the next line in a paragraph: join lines before splitting on `.
    text = "\n".join(outside).replace("\n", " ")
    spans = re.findall(r"`([^`]+)`", text)
    return [span for span in spans if COMMAND_START.match(span)]


# Set to 1 to install .venv for real (make's own rule, pip from the package index) instead of
# the shim: minutes instead of seconds, so not the default.
REAL_INSTALL = os.environ.get("HEYAIRA_README_REAL_INSTALL") == "1"


def fresh_clone(target: Path, *, real_install: bool = REAL_INSTALL) -> Path:
    listed = subprocess.run(
        ["git", "ls-files", "--cached", "--others", "--exclude-standard", "-z"],
        cwd=REPO,
        capture_output=True,
        check=True,
    ).stdout.decode()
    for name in filter(None, listed.split("\0")):
        source = REPO / name
        if name == ".venv" or not source.is_file():  # deleted in the working tree
            continue
        destination = target / name
        destination.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(source, destination)
    if real_install:
        # make's install rule, run before the sandbox: pip needs the network the sandbox lacks.
        subprocess.run(
            ["make", "--no-print-directory", ".venv/.runtime"],
            cwd=target,
            env=fresh_environment(),
            check=True,
            capture_output=True,
            timeout=1200,
        )
    else:
        _venv_shim(target / ".venv")
    return target


def _venv_shim(shim: Path) -> None:
    """A .venv whose Python is the suite's virtualenv: sys.prefix is the shim (pyvenv.cfg sits
    beside bin/), the packages are the installed ones."""
    real = Path(sys.prefix)
    shim.mkdir()
    for name in ("bin", "lib", "lib64", "include"):
        if (real / name).exists():
            (shim / name).symlink_to(real / name)
    shutil.copy2(real / "pyvenv.cfg", shim / "pyvenv.cfg")
    for marker in (".runtime", ".dev"):
        (shim / marker).touch()


def fresh_environment() -> dict[str, str]:
    """The suite's environment without HeyAira's settings and without any virtualenv on PATH."""
    env = {
        name: value
        for name, value in os.environ.items()
        if name not in _FOREIGN and not name.startswith(_FOREIGN_PREFIXES)
    }
    venv_bin = str(Path(sys.prefix) / "bin")
    path = [p for p in env.get("PATH", "").split(":") if p and p != venv_bin and ".venv" not in p]
    env["PATH"] = ":".join(path)
    env["PYTHONUNBUFFERED"] = "1"
    return env


def sandbox_available() -> bool:
    probe = subprocess.run(
        ["unshare", "--net", "true"], capture_output=True, check=False, timeout=30
    )
    tools = all(shutil.which(tool) for tool in ("nsenter", "ip", "bash", "make"))
    return probe.returncode == 0 and tools


@dataclass
class Ran:
    command: str
    returncode: int
    stdout: str
    stderr: str


@dataclass
class Server:
    command: str
    process: subprocess.Popen[bytes]
    log: Path

    def text(self) -> str:
        return self.log.read_text(errors="replace")


class Sandbox:
    """A network namespace kept alive by a sleeping process; commands enter it with nsenter."""

    def __init__(self, clone: Path, env: dict[str, str]) -> None:
        self.clone = clone
        self.env = env
        self.keeper = subprocess.Popen(["unshare", "--net", "sleep", "86400"])
        deadline = time.monotonic() + 10
        # unshare execs sleep once the namespace exists: wait until the pid's namespace differs.
        while os.readlink(f"/proc/{self.keeper.pid}/ns/net") == os.readlink("/proc/self/ns/net"):
            if time.monotonic() > deadline:
                raise RuntimeError("unshare --net did not create a namespace")
            time.sleep(0.05)
        subprocess.run(self.enter(["ip", "link", "set", "lo", "up"]), check=True)
        self.ran: list[str] = []
        self.servers: list[Server] = []

    def enter(self, argv: list[str]) -> list[str]:
        return ["nsenter", f"--net=/proc/{self.keeper.pid}/ns/net", "--", *argv]

    def run(self, command: str, *, env: dict[str, str] | None = None, timeout: float = 300) -> Ran:
        """`bash -c COMMAND` in the clone, exactly as written."""
        done = subprocess.run(
            self.enter(["bash", "-c", command]),
            cwd=self.clone,
            env={**self.env, **(env or {})},
            capture_output=True,
            text=True,
            timeout=timeout,
            check=False,
            stdin=subprocess.DEVNULL,
        )
        self.ran.append(command)
        return Ran(command, done.returncode, done.stdout, done.stderr)

    def run_interactive(
        self, command: str, answers: list[tuple[str, str]], *, timeout: float = 120
    ) -> Ran:
        """A command that asks questions on its terminal (getpass): run it on a pseudo-terminal
        and answer each prompt (a regex) when it appears, as a person would."""
        master, slave = pty.openpty()

        def controlling_terminal() -> None:
            os.setsid()
            fcntl.ioctl(0, termios.TIOCSCTTY, 0)

        process = subprocess.Popen(
            self.enter(["bash", "-c", command]),
            cwd=self.clone,
            env={**self.env, "TERM": "dumb"},
            stdin=slave,
            stdout=slave,
            stderr=slave,
            preexec_fn=controlling_terminal,  # a session and terminal of its own
        )
        os.close(slave)
        seen = since = ""
        pending = list(answers)
        deadline = time.monotonic() + timeout
        try:
            while time.monotonic() < deadline:
                ready, _, _ = select.select([master], [], [], 0.2)
                if ready:
                    try:
                        chunk = os.read(master, 4096).decode(errors="replace")
                    except OSError:  # the child closed the terminal
                        break
                    if not chunk:
                        break
                    seen += chunk
                    since += chunk
                # Each answer goes to the first prompt printed after the previous answer.
                if pending and re.search(pending[0][0], since):
                    os.write(master, (pending.pop(0)[1] + "\n").encode())
                    since = ""
                if process.poll() is not None and not ready:
                    break
            returncode = process.wait(timeout=max(1.0, deadline - time.monotonic()))
        finally:
            if process.poll() is None:
                process.kill()
                process.wait()
            os.close(master)
        self.ran.append(command)
        return Ran(command, returncode, seen, "")

    def start(self, command: str, log: Path, *, env: dict[str, str] | None = None) -> Server:
        """A long-running command (a server), in its own process group so it can be stopped."""
        output: IO[bytes] = log.open("wb")
        process = subprocess.Popen(
            self.enter(["bash", "-c", command]),
            cwd=self.clone,
            env={**self.env, **(env or {})},
            stdout=output,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
        output.close()
        self.ran.append(command)
        server = Server(command, process, log)
        self.servers.append(server)
        return server

    def python(self, code: str, **arguments: Any) -> Any:
        """Run Python inside the namespace (to reach its 127.0.0.1); `code` defines main(**args)
        returning JSON."""
        script = f"{code}\nimport json, sys\nprint(json.dumps(main(**json.loads(sys.argv[1]))))"
        done = subprocess.run(
            self.enter([sys.executable, "-c", script, json.dumps(arguments)]),
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        if done.returncode != 0:
            raise RuntimeError(f"probe failed:\n{done.stderr}")
        return json.loads(done.stdout.splitlines()[-1])

    def close(self) -> None:
        # A failed assertion may leave a server running: stop them all with the namespace.
        for server in self.servers:
            stop(server)
        self.keeper.kill()
        self.keeper.wait()


def stop(server: Server) -> None:
    """End the command and everything it started: `make run`'s uvicorn may still be shutting
    down (holding its port) after make itself has exited."""
    group = server.process.pid
    if server.process.poll() is None:
        os.killpg(group, signal.SIGTERM)
        try:
            server.process.wait(timeout=30)
        except subprocess.TimeoutExpired:
            os.killpg(group, signal.SIGKILL)
            server.process.wait(timeout=10)
    if not _group_gone(group, 30):
        os.killpg(group, signal.SIGKILL)
        _group_gone(group, 10)  # an unreaped zombie may linger; it holds no port


def _group_gone(group: int, seconds: float) -> bool:
    deadline = time.monotonic() + seconds
    while _group_alive(group):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.1)
    return True


def _group_alive(group: int) -> bool:
    try:
        os.killpg(group, 0)
    except ProcessLookupError:
        return False
    return True


@contextmanager
def sandbox(clone: Path) -> Iterator[Sandbox]:
    box = Sandbox(clone, fresh_environment())
    try:
        yield box
    finally:
        box.close()


class PostgresCluster:
    """initdb + pg_ctl as the postgres user, listening on 127.0.0.1:5432 inside the sandbox and
    on a socket in its own directory (never the machine's /var/run/postgresql)."""

    def __init__(self, box: Sandbox) -> None:
        self.box = box
        self.bindir = Path(
            subprocess.run(
                ["pg_config", "--bindir"], capture_output=True, text=True, check=True
            ).stdout.strip()
        )
        self.directory = Path(tempfile.mkdtemp(prefix="heyaira-readme-pg-"))
        shutil.chown(self.directory, "postgres", "postgres")
        self.data = self.directory / "data"

    def as_postgres(self, *argv: str) -> list[str]:
        return self.box.enter(["runuser", "-u", "postgres", "--", *argv])

    def start(self) -> None:
        initdb = [str(self.bindir / "initdb"), "-D", str(self.data), "-A", "trust"]
        subprocess.run(
            self.as_postgres(*initdb, "-U", "postgres", "--no-sync"),
            check=True,
            capture_output=True,
            cwd="/",
        )
        options = f"-c listen_addresses=127.0.0.1 -p 5432 -k {self.directory} -c fsync=off"
        subprocess.run(
            self.as_postgres(
                str(self.bindir / "pg_ctl"),
                "-D",
                str(self.data),
                "-l",
                str(self.directory / "log"),
                "-o",
                options,
                "-w",
                "start",
            ),
            check=True,
            capture_output=True,
            cwd="/",
        )

    def stop(self) -> None:
        subprocess.run(
            self.as_postgres(
                str(self.bindir / "pg_ctl"), "-D", str(self.data), "-m", "fast", "stop"
            ),
            capture_output=True,
            check=False,
            cwd="/",
        )
        shutil.rmtree(self.directory, ignore_errors=True)


def postgres_available() -> bool:
    try:
        subprocess.run(["pg_config", "--bindir"], capture_output=True, check=True)
        subprocess.run(["id", "postgres"], capture_output=True, check=True)
    except (OSError, subprocess.CalledProcessError):
        return False
    return os.geteuid() == 0 and shutil.which("runuser") is not None
