"""A start that cannot go on says why in one line, naming the variable and how to set it, and
exits non-zero, without a traceback: for manage.py, for uvicorn and for the production gunicorn
command, each run as a person runs it, in a process of its own."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.live import free_port

ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
SECRET = "a-private-value-for-this-test-only-0123456789abcdefghijklmnop"
# Settings from this test run (and the quick start's file) must not leak into the start.
_DROP = ("DEBUG", "SECRET_KEY", "HEYAIRA_", "DJANGO_", "DATABASE_", "PYTEST")


def _start(command: list[str], tmp_path: Path, **env: str) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith(_DROP)}
    base["HEYAIRA_QUICKSTART_ENV"] = str(tmp_path / "absent.env")
    base["DATABASE_URL"] = f"sqlite:///{tmp_path / 'db.sqlite3'}"
    base["HOME"] = str(tmp_path)  # gunicorn keeps its control socket under HOME
    return subprocess.run(
        command,
        cwd=ROOT,
        env={**base, "DEBUG": "false", **env},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def _commands() -> dict[str, list[str]]:
    port = str(free_port())
    return {
        "manage.py": [sys.executable, "manage.py", "check"],
        "uvicorn": [sys.executable, "-m", "uvicorn", "heyaira.asgi:application", "--port", port],
        "gunicorn": [
            str(BIN / "gunicorn"),
            "heyaira.asgi:application",
            *("-k", "runtime.workers.BalancedUvicornWorker", "-w", "2"),
            *("--bind", f"127.0.0.1:{port}"),
        ],
    }


def _ours(stderr: str) -> list[str]:
    """The lines of the output that are not gunicorn's own log lines ("[time] [pid] [LEVEL]")."""
    return [line for line in stderr.splitlines() if line.strip() and not line.startswith("[")]


@pytest.mark.parametrize("how", ["manage.py", "uvicorn", "gunicorn"])
@pytest.mark.parametrize(
    ("env", "variable", "advice"),
    [
        ({}, "SECRET_KEY", "export SECRET_KEY="),
        ({"SECRET_KEY": SECRET}, "HEYAIRA_API_KEY_PEPPER", "export HEYAIRA_API_KEY_PEPPER="),
    ],
    ids=["no-secret-key", "no-pepper"],
)
def test_a_missing_secret_is_one_line_naming_it(
    how: str, env: dict[str, str], variable: str, advice: str, tmp_path: Path
):
    done = _start(_commands()[how], tmp_path, **env)

    assert done.returncode != 0
    output = done.stdout + done.stderr
    assert "Traceback" not in output
    lines = _ours(output)
    assert lines, output
    # gunicorn's two workers each say it once; it is the same line.
    assert set(lines) == {lines[0]}, output
    assert lines[0].startswith(f"HeyAira cannot start: {variable} must be set; DEBUG is off")
    assert advice in lines[0]
    assert "DEBUG=true for local development" in lines[0]


def test_a_malformed_value_is_one_line_naming_it(tmp_path: Path):
    done = _start(_commands()["manage.py"], tmp_path, DEBUG="maybe")

    assert done.returncode != 0
    assert "Traceback" not in done.stderr
    assert done.stderr.strip().splitlines() == [
        "HeyAira cannot start: DEBUG='maybe' is not a boolean; use one of true/false, 1/0, "
        "yes/no, on/off. The README's Configuration table lists every setting."
    ]
