"""Every refusal the admin shows is worded for a person: no capability names such as "(own)",
no argument names such as user_id, no regular expressions or validator jargon."""

from __future__ import annotations

import re

import pytest
from django.contrib.messages import get_messages
from django.test import Client

from projects.models import Membership, Project
from tests.factories import World, make_user

INTERNAL = re.compile(
    r"\((own|manage|write|read|read_audit)\)|user_id|membership_id|Invalid arguments"
    r"|String should|pattern|Input should|\^|role does not allow this"
)
ADD_MEMBER = "/admin/projects/membership/add/"
ADD_BINDING = "/admin/projects/projectrepository/add/"
ADD_KEY = "/admin/projects/apikey/add/"


def shown(response) -> list[str]:
    """Every error message on the page: the form's and the admin's messages."""
    said = [str(m) for m in get_messages(response.wsgi_request)]
    context = response.context
    if context is not None and "adminform" in context:
        for problems in context["adminform"].form.errors.values():
            said.extend(str(problem) for problem in problems)
    return said


def as_person(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def member(world: World, who: str) -> Membership:
    return Membership.objects.get(project=world.alpha, user=getattr(world, who))


def binding(world: World, **overrides: str) -> dict[str, str]:
    return {
        "project": str(world.alpha.pk),
        "provider": "github",
        "owner": "acme",
        "name": "docs",
        "url": "https://github.com/acme/docs",
        "default_branch": "main",
        "installation_ref": "",
        **overrides,
    }


def key(world: World, username: str, scopes: list[str]) -> dict[str, object]:
    return {"project": str(world.alpha.pk), "username": username, "label": "k", "scopes": scopes}


REFUSALS = {
    "an admin granting the owner role": lambda w: as_person(w.admin).post(
        ADD_MEMBER, {"project": w.alpha.pk, "username": "nina", "role": "owner"}
    ),
    "an admin promoting a contributor to admin": lambda w: as_person(w.admin).post(
        f"/admin/projects/membership/{member(w, 'contributor').pk}/change/", {"role": "admin"}
    ),
    "adding someone who is already a member": lambda w: as_person(w.admin).post(
        ADD_MEMBER, {"project": w.alpha.pk, "username": "carla", "role": "viewer"}
    ),
    "the last owner demoting themselves": lambda w: as_person(w.owner).post(
        f"/admin/projects/membership/{member(w, 'owner').pk}/change/", {"role": "viewer"}
    ),
    "removing the last owner": lambda w: as_person(w.owner).post(
        f"/admin/projects/membership/{member(w, 'owner').pk}/delete/", {"post": "yes"}
    ),
    "a repository owner with a space": lambda w: as_person(w.owner).post(
        ADD_BINDING, binding(w, owner="acme corp")
    ),
    "a repository bound twice": lambda w: as_person(w.owner).post(
        ADD_BINDING, binding(w, owner="acme", name="app", url="https://github.com/acme/app")
    ),
    "a token as installation reference": lambda w: as_person(w.owner).post(
        ADD_BINDING, binding(w, installation_ref="ghp_abcdefghijklmnopqrstuvwxyz0123456789")
    ),
    "a write key for a viewer": lambda w: as_person(w.owner).post(
        ADD_KEY, key(w, "victor", ["continuity:write"])
    ),
    "an admin making a key that acts for the owner": lambda w: as_person(w.admin).post(
        ADD_KEY, key(w, "olivia", ["continuity:read"])
    ),
    "a key for someone outside the project": lambda w: as_person(w.owner).post(
        ADD_KEY, key(w, "oscar", ["continuity:read"])
    ),
    "a project slug with capitals": lambda w: as_person(
        make_user("root", is_superuser=True, is_staff=True)
    ).post(
        "/admin/projects/project/add/",
        {"slug": "Gamma_Project", "name": "Gamma", "owner": str(w.owner.pk)},
    ),
}


@pytest.mark.parametrize("case", REFUSALS)
def test_it_words_every_refusal_for_a_person(world: World, case: str):
    make_user("nina")
    projects_before = Project.objects.count()

    said = shown(REFUSALS[case](world))

    assert said, f"{case}: no refusal shown"
    for message in said:
        assert not INTERNAL.search(message), f"{case}: {message!r}"
        assert message[0].isupper(), f"{case}: {message!r} is not a sentence"
        assert message.endswith("."), f"{case}: {message!r} is not a sentence"
    assert Project.objects.count() == projects_before
