"""`make run`'s var/quickstart.env: random secrets made once, read by manage.py afterwards, and
never used when DEBUG is off (production still refuses to start without real secrets)."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

from heyaira import quickstart_env

ROOT = Path(__file__).resolve().parents[2]
SHOW = (
    "from django.conf import settings; "
    "print(settings.DEBUG, settings.SECRET_KEY, settings.HEYAIRA_API_KEY_PEPPER, "
    "settings.HEYAIRA_PUBLIC_URL)"
)


def _manage(file: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    """manage.py as typed after `make run`: none of the settings in the environment."""
    clean = {
        k: v
        for k, v in os.environ.items()
        if k
        not in (
            "DEBUG",
            "SECRET_KEY",
            "HEYAIRA_API_KEY_PEPPER",
            "HEYAIRA_PUBLIC_URL",
            "DATABASE_URL",
        )
        and not k.startswith(("PYTEST", "DJANGO_"))
    }
    return subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env={**clean, "HEYAIRA_QUICKSTART_ENV": str(file), **env},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_it_makes_random_secrets_once_in_a_private_file(tmp_path: Path):
    file = tmp_path / "var" / "quickstart.env"
    first = quickstart_env.write(file, public_url="http://127.0.0.1:8000")
    assert stat.S_IMODE(file.stat().st_mode) == 0o600
    second = quickstart_env.write(file, public_url="http://127.0.0.1:8123")
    assert second["SECRET_KEY"] == first["SECRET_KEY"]
    assert second["HEYAIRA_API_KEY_PEPPER"] == first["HEYAIRA_API_KEY_PEPPER"]
    assert len(first["SECRET_KEY"]) >= 50
    assert first["SECRET_KEY"] != first["HEYAIRA_API_KEY_PEPPER"]
    assert quickstart_env.read(file)["HEYAIRA_PUBLIC_URL"] == "http://127.0.0.1:8123"
    assert "DATABASE_URL" not in quickstart_env.read(file)
    other = quickstart_env.write(tmp_path / "other.env", public_url="http://127.0.0.1:8000")
    assert other["SECRET_KEY"] != first["SECRET_KEY"]


def test_manage_py_after_make_run_runs_with_the_files_settings(tmp_path: Path):
    file = tmp_path / "quickstart.env"
    values = quickstart_env.write(file, public_url="http://127.0.0.1:8765")
    done = _manage(file, "shell", "-c", SHOW)
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1].split() == [
        "True",
        values["SECRET_KEY"],
        values["HEYAIRA_API_KEY_PEPPER"],
        "http://127.0.0.1:8765",
    ]


def test_manage_py_uses_the_database_of_the_latest_make_run(tmp_path: Path):
    file = tmp_path / "quickstart.env"
    show = "from django.conf import settings; print(settings.DATABASES['default']['NAME'])"
    quickstart_env.write(file, public_url="http://x.test", database_url=f"sqlite:///{tmp_path}/a")
    done = _manage(file, "shell", "-c", show)
    assert done.stdout.splitlines()[-1] == f"{tmp_path}/a", done.stderr
    quickstart_env.write(file, public_url="http://x.test")
    done = _manage(file, "shell", "-c", show)
    assert done.stdout.splitlines()[-1] == str(ROOT / "var" / "heyaira.sqlite3"), done.stderr


def test_the_environment_wins_over_the_file(tmp_path: Path):
    file = tmp_path / "quickstart.env"
    values = quickstart_env.write(file, public_url="http://127.0.0.1:8765")
    done = _manage(file, "shell", "-c", SHOW, SECRET_KEY="from-the-environment-" + "x" * 40)
    assert done.returncode == 0, done.stderr
    debug, secret, pepper, _url = done.stdout.splitlines()[-1].split()
    assert (debug, secret, pepper) == (
        "True",
        "from-the-environment-" + "x" * 40,
        values["HEYAIRA_API_KEY_PEPPER"],
    )


def test_production_ignores_the_file_and_refuses_to_start_without_secrets(tmp_path: Path):
    file = tmp_path / "quickstart.env"
    quickstart_env.write(file, public_url="http://127.0.0.1:8765")
    done = _manage(file, "check", DEBUG="false")
    assert done.returncode != 0
    assert "SECRET_KEY must be set" in done.stderr


def test_production_without_the_file_refuses_to_start_without_secrets(tmp_path: Path):
    done = _manage(tmp_path / "absent.env", "check")
    assert done.returncode != 0
    assert "SECRET_KEY must be set" in done.stderr


def test_a_malformed_file_stops_the_start_naming_the_line(tmp_path: Path):
    file = tmp_path / "quickstart.env"
    file.write_text("DEBUG=true\nthis is not a setting\n")
    done = _manage(file, "check")
    assert done.returncode != 0
    assert f"{file}:2: expected NAME=value" in done.stderr
