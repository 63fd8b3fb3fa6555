"""Live servers and their management shells, forked from a process that has already imported
the heavy libraries.

A new `python -m uvicorn heyaira.asgi:application` spends about 1.2 s before it answers, two
thirds of it importing Django, the MCP SDK (its pydantic models), Starlette, uvicorn, psycopg
and cryptography; a management shell pays the same. A test run starts about a hundred of each.
So each test process keeps one multiprocessing "forkserver" that imports those libraries once
(tests/preload.py: only libraries that read no setting and start no thread when imported), and
every live server and shell is a fork of it. The fork then does what a new process does:
takes the server's environment, working directory and log file, sets Django up from that
environment, and runs uvicorn's own command line with the same arguments (runpy, as `python -m`
does) or the shell's loop. Up in 0.55 s instead of 1.25 s, measured on a quiet machine.

The new-process path is still covered: gunicorn (the production command) starts as a new
process here (tests/live.py), and `make run`, the smoke test and the README's commands start
uvicorn from a shell.
"""

from __future__ import annotations

import atexit
import multiprocessing
import os
import runpy
import subprocess
import sys
from multiprocessing.connection import Connection
from multiprocessing.process import BaseProcess
from pathlib import Path

PRELOAD = "tests.preload"

_context = multiprocessing.get_context("forkserver")
_context.set_forkserver_preload([PRELOAD])


class ForkedProcess:
    """A forked child with the part of subprocess.Popen's interface that tests use."""

    def __init__(self, process: BaseProcess) -> None:
        self._process = process

    @property
    def pid(self) -> int:
        assert self._process.pid is not None
        return self._process.pid

    def poll(self) -> int | None:
        return self._process.exitcode

    def wait(self, timeout: float | None = None) -> int:
        self._process.join(timeout)
        if self._process.exitcode is None:
            raise subprocess.TimeoutExpired(f"forked pid {self.pid}", timeout or 0)
        return self._process.exitcode

    def terminate(self) -> None:
        self._process.terminate()

    def kill(self) -> None:
        self._process.kill()


def run_module(
    module: str, argv: list[str], env: dict[str, str], cwd: Path, log_path: Path
) -> ForkedProcess:
    """`python -m MODULE ARGV...` with this environment and working directory, stdout and stderr
    appended to log_path."""
    process = _context.Process(
        target=_run_module, args=(module, argv, env, str(cwd), str(log_path)), daemon=True
    )
    process.start()
    return ForkedProcess(process)


def run_shell(env: dict[str, str], cwd: Path, log_path: Path) -> tuple[ForkedProcess, Connection]:
    """tests/live_shell.py's loop in a fork: send it manage.py's arguments on the returned
    connection, receive its answer there."""
    ours, theirs = _context.Pipe()
    process = _context.Process(
        target=_run_shell, args=(theirs, env, str(cwd), str(log_path)), daemon=True
    )
    process.start()
    theirs.close()
    return ForkedProcess(process), ours


def _become(env: dict[str, str], cwd: str, log_path: str) -> None:
    """What a new process would have: this environment (os.environ, and the C library's through
    putenv), this directory first on sys.path, stdout and stderr in the log."""
    os.environ.clear()
    os.environ.update(env)
    os.chdir(cwd)
    sys.path.insert(0, cwd)
    log = os.open(log_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
    os.dup2(log, 1)
    os.dup2(log, 2)
    os.close(log)
    # The streams were made before the environment said PYTHONUNBUFFERED: every line goes out.
    for stream in (sys.stdout, sys.stderr):
        stream.reconfigure(line_buffering=True, write_through=True)  # type: ignore[union-attr]


def _run_module(module: str, argv: list[str], env: dict[str, str], cwd: str, log: str) -> None:
    _become(env, cwd, log)
    sys.argv = [module, *argv]
    try:
        runpy.run_module(module, run_name="__main__", alter_sys=True)
    finally:
        # multiprocessing ends a child with os._exit: run the exit handlers as an interpreter
        # would (the audit recorder logs the rows it could not write).
        atexit._run_exitfuncs()


def _run_shell(connection: Connection, env: dict[str, str], cwd: str, log: str) -> None:
    _become(env, cwd, log)
    from tests.live_shell import serve

    serve(connection)
