"""What the forkserver of tests/forked.py imports once, before it forks any live server or shell.

Only libraries that read no setting, open nothing and start no thread when imported: the forks
take their environment afterwards, and Django reads its settings (and the project its
environment) only at django.setup(), in the fork. Nothing of the project is imported here.
"""

import anyio  # noqa: F401
import cryptography.hazmat.primitives.hashes  # noqa: F401
import django.core.handlers.asgi
import django.core.management
import django.db.models  # noqa: F401
import httpx2  # noqa: F401
import mcp
import mcp.server.streamable_http_manager  # noqa: F401
import mcp_types  # noqa: F401
import oauthlib.oauth2  # noqa: F401
import psycopg  # noqa: F401
import psycopg_pool  # noqa: F401
import pydantic  # noqa: F401
import starlette.applications  # noqa: F401
import uvicorn.main  # noqa: F401
