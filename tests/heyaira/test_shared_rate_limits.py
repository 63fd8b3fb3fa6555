"""With CACHE_URL=redis://..., rate-limit counters are shared by every worker process."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

# Every test here runs manage.py, uvicorn or gunicorn in processes of their own.
pytestmark = pytest.mark.live

ROOT = Path(__file__).resolve().parents[2]
REDIS = ("127.0.0.1", 6379)
WINDOW = 600


def redis_is_up() -> bool:
    try:
        with socket.create_connection(REDIS, timeout=1):
            return True
    except OSError:
        return False


@pytest.mark.skipif(not redis_is_up(), reason="no Redis at 127.0.0.1:6379")
def test_two_processes_count_into_one_window(tmp_path: Path):
    """Two separate Python processes, like two gunicorn workers, hit one counter."""
    env = {
        "DJANGO_SETTINGS_MODULE": "heyaira.settings",
        "DEBUG": "true",
        "DATABASE_URL": f"sqlite:///{tmp_path / 'db.sqlite3'}",
        "CACHE_URL": f"redis://{REDIS[0]}:{REDIS[1]}/15",
        "PATH": "/usr/bin:/bin",
    }
    # The counter is a fixed 600 s window: two hits that straddle its end are counted apart,
    # so a run that crosses it (the window number differs before and after) is run again.
    for _attempt in range(3):
        bucket = f"test-{uuid.uuid4().hex}"
        window_before = int(time.time() // WINDOW)
        counts = [_hit_in_a_new_process(bucket, env) for _ in range(2)]
        if int(time.time() // WINDOW) == window_before:
            break
    assert counts == ["1", "2"]


def _hit_in_a_new_process(bucket: str, env: dict[str, str]) -> str:
    code = (
        "import django; django.setup()\n"
        "from identity.ratelimit import hit\n"
        f"print(hit({bucket!r}, '203.0.113.7', limit=10, window={WINDOW}).count)\n"
    )
    return subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    ).stdout.strip()
