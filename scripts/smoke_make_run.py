#!/usr/bin/env python
"""Run the continuity protocol smoke test against the server that `make run` starts.

Starts `make run` on a free port with a fresh SQLite file (exactly the quick start: migrate,
quickstart's owner account and demo project, uvicorn), takes the owner's password from its output,
then runs scripts/continuity_protocol_smoke.py twice: over OAuth with headless consent (session
A on the handshake era, session B on 2026-07-28) and over two API keys. Stops the server and
fails if either run fails.
"""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
SMOKE = REPO / "scripts" / "continuity_protocol_smoke.py"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def wait_for(url: str, server: subprocess.Popen[bytes], log: Path, timeout: float = 300) -> None:
    """make run may first create the virtualenv and install: allow it minutes."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if server.poll() is not None:
            sys.exit(f"make run exited early:\n{log.read_text()}")
        try:
            with urllib.request.urlopen(f"{url}/healthz", timeout=2) as answer:  # noqa: S310
                if answer.status == 200:
                    return
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            time.sleep(0.5)
    sys.exit(f"make run did not serve /healthz within {timeout}s:\n{log.read_text()}")


def owner_password(log: Path) -> str:
    found = re.search(r"password:\s+(\S+)", log.read_text())
    if found is None:
        sys.exit(f"make run printed no owner password:\n{log.read_text()}")
    return found.group(1)


def main() -> None:
    if os.environ.get("DATABASE_URL", "").startswith(("postgres://", "postgresql://")):
        # As tests/live.py's once_in_ci: `make run` gets a scratch SQLite file whatever
        # DATABASE_URL says, so the PostgreSQL pass of `make test` would repeat the SQLite one.
        print("smoke: runs in the SQLite pass (make run keeps its own SQLite file)", flush=True)
        return
    port = free_port()
    url = f"http://127.0.0.1:{port}"
    with tempfile.TemporaryDirectory(prefix="heyaira-smoke-") as workdir:
        env = {
            **{k: v for k, v in os.environ.items() if k not in ("SECRET_KEY", "DEBUG")},
            "DATABASE_URL": f"sqlite:///{workdir}/quickstart.sqlite3",
            "HEYAIRA_PUBLIC_URL": url,
            # The quick start's secrets file goes with the scratch database, not into var/.
            "HEYAIRA_QUICKSTART_ENV": f"{workdir}/quickstart.env",
        }
        env.pop("ALLOWED_HOSTS", None)
        env.pop("HEYAIRA_MCP_ALLOWED_ORIGINS", None)
        log = Path(workdir) / "make-run.log"
        with log.open("wb") as output:
            server = subprocess.Popen(
                ["make", "--no-print-directory", "run", f"PORT={port}"],
                cwd=REPO,
                env=env,
                stdout=output,
                stderr=subprocess.STDOUT,
                start_new_session=True,  # so the whole group (make, uvicorn) can be stopped
            )
        try:
            wait_for(url, server, log)
            print(f"make run is serving {url}", flush=True)
            smoke(env, url, owner_password(log))
        finally:
            os.killpg(server.pid, signal.SIGTERM)
            server.wait(timeout=30)


def smoke(env: dict[str, str], url: str, password: str) -> None:
    python = sys.executable
    oauth = [python, str(SMOKE), "--url", url, "--user", "owner", f"--password={password}"]
    oauth += ["--project", "demo", "--mode", "legacy", "--mode-b", "auto"]
    print("== over OAuth, with headless consent", flush=True)
    subprocess.run(oauth, cwd=REPO, env=env, check=True)
    # No DEBUG here: manage.py takes it, and the secrets, from the file `make run` wrote.
    keys = [
        subprocess.run(
            [python, "manage.py", "create_api_key", "demo", "--user", "owner", "--label", label],
            cwd=REPO,
            env=env,
            capture_output=True,
            text=True,
            check=True,
        )
        .stdout.strip()
        .splitlines()[-1]
        for label in ("smoke-a", "smoke-b")
    ]
    print("== over two API keys", flush=True)
    subprocess.run(
        [python, str(SMOKE), "--url", url, "--api-key", keys[0], "--api-key-b", keys[1]],
        cwd=REPO,
        env=env,
        check=True,
    )


if __name__ == "__main__":
    try:
        main()
    except subprocess.CalledProcessError as failure:
        sys.exit(f"the smoke test failed: {failure}")
