"""tests/forked.py: what a fork gets is what a new process would have."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests import forked
from tests.live import REPO


def test_the_preload_imports_nothing_of_the_project_and_starts_no_thread(
    live_processes: None,
) -> None:
    """A fork takes its settings after the preload: nothing imported there may have read them."""
    probe = (
        "import sys, threading, tests.preload\n"
        "from django.conf import settings\n"
        "project = ('heyaira', 'web', 'continuity', 'identity', 'projects', 'runtime', 'core',"
        " 'audit')\n"
        "print([m for m in sys.modules if m.split('.')[0] in project],"
        " settings.configured, threading.active_count())\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], cwd=REPO, capture_output=True, text=True, check=False
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[] False 1"


def test_a_fork_runs_its_module_in_its_directory_with_its_log_and_exit_status(
    tmp_path: Path, live_processes: None
) -> None:
    (tmp_path / "good.json").write_text('{"b": [1, 2]}')
    (tmp_path / "bad.json").write_text("{not json")
    log = tmp_path / "fork.log"
    env = {"PATH": "/usr/bin:/bin"}

    good = forked.run_module("json.tool", ["--sort-keys", "good.json"], env, tmp_path, log)
    assert good.wait(timeout=60) == 0
    assert json.loads(log.read_text()) == {"b": [1, 2]}  # relative to its directory, in its log

    bad = forked.run_module("json.tool", ["bad.json"], env, tmp_path, log)
    assert bad.wait(timeout=60) == 1
    assert "Expecting property name" in log.read_text()
