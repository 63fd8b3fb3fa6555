"""Request ids: the client's X-Request-ID when it is sane, a fresh one otherwise.

Both the Django middleware (heyaira.middleware) and the MCP endpoint take theirs from here.
"""

from __future__ import annotations

import re
import uuid

REQUEST_ID_HEADER = "X-Request-ID"
_SANE_REQUEST_ID = re.compile(r"^[A-Za-z0-9._:-]{1,64}$")


def request_id_from(header_value: str | None) -> str:
    if header_value and _SANE_REQUEST_ID.match(header_value):
        return header_value
    return uuid.uuid4().hex
