"""Rough edges of the pages, each fixed: a wrong filter is named over a whole page (not "none
yet" over hundreds of events), a damaged link is explained without naming code, a long search
keeps the page, and nobody is offered an audit log they cannot open."""

from __future__ import annotations

import re

import pytest
from django.test import Client

from audit.models import AuditEvent
from projects.auditors import auditor_grant
from projects.callers import operator_caller
from tests.factories import World, make_user
from tests.web.content import record_events, story

INTERNAL_NAMES = re.compile(r"memory_timeline|task_board|receipt_list|memory_list|cursor")


def test_a_wrong_audit_filter_is_named_and_the_page_stays_whole(world: World, client: Client):
    record_events(world.alpha, 60, operation="task_get")
    events = AuditEvent.objects.filter(project_id=world.alpha.pk).count()
    client.force_login(world.owner)
    response = client.get("/audit/alpha/?since=yesterday&outcome=weird")
    assert response.status_code == 400
    html = response.content.decode()
    assert "none yet" not in html
    assert f"<dt>Events</dt><dd>{events}, the last at" in html  # the chain, as it is
    problems = html[
        html.index('id="filter-problems"') : html.index(
            "</div>", html.index('id="filter-problems"')
        )
    ]
    assert "2 filters are wrong" in problems
    assert '<a href="#id_since">From (UTC)</a>: Enter a valid date/time.' in problems
    assert '<a href="#id_outcome">Outcome</a>: Select a valid choice.' in problems
    assert 'value="yesterday"' in html  # the form keeps what was typed, to correct it
    assert 'aria-invalid="true"' in html
    assert "/audit/alpha/events/" not in html  # no list until the filters mean something
    assert "Download CSV" not in html


def test_a_wrong_export_filter_is_named(world: World, client: Client):
    client.force_login(world.owner)
    response = client.get("/audit/alpha/export.csv?outcome=weird")
    assert response.status_code == 400
    assert "Outcome: Select a valid choice." in response.content.decode()


@pytest.mark.parametrize(
    "url",
    [
        "/projects/alpha/?after=not-a-cursor",
        "/projects/alpha/memory/?after=%25%25%25",
        "/projects/alpha/memory/?kind=note&after=AAAA",
        "/projects/alpha/tasks/{task}/?after=zzz",
        "/audit/alpha/?after=broken",
    ],
)
def test_a_damaged_page_link_is_explained_in_the_persons_words(
    world: World, client: Client, url: str
):
    ids = story(world)
    client.force_login(world.owner)
    response = client.get(url.format(**ids))
    assert response.status_code == 400
    html = response.content.decode()
    assert "This page link is damaged or out of date: start again from the first page." in html
    main = html[html.index("<main") : html.index("</main>")]
    assert not INTERNAL_NAMES.search(main), main


def test_a_bad_value_in_the_address_names_it_without_code(world: World, client: Client):
    client.force_login(world.owner)
    html = client.get("/projects/alpha/memory/?kind=recipe").content.decode()
    assert "There is no kind “recipe”: decisions and notes are shown." in html


def test_a_search_longer_than_allowed_keeps_the_page_and_says_so(world: World, client: Client):
    story(world)
    client.force_login(world.viewer)
    query = "JavaScript " + "x" * 190  # 201 characters
    assert len(query) == 201
    response = client.get("/projects/alpha/memory/", {"q": query})
    assert response.status_code == 200
    html = response.content.decode()
    assert "Searches take at most 200 characters: the first 200 of your 201 were searched." in html
    assert '<h2 id="results">Best matches for' in html
    assert '<nav class="tabs" aria-label="Project">' in html  # the page, not an error page


@pytest.mark.parametrize("url", ["/", "/projects/", "/projects/alpha/", "/apps/"])
def test_a_viewer_is_offered_no_audit_log(world: World, client: Client, url: str):
    client.force_login(world.viewer)
    html = client.get(url).content.decode()
    assert 'href="/audit/' not in html, url


@pytest.mark.parametrize("url", ["/", "/projects/"])
def test_owners_and_auditors_are_offered_the_audit_logs(world: World, client: Client, url: str):
    client.force_login(world.owner)
    assert 'href="/audit/"' in client.get(url).content.decode()
    auditor = make_user("audrey")
    auditor_grant(operator_caller(world.alpha), user_id=auditor.pk)
    client.force_login(auditor)
    assert 'href="/audit/"' in client.get(url).content.decode()
