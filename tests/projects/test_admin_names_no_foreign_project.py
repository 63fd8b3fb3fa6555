"""The admin names no project its viewer may not see: a non-superuser owner of one project walks
every page the admin offers (the index and app pages, every list with every filter choice,
every add form and the change page of every row listed, and the autocomplete endpoint for every
relation to a listed model) and never meets another project's name, slug or id."""

from __future__ import annotations

import json
import re
from typing import Any

import pytest
from django.contrib import admin
from django.db.models import ForeignKey, ManyToManyField
from django.test import Client
from django.urls import reverse

from core.access import Role
from projects.api_keys import api_key_create, api_key_revoke
from projects.auditors import auditor_grant
from projects.callers import operator_caller
from tests.factories import add_member, bind_repository, make_project, make_user

pytestmark = pytest.mark.django_db

FOREIGN = ("cedar-secret", "delta-hidden")


@pytest.fixture
def walker(db: None) -> tuple[Client, list[str]]:
    """bea owns bravo; cedar-secret and delta-hidden are full projects of other people (members,
    keys live and revoked, bindings, auditors, audit events), and bea is a member of neither."""
    bea = make_user("bea")
    bravo = make_project("bravo", bea)
    bind_repository(bravo, "bravo-co", "site")
    words: list[str] = []
    for slug in FOREIGN:
        owner = make_user(f"{slug}-owner")
        guest = make_user(f"{slug}-guest")
        project = make_project(slug, owner)
        add_member(project, guest, Role.CONTRIBUTOR)
        bind_repository(project, f"{slug}-org", f"{slug}-repo")
        caller = operator_caller(project)
        for label in ("live", "old"):
            issued = api_key_create(
                caller, user_id=guest.pk, label=f"{slug}-{label}", scopes=["continuity:read"]
            )
        api_key_revoke(caller, api_key_id=issued.api_key.pk)
        auditor_grant(caller, user_id=make_user(f"{slug}-auditor").pk)
        words += [slug, project.name, str(project.pk)]
    client = Client()
    client.force_login(bea)
    return client, words


def _leaks(text: str, words: list[str]) -> list[str]:
    return [word for word in words if re.search(re.escape(word), text, re.IGNORECASE)]


def _pages(client: Client) -> list[str]:
    """Every admin page this person is offered, from the index down."""
    urls = [reverse("admin:index")]
    urls += [reverse("admin:app_list", args=[app]) for app in ("projects", "audit", "oauth")]
    for model in admin.site._registry:
        info = (model._meta.app_label, model._meta.model_name)
        changelist = reverse("admin:{}_{}_changelist".format(*info))
        answer = client.get(changelist)
        if answer.status_code != 200:
            continue
        urls.append(changelist)
        urls += [changelist + query for query in _filter_links(answer.content.decode())]
        urls.append(reverse("admin:{}_{}_add".format(*info)))
        for row in answer.context["cl"].result_list[:20]:
            urls.append(reverse("admin:{}_{}_change".format(*info), args=[row.pk]))
        urls += _autocompletes(model)
    return urls


def _filter_links(html: str) -> list[str]:
    """The query strings of the filter side bar's links (every choice of every filter)."""
    sidebar = html.split('id="changelist-filter"', 1)[-1] if "changelist-filter" in html else ""
    return sorted({link.replace("&amp;", "&") for link in re.findall(r'href="(\?[^"]*)"', sidebar)})


def _autocompletes(source: Any) -> list[str]:
    """The autocomplete endpoint for every relation of `source` to a model the admin lists,
    with no search term and with a foreign project's slug as the term."""
    urls = []
    for field in source._meta.get_fields():
        if not isinstance(field, ForeignKey | ManyToManyField):
            continue
        if field.remote_field.model not in admin.site._registry:
            continue
        for term in ("", FOREIGN[0][:5]):
            query = (
                f"app_label={source._meta.app_label}&model_name={source._meta.model_name}"
                f"&field_name={field.name}&term={term}"
            )
            urls.append(f"{reverse('admin:autocomplete')}?{query}")
    return urls


def test_a_non_superuser_owner_meets_no_foreign_project_anywhere(
    walker: tuple[Client, list[str]],
):
    client, words = walker
    seen, leaks = 0, {}
    for url in _pages(client):
        answer = client.get(url)
        if answer.status_code in (302, 403, 404):
            continue  # not offered to this person
        assert answer.status_code == 200, url
        seen += 1
        text = answer.content.decode()
        if answer["Content-Type"].startswith("application/json"):
            text = json.dumps(answer.json())
        found = _leaks(text, words)
        if found:
            leaks[url] = found
    assert seen > 20  # the walk reached the lists, filters, forms and rows
    assert leaks == {}


def test_the_walk_would_see_a_foreign_project_a_superuser_may_see(
    walker: tuple[Client, list[str]],
):
    """The same walk as a superuser meets them: the check above can fail."""
    client, words = walker
    root = make_user("root", is_staff=True, is_superuser=True)
    client.force_login(root)
    pages = "".join(client.get(url).content.decode() for url in _pages(client)[:12])
    assert set(_leaks(pages, words)) >= {FOREIGN[0], FOREIGN[1]}
