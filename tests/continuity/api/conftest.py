from __future__ import annotations

import pytest

from tests.continuity.api.helpers import Api, api_for
from tests.factories import World


@pytest.fixture
def owner_api(world: World) -> Api:
    return api_for(world, "owner")


@pytest.fixture
def contributor_api(world: World) -> Api:
    return api_for(world, "contributor")


@pytest.fixture
def viewer_api(world: World) -> Api:
    return api_for(world, "viewer", ("continuity:read",))
