"""The `world` fixture (tests/factories.py's two projects and five people), built once per module
where that is safe and once per test elsewhere.

Building it costs about 150 statements. A module shares one build when every test in it that
touches the database uses `world` inside the usual per-test transaction: the build is committed to
nothing, it sits in a class-level transaction (Django's TestCase.setUpTestData, the mechanism
Django's own test runner uses), and each test's savepoint rolls back to it. Each test gets its own
deep copy of the objects, so changing one in a test changes nothing in the next. A module with a
test that commits (transactional_db, live_server, django_db(transaction=True)) or that uses the
database without `world` builds it per test: its tests must see exactly the rows they expect."""

from __future__ import annotations

import copy
from collections.abc import Iterator

import pytest
from django.test import TestCase, override_settings
from pytest_django import DjangoDbBlocker

from tests.factories import FAST_PASSWORD_HASHERS, World, build_world

SHARED_WORLD_MODULES = pytest.StashKey[frozenset[str]]()

# Fixtures through which a test reaches the database (pytest-django's names).
_DATABASE_FIXTURES = frozenset(
    {"db", "transactional_db", "live_server", "django_db_reset_sequences", "_django_db_helper"}
)
_COMMITTING_FIXTURES = frozenset({"transactional_db", "live_server", "django_db_reset_sequences"})


class _ModuleWorld(TestCase):
    """Holds one module's world in a class-level transaction, rolled back when the module ends."""

    world: World

    @classmethod
    def setUpTestData(cls) -> None:
        with override_settings(PASSWORD_HASHERS=FAST_PASSWORD_HASHERS):
            cls.world = build_world()


def _shares_the_world(item: pytest.Item) -> bool | None:
    """True: uses `world` in a rolled-back transaction; None: touches no database; False: else."""
    names = set(getattr(item, "fixturenames", ()))
    marker = item.get_closest_marker("django_db")
    if marker is None and not names & _DATABASE_FIXTURES:
        return None
    if names & _COMMITTING_FIXTURES or "world" not in names:
        return False
    # A django_db marker with arguments (transaction=True, other databases, reset sequences)
    # has rules of its own.
    return marker is None or not (marker.args or marker.kwargs)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Decided once per collection: the modules whose tests may share one world."""
    verdicts: dict[str, list[bool | None]] = {}
    for item in items:
        verdicts.setdefault(item.nodeid.split("::")[0], []).append(_shares_the_world(item))
    config.stash[SHARED_WORLD_MODULES] = frozenset(
        module
        for module, found in verdicts.items()
        if True in found and False not in found  # at least one user, and no one it would disturb
    )


@pytest.fixture(scope="module")
def module_world(
    request: pytest.FixtureRequest, django_db_setup: None, django_db_blocker: DjangoDbBlocker
) -> Iterator[World | None]:
    """The module's shared world, or None where its tests build their own."""
    module = request.node.nodeid.split("::")[0]
    if module not in request.config.stash.get(SHARED_WORLD_MODULES, frozenset()):
        yield None
        return
    with django_db_blocker.unblock():
        _ModuleWorld.setUpClass()
    try:
        yield _ModuleWorld.world
    finally:
        with django_db_blocker.unblock():
            _ModuleWorld.tearDownClass()
            _ModuleWorld.doClassCleanups()


@pytest.fixture
def world(module_world: World | None, db: None) -> World:
    if module_world is None:
        return build_world()
    return copy.deepcopy(module_world)
