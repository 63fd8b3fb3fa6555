"""`heyaira export` against a live server: an owner's key with audit:read writes the project's
bundle, the bytes project_export writes; a key without audit:read is refused, nothing written."""

from __future__ import annotations

from pathlib import Path

from tests.client.conftest import Home, Seat


def _key(seat: Seat, scopes: str) -> str:
    answer = seat.server.manage(
        "create_api_key", seat.slug, "--user", seat.username, "--scopes", scopes
    )
    return answer.strip().splitlines()[-1]


def test_an_owner_exports_the_bundle_the_server_writes(
    seat: Seat, home: Home, tmp_path: Path
) -> None:
    seat.saved(home)
    key = _key(seat, "continuity:read,audit:read")
    out = tmp_path / "bundle.jsonl"
    done = home.cli("export", "--output", str(out), HEYAIRA_TEST_KEY=key)
    assert done.returncode == 0, done.stderr
    assert f"bytes to {out}" in done.stderr
    there = tmp_path / "there.jsonl"
    seat.server.manage("project_export", seat.slug, "--output", str(there))
    assert out.read_bytes() == there.read_bytes()
    assert out.read_bytes().endswith(b'"record":"trailer"}\n')


def test_a_key_without_audit_read_is_refused_and_nothing_is_written(
    seat: Seat, home: Home, tmp_path: Path
) -> None:
    seat.saved(home)
    out = tmp_path / "bundle.jsonl"
    done = home.cli("export", "--output", str(out), HEYAIRA_TEST_KEY=_key(seat, "continuity:read"))
    assert done.returncode == 5
    assert "forbidden" in done.stderr
    assert "audit:read" in done.stderr
    assert out.read_bytes() == b""
