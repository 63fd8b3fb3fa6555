"""`python manage.py ...` typed after `make run`, with a Python that has no Django: manage.py runs
itself again with the project's .venv."""

from __future__ import annotations

import os
import subprocess
import sys
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _bare_python(directory: Path) -> Path:
    """A Python with nothing installed, like the system Python of a fresh machine."""
    venv.EnvBuilder(with_pip=False).create(directory)
    python = directory / "bin" / "python"
    probe = subprocess.run([python, "-c", "import django"], capture_output=True, check=False)
    assert probe.returncode != 0, "the bare Python must not see Django"
    return python


def test_it_runs_again_with_the_project_virtualenv_when_django_is_missing(tmp_path: Path):
    python = _bare_python(tmp_path / "bare")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST", "DJANGO_"))}
    env.pop("HEYAIRA_MANAGE_REEXEC", None)
    done = subprocess.run(
        [python, "manage.py", "shell", "-c", "import sys; print(sys.prefix)"],
        cwd=ROOT,
        env={**env, "DEBUG": "true", "HEYAIRA_QUICKSTART_ENV": str(tmp_path / "none.env")},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert Path(done.stdout.splitlines()[-1]).resolve() == Path(sys.prefix).resolve()


def test_it_keeps_the_exit_status_of_the_command_it_ran_again(tmp_path: Path):
    python = _bare_python(tmp_path / "bare")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST", "DJANGO_"))}
    done = subprocess.run(
        [python, "manage.py", "check", "--tag", "no-such-tag"],
        cwd=ROOT,
        env={**env, "DEBUG": "true", "HEYAIRA_QUICKSTART_ENV": str(tmp_path / "none.env")},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 1
    assert 'There is no system check with the "no-such-tag" tag' in done.stderr
