"""Who sees which page: a project's pages exist only for its members (the audit pages for its
owners, admins and auditors); for everyone else any URL naming it answers exactly like one
naming a project that does not exist."""

from __future__ import annotations

import re
import uuid
from typing import Any

import pytest
from django.test import Client
from guardian.shortcuts import assign_perm

from audit.models import AuditEvent
from projects.models import ApiKey
from tests.factories import World, make_user
from tests.web.content import story

CSRF_TOKEN = re.compile(r'name="csrfmiddlewaretoken" value="[^"]+"')


def project_urls(slug: str, ids: dict[str, object], event: object) -> list[str]:
    return [
        f"/projects/{slug}/",
        f"/projects/{slug}/tasks/{ids['task']}/",
        f"/projects/{slug}/memory/",
        f"/projects/{slug}/memory/?q=templates",
        f"/projects/{slug}/memory/{ids['new']}/",
        f"/projects/{slug}/summaries/",
        f"/projects/{slug}/summaries/codex/",
        f"/projects/{slug}/keys/",
        f"/audit/{slug}/",
        f"/audit/{slug}/?operation=task_update",
        f"/audit/{slug}/events/{event}/",
    ]


@pytest.fixture
def alpha_story(world: World) -> dict[str, object]:
    ids = story(world)
    event = AuditEvent.objects.filter(project_id=world.alpha.pk).first()
    assert event is not None
    return {**ids, "event": event.pk}


def page_text(response: Any) -> str:
    """The page without its CSRF token (masked anew in every response)."""
    return CSRF_TOKEN.sub("", response.content.decode())


def not_found_body(client: Client) -> str:
    return page_text(client.get(f"/projects/no-such-project-{uuid.uuid4().hex[:6]}/"))


def test_it_answers_an_outsider_every_url_of_another_project_as_not_found(
    world: World, alpha_story: dict[str, object], client: Client
):
    client.force_login(world.outsider)
    missing = not_found_body(client)
    for url in project_urls("alpha", alpha_story, alpha_story["event"]):
        response = client.get(url)
        assert response.status_code == 404, url
        assert page_text(response) == missing, url  # word for word the unknown project's page


def test_it_answers_ids_of_another_project_under_ones_own_as_not_found(
    world: World, alpha_story: dict[str, object], client: Client
):
    """beta's owner puts alpha's task, memory and event ids under beta's own slug."""
    client.force_login(world.outsider)
    for url in project_urls("beta", alpha_story, alpha_story["event"]):
        if any(str(alpha_story[name]) in url for name in ("task", "new", "event")):
            assert client.get(url).status_code == 404, url
        elif "summaries/codex" in url:
            assert client.get(url).status_code == 404, url  # beta has no such agent
        else:
            assert client.get(url).status_code == 200, url


def test_it_shows_a_member_their_project_and_keeps_management_pages_to_managers(
    world: World, alpha_story: dict[str, object], client: Client
):
    client.force_login(world.viewer)
    for url in project_urls("alpha", alpha_story, alpha_story["event"]):
        managers_only = "/keys/" in url or url.startswith("/audit/")
        assert client.get(url).status_code == (404 if managers_only else 200), url
    client.force_login(world.admin)
    for url in project_urls("alpha", alpha_story, alpha_story["event"]):
        assert client.get(url).status_code == 200, url


def test_it_lets_an_auditor_read_one_projects_audit_log_and_nothing_else(
    world: World, alpha_story: dict[str, object], client: Client
):
    auditor = make_user("audrey")
    assign_perm("projects.view_project_audit", auditor, world.alpha)
    client.force_login(auditor)
    assert client.get("/audit/alpha/").status_code == 200
    assert client.get(f"/audit/alpha/events/{alpha_story['event']}/").status_code == 200
    assert client.get("/audit/beta/").status_code == 404
    assert client.get("/projects/alpha/").status_code == 404  # not a member: no dashboard
    assert "Alpha" in client.get("/audit/").content.decode()
    assert "Beta" not in client.get("/audit/").content.decode()

    auditor.is_active = False
    auditor.save()
    assert client.get("/audit/alpha/").status_code in (302, 404)  # signed out, or refused


def test_it_sends_anonymous_visitors_to_sign_in_for_every_page(db, client: Client):
    for url in ["/projects/", "/projects/alpha/", "/apps/", "/audit/", "/audit/alpha/"]:
        response = client.get(url)
        assert response.status_code == 302, url
        assert response["Location"].startswith("/accounts/login/?next="), url


def test_it_writes_nothing_but_the_audit_rows_of_its_reads(
    world: World, alpha_story: dict[str, object], client: Client
):
    from continuity.models import Memory, StateVersion, Task, WorkReceipt

    tables = (Memory, StateVersion, Task, WorkReceipt, ApiKey)
    before = [model.objects.count() for model in tables]
    client.force_login(world.owner)
    for url in project_urls("alpha", alpha_story, alpha_story["event"]):
        assert client.get(url).status_code == 200
        assert client.post(url).status_code == 405, url  # no page takes a write
    assert [model.objects.count() for model in tables] == before
