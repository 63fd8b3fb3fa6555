"""heyaira-client: the HeyAira client SDK and CLI for agent harnesses.

It imports nothing of the server: it speaks the public MCP contract (the server's docs/tools.md)
through the official `mcp` SDK.
"""

from typing import TYPE_CHECKING, Any

from heyaira_client.errors import (
    CredentialMissing,
    HeyAiraClientError,
    LostResponse,
    NotVerified,
    ProfileError,
    ProfileMismatch,
    SummaryRejected,
    ToolError,
)
from heyaira_client.journal import Journal
from heyaira_client.leases import LeaseBook, keep_lease
from heyaira_client.models import (
    Context,
    Identity,
    MemorySearch,
    Recovery,
    SearchHit,
    TaskDetail,
    TaskUpdate,
    Written,
)
from heyaira_client.profile import Profile, SummarySettings, load_profile, save_profile
from heyaira_client.summary import (
    CommandSummarizer,
    RunningSummary,
    SummaryRequest,
    Turn,
    accept_summary,
)

# The connection (and with it the MCP SDK, most of the package's import time) loads on first use:
# `heyaira` commands and hooks that never connect start without it. Type checkers see the plain
# import, so a misspelt name is still an error to them.
if TYPE_CHECKING:
    from heyaira_client.session import HeyAira, check_identity
else:
    _LAZY = {"HeyAira": "heyaira_client.session", "check_identity": "heyaira_client.session"}

    def __getattr__(name: str) -> Any:
        if name in _LAZY:
            import importlib

            value = getattr(importlib.import_module(_LAZY[name]), name)
            globals()[name] = value
            return value
        raise AttributeError(f"module 'heyaira_client' has no attribute {name!r}")


__all__ = [
    "CommandSummarizer",
    "Context",
    "CredentialMissing",
    "HeyAira",
    "HeyAiraClientError",
    "Identity",
    "Journal",
    "LeaseBook",
    "LostResponse",
    "MemorySearch",
    "NotVerified",
    "Profile",
    "ProfileError",
    "ProfileMismatch",
    "Recovery",
    "RunningSummary",
    "SearchHit",
    "SummaryRejected",
    "SummaryRequest",
    "SummarySettings",
    "TaskDetail",
    "TaskUpdate",
    "ToolError",
    "Turn",
    "Written",
    "accept_summary",
    "check_identity",
    "keep_lease",
    "load_profile",
    "save_profile",
]
