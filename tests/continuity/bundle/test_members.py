"""Members are matched by username or email; the others are reported and left out, the dry run
first; a project without a matched owner needs --owner."""

from __future__ import annotations

import io

import pytest
from django.contrib.auth import get_user_model
from django.core.management import CommandError, call_command

from projects.models import Membership, Project
from tests.continuity.bundle.conftest import export_bytes, vanish
from tests.factories import World

pytestmark = pytest.mark.django_db


def _run(*args: str) -> str:
    out = io.StringIO()
    call_command("project_import", *args, stdout=out)
    return out.getvalue()


def test_members_are_matched_reported_and_the_dry_run_imports_nothing(
    small: World, tmp_path
) -> None:
    users = get_user_model().objects
    users.filter(username="carla").update(email="carla@example.com")
    path = tmp_path / "alpha.jsonl"
    path.write_bytes(export_bytes("alpha"))
    vanish(small.alpha)
    users.filter(username="victor").delete()  # not a user here: left out
    users.filter(username="carla").update(username="carla2")  # matched by her email
    memberships = Membership.objects.count()
    report = _run(str(path), "--dry-run")
    assert "Would import project alpha" in report
    assert "left out (no such user here): victor <> (viewer)" in report
    assert not Project.objects.filter(slug="alpha").exists()
    assert Membership.objects.count() == memberships
    report = _run(str(path))
    assert "Imported project alpha" in report
    roles = dict(
        Membership.objects.filter(project__slug="alpha").values_list("user__username", "role")
    )
    assert roles == {"olivia": "owner", "adam": "admin", "carla2": "contributor"}


def test_without_a_matched_owner_it_needs_one_named(small: World, tmp_path) -> None:
    path = tmp_path / "alpha.jsonl"
    path.write_bytes(export_bytes("alpha"))
    vanish(small.alpha)
    get_user_model().objects.filter(username="olivia").delete()
    with pytest.raises(CommandError, match="name one with --owner USERNAME"):
        _run(str(path))
    assert not Project.objects.filter(slug="alpha").exists()
    _run(str(path), "--owner", "oscar", "--slug", "alpha-moved")
    owners = Membership.objects.filter(project__slug="alpha-moved", role="owner")
    assert list(owners.values_list("user__username", flat=True)) == ["oscar"]
