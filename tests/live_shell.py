"""`manage.py ARGS` against a live server's database, many times over in one process.

tests/live.py starts one of these beside each live server (forked with the server's environment,
tests/forked.py) the first time a test runs a manage.py command or Python against that server's
database. Each request on the connection is a list of arguments; they are run exactly as
`manage.py` runs them (Django's ManagementUtility, system checks included), and the answer is
the exit status and what the command wrote to stdout and stderr. A new `manage.py` process per
call would import Django and the project again each time (a second or more under load, hundreds
of times in a test run).

What one process could carry from a call to the next is cleared after each: database
connections are closed (the live server's database sees none left open) and in-process caches
emptied, so each call starts as a fresh `manage.py` would.
"""

from __future__ import annotations

import contextlib
import io
import os
import traceback
from multiprocessing.connection import Connection
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


def serve(connection: Connection) -> None:
    """Answer each request until the other end closes the connection. Stdout and stderr are the
    shell's log: whatever else a command writes outside its captured streams lands there."""
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "heyaira.settings")
    import django

    django.setup()
    while True:
        try:
            args = connection.recv()
        except EOFError:
            return
        connection.send(run(list(args)))
