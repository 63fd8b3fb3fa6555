"""`manage.py ARGS` against a live server's database, many times over in one process.

tests/live.py starts one of these beside each live server (`python -m tests.live_shell`, with
the server's environment) the first time a test runs a manage.py command or Python against that
server's database. Each request line on stdin is a JSON list of arguments; they are run exactly
as `manage.py` runs them (Django's ManagementUtility, system checks included), and one JSON line
answers with the exit status and what the command wrote to stdout and stderr. A new
`manage.py` process per call would import Django and the project again each time (a second or
more under load, hundreds of times in a test run).

What one process could carry from a call to the next is cleared after each: database
connections are closed (the live server's database sees none left open) and in-process caches
emptied, so each call starts as a fresh `manage.py` would.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import sys
import traceback
from typing import Any


def run(args: list[str]) -> dict[str, Any]:
    from django.core.management import ManagementUtility

    out, err = io.StringIO(), io.StringIO()
    returncode = 0
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            ManagementUtility(["manage.py", *args]).execute()
        except SystemExit as exit_:
            code = exit_.code
            returncode = code if isinstance(code, int) else (0 if code is None else 1)
            if isinstance(code, str):
                err.write(code + "\n")
        except BaseException as error:  # a traceback on stderr, as manage.py's would be
            traceback.print_exception(error, file=err)
            returncode = 1
        finally:
            _reset()
    return {"returncode": returncode, "stdout": out.getvalue(), "stderr": err.getvalue()}


def _reset() -> None:
    from django.core.cache import caches
    from django.core.cache.backends.locmem import LocMemCache
    from django.db import connections

    connections.close_all()
    for cache in caches.all(initialized_only=True):
        if isinstance(cache, LocMemCache):
            cache.clear()


def main() -> None:
    # Answers go out on the original stdout only; anything else that writes to file
    # descriptor 1 (a log handler, a C library) lands in stderr, the helper's log.
    answers = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)
    sys.stdout = os.fdopen(1, "w", encoding="utf-8", closefd=False)
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "heyaira.settings")
    import django

    django.setup()
    for line in sys.stdin:
        answers.write(json.dumps(run(json.loads(line))) + "\n")
        answers.flush()


if __name__ == "__main__":
    main()
