"""scripts/continuity_protocol_smoke.py, now on the client SDK, against a live server with two
API keys (`make smoke` runs it against `make run`, over OAuth and over keys)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.client.conftest import Seat
from tests.live import REPO

pytestmark = pytest.mark.live_server


def test_the_two_session_smoke_script_holds_on_the_client_sdk(seat: Seat):
    second = seat.server.manage(
        "create_api_key", seat.slug, "--user", seat.username, "--label", "b"
    )
    command = [sys.executable, str(REPO / "scripts" / "continuity_protocol_smoke.py")]
    command += ["--url", seat.server.url, "--instance", "live-test", "--project", seat.slug]
    command += ["--api-key", seat.key, "--api-key-b", second.strip().splitlines()[-1]]
    command += ["--mode", "legacy", "--mode-b", "auto"]

    done = subprocess.run(command, capture_output=True, text=True, timeout=300, check=False)

    assert done.returncode == 0, f"{done.stdout}\n{done.stderr}"
    assert "ProfileMismatch on instance" in done.stdout
    assert "stored the running summary in the background" in done.stdout
    assert done.stdout.strip().endswith("The continuity protocol held end to end.")
    counts = seat.counts()
    assert (counts["memories"], counts["tasks"], counts["receipts"], counts["states"]) == (
        2,
        1,
        1,
        1,
    )
