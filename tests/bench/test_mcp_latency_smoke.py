"""bench/mcp_latency.py runs end to end at a tiny size: setup, bulk load, both clients, the
query count, the report (the real bench is run by hand; this keeps it from rotting)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from django.conf import settings

from tests.live import REPO, free_port

pytestmark = pytest.mark.live_server


def _database_arguments() -> list[str]:
    default = settings.DATABASES["default"]
    if default["ENGINE"] != "django.db.backends.postgresql":
        return ["--database", "sqlite"]
    user = default.get("USER") or ""
    password = f":{default['PASSWORD']}" if default.get("PASSWORD") else ""
    port = f":{default['PORT']}" if default.get("PORT") else ""
    server = f"postgres://{user}{password}@{default.get('HOST') or '127.0.0.1'}{port}"
    # Its own database name: test workers and CI's two runs never share one.
    return ["--postgres", server, "--db-name", f"heyaira_bench_smoke_{free_port()}"]


def test_the_latency_bench_runs_at_a_tiny_size_and_reports_every_tool() -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST", "DJANGO_"))}
    command = [sys.executable, "bench/mcp_latency.py", *_database_arguments()]
    command += ["--sizes", "30", "--calls", "3", "--warmup", "1", "--time-limit", "120"]
    done = subprocess.run(
        command, cwd=REPO, env=env, capture_output=True, text=True, timeout=180, check=False
    )
    output = done.stdout + done.stderr
    assert done.returncode == 0, output
    for tool in ("server_identity", "continuity_context", "memory_add", "task_update"):
        assert f"raw    {tool}" in output, output
        assert f"sdk    {tool}" in output, output
        assert f"rest   {tool}" in output, output
    assert "0 failed calls" in output
    assert "queries counted inside Django" in output
