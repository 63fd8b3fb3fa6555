"""bench/mcp_fuzz.py runs end to end at a tiny size: its own server, the generators, the
classification and the report (the 10,000-request run is done by hand; this keeps it working)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from tests.bench.test_mcp_latency_smoke import _database_arguments
from tests.live import REPO

pytestmark = pytest.mark.live_server


def test_the_fuzz_bench_runs_at_a_tiny_size_and_reports_every_class() -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST", "DJANGO_"))}
    arguments = _database_arguments()
    if "--db-name" in arguments:
        arguments[arguments.index("--db-name") + 1] += "_fuzz"
        arguments = ["--database", "postgres", *arguments]
    command = [sys.executable, "bench/mcp_fuzz.py", *arguments]
    command += ["--requests", "60", "--seed", "3", "--time-limit", "120"]
    done = subprocess.run(
        command, cwd=REPO, env=env, capture_output=True, text=True, timeout=240, check=False
    )
    output = done.stdout + done.stderr
    assert done.returncode == 0, output
    assert "60 requests in" in output, output
    assert "60  in all (0 unexpected)" in output, output
    assert "0 unexpected" in output
