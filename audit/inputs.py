from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, StrictInt

from heyaira.validation import Input


class AuditListInput(Input):
    operation: Annotated[str, Field(max_length=64, pattern=r"^[a-z_]+$")] | None = None
    outcome: Literal["success", "replayed", "rejected", "error"] | None = None
    limit: Annotated[StrictInt, Field(ge=1, le=200)] = 50
