"""The client package against a real server: one live ASGI server for all the client tests of a
test process (test_crash.py has its own, behind a proxy), a project of its own per test (so
tests never see each other's rows), and a private home for the client's files (XDG directories
in tmp_path), so nothing touches the real ~/.config or ~/.local/state."""

from __future__ import annotations

import itertools
import os
import subprocess
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from heyaira_client import Profile, save_profile
from tests.client.install import pip_install_client
from tests.live import REPO, LiveServer, start_live_server, stop_live_server

PASSWORD = "correct-horse-battery-staple-42"
CLIENT_SRC = REPO / "client" / "src"
_projects = itertools.count(1)


@pytest.fixture(scope="session")
def server(tmp_path_factory: pytest.TempPathFactory, live_processes: None) -> Iterator[LiveServer]:
    live, pg_name = start_live_server(tmp_path_factory.mktemp("client-live"))
    try:
        yield live
    finally:
        stop_live_server(live, pg_name)


@pytest.fixture(scope="session")
def installed_client(tmp_path_factory: pytest.TempPathFactory, live_processes: None) -> Path:
    """`pip install ./client` into a directory of its own (tests/client/install.py), once per
    test process: its `bin/heyaira` is the command people type and hooks run by name."""
    return pip_install_client(CLIENT_SRC.parent, tmp_path_factory.mktemp("installed") / "site")


@dataclass
class Home:
    """The client's environment: XDG directories and the profiles file under tmp_path."""

    root: Path
    env: dict[str, str]

    @property
    def state(self) -> Path:
        return self.root / "state" / "heyaira"

    @property
    def profiles(self) -> Path:
        return Path(self.env["HEYAIRA_PROFILES"])

    def cli(self, *args: str, stdin: str = "", timeout: float = 120, **env: str) -> Any:
        """`heyaira ARGS` as a person runs it (a new process, this home)."""
        return subprocess.run(
            [sys.executable, "-m", "heyaira_client", *args],
            input=stdin,
            capture_output=True,
            text=True,
            env={**self.env, **env},
            timeout=timeout,
            check=False,
        )

    def installed(self, target: Path, *args: str, **env: str) -> Any:
        """The pip-installed `heyaira ARGS`, run by its absolute path from a PATH that does not
        have it, as from a virtualenv that is not activated."""
        return subprocess.run(
            [str(target / "bin" / "heyaira"), *args],
            capture_output=True,
            text=True,
            env={**self.env, "PYTHONPATH": str(target), **env},
            timeout=120,
            check=False,
        )


@pytest.fixture(autouse=True)
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Home:
    env = {
        "XDG_STATE_HOME": str(tmp_path / "state"),
        "XDG_CONFIG_HOME": str(tmp_path / "config"),
        "HEYAIRA_PROFILES": str(tmp_path / "config" / "heyaira" / "profiles.toml"),
        "HOME": str(tmp_path / "home"),
    }
    for name, value in env.items():
        monkeypatch.setenv(name, value)
    monkeypatch.delenv("HEYAIRA_PROFILE", raising=False)
    (tmp_path / "home").mkdir()
    process_env = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("PYTEST", "DJANGO_"))},
        **env,
        "PYTHONPATH": str(CLIENT_SRC),
    }
    return Home(root=tmp_path, env=process_env)


@dataclass
class Seat:
    """One person's API key for a project of their own on the live server."""

    server: LiveServer
    slug: str
    username: str
    key: str

    def profile(self, name: str = "work", **overrides: Any) -> Profile:
        values: dict[str, Any] = {
            "name": name,
            # The public URL: the server's own, or a proxy's in front of it (test_crash.py).
            "url": self.server.env["HEYAIRA_PUBLIC_URL"] + "/mcp",
            "instance": "live-test",
            "project": self.slug,
            "credential": "env:HEYAIRA_TEST_KEY",
            "agent": "test-agent",
            **overrides,
        }
        return Profile(**values)

    def saved(self, home: Home, name: str = "work", **overrides: Any) -> Profile:
        profile = self.profile(name, **overrides)
        save_profile(profile, make_default=True)
        home.env["HEYAIRA_TEST_KEY"] = self.key
        return profile

    def rows(self, code: str) -> Any:
        """Run Django code against the server's database with `project` bound to this seat's."""
        return self.server.run_python(
            f"from projects.models import Project\n"
            f"project = Project.objects.get(slug={self.slug!r})\n{code}"
        )

    def outcomes(self, operation: str) -> list[str]:
        """The audit outcomes of one operation in this project, oldest first."""
        return list(
            self.rows(
                f"""
from audit.models import AuditEvent
events = AuditEvent.objects.filter(project_id=project.pk, operation={operation!r})
result = list(events.order_by("occurred_at").values_list("outcome", flat=True))
"""
            )
        )

    def counts(self) -> dict[str, Any]:
        return dict(
            self.rows(
                """
from audit.models import AuditEvent
from continuity.models import Memory, StateVersion, Task, WorkReceipt
writes = ("memory_add", "task_create", "task_update", "state_put")
result = {
    "memories": Memory.objects.filter(project=project).count(),
    "tasks": Task.objects.filter(project=project).count(),
    "receipts": WorkReceipt.objects.filter(project=project).count(),
    "states": StateVersion.objects.filter(project=project).count(),
    "write_audit": AuditEvent.objects.filter(project_id=project.pk, operation__in=writes).count(),
}
"""
            )
        )


@pytest.fixture
def seat(server: LiveServer, monkeypatch: pytest.MonkeyPatch) -> Seat:
    number = next(_projects)
    slug, username = f"client{number}", f"person{number}"
    server.add_person(username, PASSWORD, slug, "owner")
    key = server.manage("create_api_key", slug, "--user", username).strip().splitlines()[-1]
    monkeypatch.setenv("HEYAIRA_TEST_KEY", key)
    return Seat(server=server, slug=slug, username=username, key=key)
