"""heyaira-client as a package: `pip install ./client` builds and installs it with its
`heyaira` script, and importing every module of it loads nothing of the server (nor Django)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.db import connection

from tests.client.install import installed_environment, pip_install_client
from tests.live import REPO

SERVER_PACKAGES = {"heyaira", "web", "continuity", "identity", "projects", "core", "audit"}


@pytest.mark.live_server  # builds a wheel: pip fetches the build backend from the package index
@pytest.mark.skipif(
    connection.vendor == "postgresql",
    reason="builds and installs the package, no database involved: the SQLite run covers it",
)
def test_pip_installs_the_package_and_its_heyaira_script(tmp_path: Path):
    target = pip_install_client(REPO / "client", tmp_path / "site")

    assert (target / "heyaira_client" / "py.typed").exists()
    env = {**os.environ, **installed_environment(target)}
    env.pop("DJANGO_SETTINGS_MODULE", None)
    done = subprocess.run(
        ["heyaira", "--help"], capture_output=True, text=True, env=env, cwd=tmp_path, check=False
    )
    assert done.returncode == 0, done.stderr
    assert "whoami" in done.stdout
    assert "hooks" in done.stdout
    where = subprocess.run(
        [sys.executable, "-c", "import heyaira_client; print(heyaira_client.__file__)"],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        check=True,
    )
    assert where.stdout.startswith(str(target))


@pytest.mark.live
def test_importing_the_client_loads_nothing_of_the_server(tmp_path: Path):
    modules = [p.stem for p in (REPO / "client" / "src" / "heyaira_client").glob("*.py")]
    script = (
        "import importlib, json, sys\n"
        f"for name in {modules!r}:\n"
        "    if name != '__main__':\n"
        "        importlib.import_module('heyaira_client.' + name)\n"
        "print(json.dumps(sorted({m.split('.')[0] for m in sys.modules})))\n"
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith("DJANGO")}
    env["PYTHONPATH"] = str(REPO / "client" / "src")
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=env, cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr
    loaded = set(json.loads(done.stdout))
    assert "heyaira_client" in loaded
    assert not loaded & (SERVER_PACKAGES | {"django", "rest_framework", "oauth2_provider"})
