#!/usr/bin/env python
import importlib.util
import os
import sys
from pathlib import Path

VENV_PYTHON = Path(__file__).resolve().parent / ".venv" / "bin" / "python"


def use_the_project_virtualenv() -> None:
    """`make run` installs into .venv without activating it (make cannot change the caller's
    shell), so `python manage.py ...` typed afterwards usually starts a Python without Django.
    Then, and only then, run this same command again with .venv's Python: os.execv replaces this
    process, so arguments, stdin/stdout, signals and the exit status behave exactly as if .venv's
    Python had been typed. An environment that has Django (an activated virtualenv, CI) is used
    as it is. The marker variable stops a loop should .venv itself lack Django."""
    if importlib.util.find_spec("django") is not None:
        return
    if os.environ.get("HEYAIRA_MANAGE_REEXEC") or not os.access(VENV_PYTHON, os.X_OK):
        return
    os.environ["HEYAIRA_MANAGE_REEXEC"] = "1"
    os.execv(VENV_PYTHON, [str(VENV_PYTHON), os.path.abspath(__file__), *sys.argv[1:]])  # noqa: S606


def main() -> None:
    use_the_project_virtualenv()
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "heyaira.settings")
    try:
        from django.core.management import execute_from_command_line
    except ImportError as missing:
        raise SystemExit(
            "Django is not installed for this Python. Run `make run` once (it creates .venv), "
            "or activate a virtualenv with requirements.txt installed."
        ) from missing

    from heyaira.envconfig import ConfigError, exit_on_config_error

    try:
        execute_from_command_line(sys.argv)
    except ConfigError as error:  # a missing or malformed setting: one line, not a traceback
        exit_on_config_error(error)


if __name__ == "__main__":
    main()
