"""The pinned operator commands: create_project, add_member, purge_idempotency, quickstart."""

from __future__ import annotations

from datetime import timedelta
from io import StringIO

import pytest
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command
from django.utils import timezone

from audit.models import AuditEvent
from continuity.models import IdempotencyRecord
from projects.models import Membership, Project
from tests.factories import World, make_user


def run(*args: str) -> str:
    out = StringIO()
    call_command(*args, stdout=out)
    return out.getvalue()


@pytest.mark.django_db
class TestCreateProject:
    def test_it_creates_the_project_with_its_owner_and_audits_it(self):
        make_user("ann")
        out = run("create_project", "web-app", "--name", "Web app", "--owner", "ann")
        project = Project.objects.get(slug="web-app")
        assert "Created project web-app" in out
        assert Membership.objects.get(project=project).role == "owner"
        event = AuditEvent.objects.get(operation="project_create")
        assert (event.outcome, event.actor_type, event.project_id) == (
            "success",
            "operator",
            project.pk,
        )

    def test_it_refuses_an_unknown_owner_and_audits_the_rejection(self):
        with pytest.raises(CommandError, match="No user named 'ghost'"):
            run("create_project", "web", "--name", "Web", "--owner", "ghost")
        assert not Project.objects.exists()
        event = AuditEvent.objects.get(operation="project_create")
        assert (event.outcome, event.error_code) == ("rejected", "not_found")

    def test_it_refuses_a_taken_or_malformed_slug(self):
        make_user("ann")
        run("create_project", "web", "--name", "Web", "--owner", "ann")
        with pytest.raises(CommandError, match="slug"):
            run("create_project", "web", "--name", "Again", "--owner", "ann")
        with pytest.raises(CommandError, match="slug"):
            run("create_project", "Bad Slug!", "--name", "Bad", "--owner", "ann")
        assert Project.objects.count() == 1


@pytest.mark.django_db
class TestAddMember:
    def test_it_adds_then_changes_a_role(self, world: World):
        newcomer = make_user("nina")
        assert "Added: nina is viewer of alpha" in run("add_member", "alpha", "nina", "viewer")
        assert "Changed: nina is admin of alpha" in run("add_member", "alpha", "nina", "admin")
        assert Membership.objects.get(project=world.alpha, user=newcomer).role == "admin"

    def test_it_refuses_demoting_the_last_owner(self, world: World):
        with pytest.raises(CommandError, match="at least one owner"):
            run("add_member", "alpha", "olivia", "viewer")
        assert Membership.objects.get(project=world.alpha, user=world.owner).role == "owner"

    def test_it_refuses_unknown_projects_users_and_roles(self, world: World):
        with pytest.raises(CommandError, match="No project"):
            run("add_member", "nope", "olivia", "viewer")
        with pytest.raises(CommandError, match="No user"):
            run("add_member", "alpha", "ghost", "viewer")
        with pytest.raises(CommandError):
            run("add_member", "alpha", "olivia", "emperor")


@pytest.mark.django_db
class TestPurgeIdempotency:
    def _record(self, world: World, key: str, hours_old: int) -> None:
        record = IdempotencyRecord.objects.create(
            project=world.alpha, operation="memory_add", key=key, fingerprint="0" * 64
        )
        IdempotencyRecord.objects.filter(pk=record.pk).update(
            created_at=timezone.now() - timedelta(hours=hours_old)
        )

    def test_it_deletes_only_records_past_the_retention(self, world: World):
        self._record(world, "old", 30)
        self._record(world, "young", 2)
        assert "Deleted 1 idempotency records" in run("purge_idempotency")
        assert list(IdempotencyRecord.objects.values_list("key", flat=True)) == ["young"]

    def test_it_honours_a_longer_age(self, world: World):
        self._record(world, "a-day-and-a-half", 36)
        assert "Deleted 0" in run("purge_idempotency", "--older-than-hours", "48")

    def test_it_refuses_to_purge_keys_younger_than_the_retention(self, world: World):
        with pytest.raises(CommandError, match="at least 24"):
            run("purge_idempotency", "--older-than-hours", "1")


@pytest.mark.django_db
class TestQuickstart:
    def test_it_creates_an_owner_and_a_demo_project_once(self):
        first = run("quickstart")
        assert "password:" in first
        password = first.split("password:")[1].split()[0]
        owner = get_user_model().objects.get(username="owner")
        assert owner.check_password(password)
        # Pasted on a command line, a password starting with "-" would read as an option.
        assert password.isalnum()
        assert len(password) == 20
        assert Membership.objects.get(project__slug="demo", user=owner).role == "owner"
        second = run("quickstart")
        assert "password" not in second
        assert Project.objects.count() == 1
