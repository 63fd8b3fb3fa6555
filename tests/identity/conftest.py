from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from django.core.cache import cache
from django.test import Client

from tests.factories import World
from tests.identity.cimd_server import (
    CertificateAuthority,
    DocumentServer,
    document_server,
    make_ca,
)


@pytest.fixture(autouse=True)
def _fresh_cache():
    """Rate-limit counters live in the cache: every test starts with none."""
    cache.clear()
    yield
    cache.clear()


def signed_in(user: Any) -> Client:
    client = Client()
    client.force_login(user)
    return client


@pytest.fixture
def owner_browser(world: World) -> Client:
    return signed_in(world.owner)


@pytest.fixture
def api(db: None) -> Client:
    """A client for machine endpoints: no cookies, CSRF checks as in production."""
    return Client(enforce_csrf_checks=True)


@pytest.fixture(scope="session")
def docs_ca(tmp_path_factory: pytest.TempPathFactory) -> CertificateAuthority:
    return make_ca(Path(tmp_path_factory.mktemp("cimd-ca")))


@pytest.fixture
def docs(docs_ca: CertificateAuthority, settings: Any) -> Iterator[DocumentServer]:
    """An HTTPS server for client ID metadata documents, which this server may fetch from: its
    CA is trusted (HEYAIRA_CIMD_CA_BUNDLE), 127.0.0.1 allowed (HEYAIRA_CIMD_PRIVATE_HOSTS)."""
    settings.HEYAIRA_CIMD_CA_BUNDLE = str(docs_ca.bundle)
    settings.HEYAIRA_CIMD_PRIVATE_HOSTS = ["127.0.0.1"]
    with document_server(docs_ca) as server:
        yield server
