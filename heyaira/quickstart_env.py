"""The quick start's settings file, `var/quickstart.env`: random secrets made once, then kept.

`make run` writes it before anything else (`python -m heyaira.quickstart_env`): a random
SECRET_KEY and HEYAIRA_API_KEY_PEPPER (generated on the first run only, so sessions and API keys
survive a restart), DEBUG=true, and the public URL and DATABASE_URL of the latest `make run`, so
that `python manage.py ...` afterwards works on the database that run served. The settings read it
as defaults only: a variable set in the environment always wins, and when the environment turns
DEBUG off the file is ignored altogether, so a production start never runs on quick-start secrets
and still refuses to start without real ones.

The file is plain `NAME=value` lines (with `#` comments), mode 0600. This module imports nothing
from Django: it runs before the settings exist.
"""

from __future__ import annotations

import os
import re
import secrets
import sys
from pathlib import Path

BASE_DIR = Path(__file__).resolve().parent.parent
DEFAULT_PATH = BASE_DIR / "var" / "quickstart.env"
# Tests and the smoke run point this elsewhere so that they never touch the developer's var/.
PATH_VARIABLE = "HEYAIRA_QUICKSTART_ENV"
SECRET_NAMES = ("SECRET_KEY", "HEYAIRA_API_KEY_PEPPER")
_LINE = re.compile(r"^([A-Z][A-Z0-9_]*)=(.*)$")

HEADER = """\
# Written by `make run` (python -m heyaira.quickstart_env) for the local quick start.
# The secrets are random and made once; keep this file private (mode 0600) and out of backups
# you share. The environment always wins over these values; with DEBUG off they are ignored.
"""


class QuickstartFileError(ValueError):
    """The file exists but cannot be read as NAME=value lines."""


def path() -> Path:
    configured = os.environ.get(PATH_VARIABLE, "")
    return Path(configured) if configured else DEFAULT_PATH


def read(file: Path) -> dict[str, str]:
    """The file's values, or {} when it does not exist. A malformed line is an error."""
    try:
        text = file.read_text(encoding="utf-8")
    except FileNotFoundError:
        return {}
    values: dict[str, str] = {}
    for number, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        match = _LINE.match(line)
        if match is None:
            raise QuickstartFileError(f"{file}:{number}: expected NAME=value, got {raw!r}")
        values[match.group(1)] = match.group(2)
    return values


def write(file: Path, *, public_url: str, database_url: str | None = None) -> dict[str, str]:
    """Create or update the file: secrets kept when present; DEBUG, the public URL and the
    database refreshed (no DATABASE_URL: the settings' default SQLite file)."""
    values = read(file)
    for name in SECRET_NAMES:
        if not values.get(name):
            values[name] = secrets.token_urlsafe(48)
    values["DEBUG"] = "true"
    values["HEYAIRA_PUBLIC_URL"] = public_url
    values.pop("DATABASE_URL", None)
    if database_url:
        values["DATABASE_URL"] = database_url
    body = HEADER + "".join(f"{name}={value}\n" for name, value in values.items())
    file.parent.mkdir(parents=True, exist_ok=True)
    # Written beside the target with 0600 from the start, then renamed over it: the secrets are
    # never readable by others, not even for an instant, and a crash leaves the old file whole.
    scratch = file.with_name(f".{file.name}.{os.getpid()}.tmp")
    descriptor = os.open(scratch, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(descriptor, "w", encoding="utf-8") as output:
        output.write(body)
    os.replace(scratch, file)
    return values


def main() -> None:
    file = path()
    public_url = os.environ.get("HEYAIRA_PUBLIC_URL") or "http://127.0.0.1:8000"
    write(file, public_url=public_url, database_url=os.environ.get("DATABASE_URL"))
    print(f"HeyAira: quick-start settings in {file}", file=sys.stderr)


if __name__ == "__main__":
    main()
