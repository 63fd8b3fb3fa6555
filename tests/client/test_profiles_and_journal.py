"""Profiles (TOML), the identity check, the local journal and the token file, without a server."""

from __future__ import annotations

import threading
import uuid
from pathlib import Path

import anyio
import pytest
from mcp.shared.auth import OAuthToken

from heyaira_client import (
    Journal,
    ProfileError,
    ProfileMismatch,
    check_identity,
    load_profile,
    save_profile,
)
from heyaira_client.models import Identity
from heyaira_client.profile import Profile, profile_from
from heyaira_client.tokens import FileTokenStorage

PROJECT_ID = str(uuid.uuid4())


def identity(**changes: str) -> Identity:
    resource = changes.get("resource", "http://127.0.0.1:8000/mcp")
    instance = changes.get("instance", "local")
    project = changes.get("project", PROJECT_ID)
    return Identity.of(
        {
            "resource": resource,
            "instance": instance,
            "project": {"id": project, "slug": changes.get("slug", "demo"), "name": "Demo"},
            "principal": {"actor": "owner", "role": "owner", "scopes": [], "credential": "api_key"},
            "write_context": {
                "resource": changes.get("wc_resource", resource),
                "instance": instance,
                "project": project,
            },
        }
    )


def profile(**changes: str) -> Profile:
    values = {
        "name": "demo",
        "url": "http://127.0.0.1:8000/mcp",
        "instance": "local",
        "project": "demo",
        "credential": "env:HEYAIRA_KEY",
        **changes,
    }
    return Profile(**values)  # type: ignore[arg-type]


def test_a_profile_round_trips_through_its_file_owner_only(tmp_path: Path):
    path = tmp_path / "config" / "profiles.toml"
    first = profile(summarizer=("llm", "-m", "small"))  # type: ignore[arg-type]
    save_profile(first, path=path)
    save_profile(profile(name="other", credential="oauth"), path=path)

    assert load_profile(path=path) == first  # the first one saved is the default
    assert load_profile("other", path=path).credential == "oauth"
    assert path.stat().st_mode & 0o777 == 0o600


@pytest.mark.parametrize(
    "table",
    [
        {"url": "ftp://x", "instance": "i", "project": "p", "credential": "env:K"},
        {"url": "http://x/mcp", "instance": "i", "project": "p", "credential": "token:abc"},
        {"url": "http://x/mcp", "instance": "", "project": "p", "credential": "oauth"},
        {"url": "http://x/mcp", "instance": "i", "project": "p", "credential": "oauth", "x": 1},
    ],
)
def test_a_malformed_profile_is_refused(table: dict):
    with pytest.raises(ProfileError):
        profile_from("bad", table)


def test_the_identity_check_compares_resource_instance_project_and_write_context():
    check_identity(profile(), identity())
    check_identity(profile(project=PROJECT_ID), identity())  # pinned by id
    for changes, field in [
        ({"resource": "https://elsewhere.example/mcp"}, "resource"),
        ({"instance": "production"}, "instance"),
        ({"slug": "other"}, "project"),
        ({"wc_resource": "https://elsewhere.example/mcp"}, "write_context"),
    ]:
        with pytest.raises(ProfileMismatch) as refused:
            check_identity(profile(), identity(**changes))
        assert refused.value.field == field
    with pytest.raises(ProfileMismatch):
        check_identity(profile(project=str(uuid.uuid4())), identity())


def test_the_journal_resumes_an_unfinished_write_with_its_key(tmp_path: Path):
    journal = Journal(tmp_path / "state" / "journal.sqlite3")
    payload = {"kind": "note", "content": "Once."}
    first = journal.begin(scope="s", operation="memory_add", payload=payload)
    again = journal.begin(scope="s", operation="memory_add", payload=payload)
    other = journal.begin(scope="s", operation="memory_add", payload={**payload, "content": "Two"})

    assert again.key == first.key
    assert again.resumed
    assert not first.resumed
    assert other.key != first.key
    journal.finish(again, result_id="m1")
    assert journal.begin(scope="s", operation="memory_add", payload=payload).key != first.key
    journal.fail(other)
    assert not journal.begin(
        scope="s", operation="memory_add", payload=other_payload(payload)
    ).resumed
    assert (tmp_path / "state" / "journal.sqlite3").stat().st_mode & 0o777 == 0o600
    assert (tmp_path / "state").stat().st_mode & 0o777 == 0o700


def other_payload(payload: dict) -> dict:
    return {**payload, "content": "Two"}


def test_processes_resuming_one_write_agree_on_its_key(tmp_path: Path):
    path = tmp_path / "journal.sqlite3"
    Journal(path).begin(scope="s", operation="task_create", payload={"title": "T"})
    keys: list[str] = []
    barrier = threading.Barrier(8)

    def resume() -> None:
        barrier.wait()
        keys.append(
            Journal(path).begin(scope="s", operation="task_create", payload={"title": "T"}).key
        )

    threads = [threading.Thread(target=resume) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(30)
    assert len(keys) == 8
    assert len(set(keys)) == 1


def test_oauth_tokens_are_stored_owner_only_and_bound_to_the_resource(tmp_path: Path):
    storage = FileTokenStorage("demo", "http://127.0.0.1:8000/mcp", tmp_path / "tokens")
    token = OAuthToken(access_token="at", refresh_token="rt", expires_in=900, token_type="Bearer")
    anyio.run(storage.set_tokens, token)

    assert storage.path.stat().st_mode & 0o777 == 0o600
    assert storage.path.parent.stat().st_mode & 0o777 == 0o700
    assert anyio.run(storage.get_tokens) == token
    assert storage.expires_at is not None
    elsewhere = FileTokenStorage("demo", "https://other.example/mcp", tmp_path / "tokens")
    assert anyio.run(elsewhere.get_tokens) is None
